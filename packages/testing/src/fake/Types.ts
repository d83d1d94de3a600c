import type { BotApi } from "@botrelay/telegram"
import type { Duration } from "effect"

/** Settings of a fake server. */
export interface Options {
  /** The clock behind `date` fields, in Unix seconds. Defaults to the wall clock. */
  readonly now?: () => number
  /** The wait before a failed webhook delivery is tried again. Defaults to 100 ms. */
  readonly webhookRetryDelay?: Duration.DurationInput
  /** How long a webhook POST may take before it counts as failed. Defaults to 10 seconds. */
  readonly webhookTimeout?: Duration.DurationInput
}

/** A bot the fake knows. Its token is `<id>:<35 characters of [A-Za-z0-9_-]>`, like a real one. */
export interface FakeBot {
  readonly id: number
  readonly token: string
  readonly username: string
  readonly first_name: string
}

/** An error a matching call answers with; the HTTP status is `error_code`. */
export interface InjectedError {
  readonly error_code: number
  readonly description: string
  readonly retry_after?: number
  readonly migrate_to_chat_id?: number
}

/** One Bot API call: a request to `/bot<token>/<method>`, or a webhook reply. Holds the bot id, never the token. */
export interface CallRecord {
  /** The bot the token belongs to; undefined for unknown tokens. */
  readonly botId: number | undefined
  /** The method's canonical name when known (`sendMessage` for `SENDMESSAGE`), else as requested. */
  readonly method: string
  /** The parameters; a multipart file part shows as `{ file_name, mime_type, file_size, sha256 }`, never its bytes. */
  readonly params: Readonly<Record<string, unknown>>
  /** The HTTP status answered (for a webhook reply: the status it would have had). */
  readonly status: number
  /** Present when the call came as the body of a webhook response. */
  readonly webhookReply?: true
  /** When the request arrived, in milliseconds since the epoch (answers to long polls come later). */
  readonly receivedAt: number
  /** The request's `User-Agent` header, when it had one (never for a webhook reply). */
  readonly userAgent?: string
}

/** A message a bot sent through the fake: `sendMessage`, `forwardMessage`, `copyMessage`, a media send or an album. */
export interface SentMessage {
  readonly botId: number
  readonly method: string
  readonly message: BotApi.Message
  /** The file uploaded for this message's media, when it came as a multipart part. */
  readonly upload?: UploadedFile
}

/** A file a bot uploaded in a multipart request; `fileBytes(file_id)` gives its bytes back. */
export interface UploadedFile {
  readonly botId: number
  readonly method: string
  /** The multipart part that carried it: the media parameter's name, or the name behind `attach://`. */
  readonly field: string
  readonly file_id: string
  readonly file_unique_id: string
  /** The part's `filename`. */
  readonly file_name: string
  /** The part's Content-Type; `application/octet-stream` when it had none. */
  readonly mime_type: string
  readonly file_size: number
  /** The SHA-256 of the bytes, in hex. */
  readonly sha256: string
}

/** What a user sends with `userSends`. */
export interface UserMessage {
  /** Defaults to the private chat's user, else a default test user. */
  readonly user?: BotApi.User
  /** A group, supergroup, or a user's private chat (by object or id). Defaults to the user's private chat. */
  readonly chat?: BotApi.Chat | number
  readonly text?: string
  /**
   * A photo in three sizes, each a file that `getFile` and the download route know; or, given as JPEG
   * bytes and their dimensions, a photo of one size whose file serves exactly those bytes.
   */
  readonly photo?: boolean | UserPhoto
  /**
   * A document `getFile` and the download route know; `file_size` (default 30,000) is declared, its
   * bytes made only when downloaded, so a file over getFile's 20 MB limit costs nothing.
   */
  readonly document?: { readonly file_name?: string; readonly mime_type?: string; readonly file_size?: number }
  readonly caption?: string
  /** The text's or caption's formatting; commands in a text are marked when omitted. */
  readonly entities?: ReadonlyArray<BotApi.MessageEntity>
  /** A message of that chat, as the bot sees it. */
  readonly reply_to_message_id?: number
}

/** A photo a user sends as it is: JPEG bytes and their dimensions. */
export interface UserPhoto {
  readonly bytes: Uint8Array
  readonly width: number
  readonly height: number
}
