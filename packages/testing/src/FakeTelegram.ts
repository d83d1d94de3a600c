import { BotApi } from "@botrelay/telegram"
import type { Cause, Scope } from "effect"
import { Duration, Effect } from "effect"
import { createHash, randomBytes, randomInt } from "node:crypto"
import * as Http from "node:http"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"

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
  /** A photo in three sizes, each a file that `getFile` and the download route know. */
  readonly photo?: boolean
  readonly caption?: string
  /** The text's or caption's formatting; commands in a text are marked when omitted. */
  readonly entities?: ReadonlyArray<BotApi.MessageEntity>
  /** A message of that chat, as the bot sees it. */
  readonly reply_to_message_id?: number
}

/** A running Bot API emulator on 127.0.0.1. */
export interface FakeTelegram {
  /** Where clients point, e.g. `http://127.0.0.1:45678` (no trailing slash). */
  readonly apiRoot: string
  readonly addBot: (options?: { readonly username?: string; readonly first_name?: string }) => FakeBot
  /**
   * A user; the private chat with them (id = user id) exists from now on. Bots may write to it once
   * the user has messaged them; `startedBots` omitted means every bot counts as messaged.
   */
  readonly addUser: (options?: {
    readonly first_name?: string
    readonly last_name?: string
    readonly username?: string
    readonly language_code?: string
    readonly startedBots?: ReadonlyArray<number>
  }) => BotApi.User
  /**
   * A group (default), supergroup or channel; `username` makes it addressable as `@username`.
   * Only `members` see it; omitted, every bot, present or future, is a member.
   */
  readonly addGroup: (options?: {
    readonly type?: "group" | "supergroup" | "channel"
    readonly title?: string
    readonly username?: string
    readonly members?: ReadonlyArray<number>
  }) => BotApi.Chat
  /** Makes a bot a member of a group or channel. */
  readonly addToGroup: (chatId: number, botId: number) => void
  /** Replaces a bot's token, as BotFather's /revoke does: the old one gets 401 from now on. */
  readonly revoke: (botId: number) => FakeBot
  /** The next call of `method` (any case; any bot unless `botId` is given) fails with `error`, once. */
  readonly failNext: (method: string, error: InjectedError, options?: { readonly botId?: number }) => void
  /** Every call of `method` (any bot unless `botId` is given) fails with `error` until `clearFailures`. */
  readonly failAlways: (method: string, error: InjectedError, options?: { readonly botId?: number }) => void
  /** Drops every injected failure, one-shot or not. */
  readonly clearFailures: () => void
  /** A user writes to a bot; the `message` update goes to that bot, or to every bot in the group. */
  readonly userSends: (botId: number, message: UserMessage) => BotApi.Message
  /** A user edits their message; an `edited_message` update goes to the bot (every bot in a group). */
  readonly userEdits: (botId: number, chatId: number, messageId: number, text: string) => BotApi.Message
  /**
   * A post in a channel; a `channel_post` update goes to every bot in it. Posts bots send to a channel
   * reach its other bots the same way.
   */
  readonly channelPost: (botId: number, chatId: number, text: string) => BotApi.Message
  /** A user presses an inline button of `message`; a `callback_query` update goes to the bot. */
  readonly userPresses: (
    botId: number,
    message: BotApi.Message,
    data: string,
    options?: { readonly user?: BotApi.User }
  ) => BotApi.CallbackQuery
  /**
   * Queues any update (without `update_id`) for a bot. Undefined when the bot's `allowed_updates`
   * exclude its kind.
   */
  readonly enqueue: (botId: number, update: Readonly<Record<string, unknown>>) => BotApi.Update | undefined
  /** Updates not yet confirmed by `getUpdates` or delivered to the webhook, oldest first. */
  readonly pendingUpdates: (botId: number) => ReadonlyArray<BotApi.Update>
  /** Updates confirmed by an `offset` or a 2xx webhook answer, oldest first. Dropped ones are in neither list. */
  readonly updatesConfirmed: (botId: number) => ReadonlyArray<BotApi.Update>
  /** The bytes served for a file (an upload's exactly as received), or undefined for an unknown `file_id`. */
  readonly fileBytes: (fileId: string) => Uint8Array | undefined
  /** Files uploaded so far, oldest first, optionally of one bot. */
  readonly uploads: (botId?: number) => ReadonlyArray<UploadedFile>
  /** Every call so far, oldest first, logged when answered. */
  readonly calls: ReadonlyArray<CallRecord>
  /** The first call, past or future, matching `predicate`; rejects after `timeout` (default 5 s). */
  readonly waitForCall: (
    predicate: (call: CallRecord) => boolean,
    timeout?: Duration.DurationInput
  ) => Promise<CallRecord>
  /** Resolves once a `getUpdates` of the bot is held open (now or later); rejects after `timeout` (default 5 s). */
  readonly waitForPoll: (botId: number, timeout?: Duration.DurationInput) => Promise<void>
  /** Messages sent so far, oldest first, optionally of one bot. */
  readonly sent: (botId?: number) => ReadonlyArray<SentMessage>
  /** Calls `listener` for each message sent from now on; returns the unsubscribe function. */
  readonly onSent: (listener: (sent: SentMessage) => void) => () => void
  /** The first sent message, past or future, matching `predicate`; rejects after `timeout` (default 5 s). */
  readonly waitForSent: (
    predicate: (sent: SentMessage) => boolean,
    timeout?: Duration.DurationInput
  ) => Promise<SentMessage>
  /** Stops the server: ends held polls and webhook deliveries and drops open connections. */
  readonly close: () => Promise<void>
}

interface Failure {
  readonly error_code: number
  readonly description: string
  readonly parameters?: { readonly retry_after?: number; readonly migrate_to_chat_id?: number }
}

type Answer = { readonly ok: true; readonly result: unknown; readonly description?: string } | Failure

type Params = Readonly<Record<string, unknown>>

type Json = Record<string, unknown>

interface Poll {
  readonly limit: number
  readonly finish: (answer: Answer) => void
}

interface Webhook {
  readonly url: string
  readonly secret: string | undefined
  readonly maxConnections: number
}

interface Bot {
  readonly id: number
  token: string
  readonly username: string
  readonly first_name: string
  readonly user: BotApi.User
  nextUpdateId: number
  queue: Array<BotApi.Update>
  readonly confirmed: Array<BotApi.Update>
  allowed: ReadonlyArray<string>
  poll: Poll | undefined
  webhook: Webhook | undefined
  lastError: { readonly date: number; readonly message: string } | undefined
  delivery: Promise<void> | undefined
}

interface Person {
  readonly user: BotApi.User
  readonly started: Set<number> | "all"
}

interface Group {
  readonly chat: BotApi.Chat
  readonly members: Set<number> | "all"
}

interface History {
  nextId: number
  readonly messages: Map<number, BotApi.Message>
  /** The bot that sent each message, by message id. */
  readonly authors: Map<number, number>
}

type MediaKind = "photo" | "document" | "video" | "audio" | "voice" | "animation" | "sticker" | "video_note"

/** How Telegram names and types the files of one kind of media. */
interface KindInfo {
  readonly idPrefix: string
  readonly folder: string
  readonly extension: string
  readonly mime: string
  readonly caption: boolean
}

const kinds: Readonly<Record<MediaKind, KindInfo>> = {
  photo: { idPrefix: "AgACAgIAAxkBAAI", folder: "photos", extension: "jpg", mime: "image/jpeg", caption: true },
  document: {
    idPrefix: "BQACAgIAAxkBAAI",
    folder: "documents",
    extension: "",
    mime: "application/octet-stream",
    caption: true
  },
  video: { idPrefix: "BAACAgIAAxkBAAI", folder: "videos", extension: "mp4", mime: "video/mp4", caption: true },
  audio: { idPrefix: "CQACAgIAAxkBAAI", folder: "music", extension: "mp3", mime: "audio/mpeg", caption: true },
  voice: { idPrefix: "AwACAgIAAxkBAAI", folder: "voice", extension: "oga", mime: "audio/ogg", caption: true },
  animation: { idPrefix: "CgACAgIAAxkBAAI", folder: "animations", extension: "mp4", mime: "video/mp4", caption: true },
  sticker: { idPrefix: "CAACAgIAAxkBAAI", folder: "stickers", extension: "webp", mime: "image/webp", caption: false },
  video_note: {
    idPrefix: "DQACAgIAAxkBAAI",
    folder: "video_notes",
    extension: "mp4",
    mime: "video/mp4",
    caption: false
  }
}

const mimeByExtension: Readonly<Record<string, string>> = {
  jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp", pdf: "application/pdf",
  txt: "text/plain", csv: "text/csv", json: "application/json", zip: "application/zip", mp4: "video/mp4",
  webm: "video/webm", mp3: "audio/mpeg", m4a: "audio/mp4", ogg: "audio/ogg", oga: "audio/ogg",
  tgs: "application/x-tgsticker"
}

interface StoredFile {
  readonly file_id: string
  readonly file_unique_id: string
  readonly file_size: number
  readonly file_path: string
  readonly mime_type: string
  readonly kind: MediaKind
  readonly seed: number
  /** The bytes of an upload; generated files have none and are made from `seed`. */
  readonly bytes: Buffer | undefined
}

/** A file part of a multipart body, its bytes as they came. */
interface FilePart {
  readonly file_name: string
  readonly mime_type: string
  readonly bytes: Buffer
  readonly sha256: string
}

interface Context {
  readonly signal: AbortSignal | undefined
  /** The file parts of a multipart request, by part name. */
  readonly files: ReadonlyMap<string, FilePart>
}

/** One checked InputMedia of an album. */
interface AlbumItem {
  readonly kind: MediaKind
  readonly source: MediaSource
  readonly caption: Json
  readonly options: Json
}

/** A message a bot may edit, and where it is kept. */
interface EditTarget {
  readonly chatHistory: History
  readonly id: number
  readonly current: BotApi.Message
}

/** Where a send's media comes from. */
type MediaSource =
  | { readonly _tag: "Upload"; readonly field: string; readonly part: FilePart }
  | { readonly _tag: "Url"; readonly url: URL }
  | { readonly _tag: "Stored"; readonly file: StoredFile }

type Handler = (bot: Bot, params: Params, context: Context) => Answer | Promise<Answer>

const failure = (error_code: number, description: string): Failure => ({ error_code, description })
const badRequest = (description: string) => failure(400, `Bad Request: ${description}`)
const notFound = failure(404, "Not Found")
const unauthorized = failure(401, "Unauthorized")
const ok = (result: unknown, description?: string): Answer =>
  description === undefined ? { ok: true, result } : { ok: true, result, description }
const isFailure = (value: unknown): value is Failure =>
  typeof value === "object" && value !== null && "error_code" in value && "description" in value

const terminated = failure(
  409,
  "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
)
const webhookActive = failure(
  409,
  "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
)
const queryTooOld = badRequest("query is too old and response timeout expired or query ID is invalid")
const notModified = badRequest(
  "message is not modified: specified new message content and reply markup are exactly the same as a " +
    "current content and reply markup of the message"
)

const tokenPattern = /^(\d+):[A-Za-z0-9_-]+$/
const secretPattern = /^[A-Za-z0-9_-]{1,256}$/
const chatActions = new Set([
  "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document",
  "choose_sticker", "find_location", "record_video_note", "upload_video_note"
])

/** Fields of a message that are about its place and history, not its content. */
const metaFields = new Set([
  "message_id", "message_thread_id", "business_connection_id", "from", "sender_chat", "sender_boost_count",
  "sender_business_bot", "chat", "date", "edit_date", "forward_origin", "forward_from", "forward_from_chat",
  "forward_from_message_id", "forward_signature", "forward_sender_name", "forward_date", "is_automatic_forward",
  "is_topic_message", "reply_to_message", "external_reply", "quote", "reply_to_story", "via_bot", "author_signature",
  "has_protected_content", "reply_markup"
])

const asInt = (value: unknown): number | undefined => {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : undefined
  if (typeof value === "string" && /^\s*-?\d+\s*$/.test(value)) {
    const n = Number(value)
    return Number.isSafeInteger(n) ? n : undefined
  }
  return undefined
}

const asBool = (value: unknown): boolean => value === true || value === "true" || value === "True" || value === "1"

const parseJson = (value: unknown): unknown => {
  if (typeof value !== "string") return value
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

const asObject = (value: unknown): Json | undefined => {
  const parsed = parseJson(value)
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : undefined
}

const asArray = (value: unknown): ReadonlyArray<unknown> | undefined => {
  const parsed = parseJson(value)
  return Array.isArray(parsed) ? parsed : undefined
}

const asText = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : ""

const isEmpty = (value: unknown) => value === undefined || value === null || value === ""

const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value))

const withoutReply = (message: BotApi.Message): BotApi.Message => {
  const { reply_to_message: _, ...rest } = message
  return rest
}

const contentOf = (message: BotApi.Message): Json =>
  Object.fromEntries(Object.entries(message).filter(([key]) => !metaFields.has(key)))

/** The inline keyboard of a `reply_markup` parameter, as a sent message carries it. */
const inlineKeyboard = (value: unknown): Json => {
  const keyboard = asObject(value)?.["inline_keyboard"]
  return Array.isArray(keyboard) ? { reply_markup: { inline_keyboard: keyboard } } : {}
}

const badParseMode = (value: unknown) =>
  !isEmpty(value) && !["HTML", "MarkdownV2", "Markdown"].includes(asText(value))

/** The `caption` and `caption_entities` of a send, an album item or an edit. */
const captionOf = (options: Params): Json | Failure => {
  if (badParseMode(options["parse_mode"])) return badRequest("unsupported parse_mode")
  const caption = asText(options["caption"])
  if (caption.length > 1024) return badRequest("message caption is too long")
  if (caption.trim() === "") return {}
  const entities = asArray(options["caption_entities"])
  return { caption, ...(entities === undefined || entities.length === 0 ? {} : { caption_entities: entities }) }
}

/** The media sends, by method name, and the parameter that holds their media. */
const mediaMethods: Readonly<Record<string, MediaKind>> = {
  sendPhoto: "photo",
  sendDocument: "document",
  sendVideo: "video",
  sendAudio: "audio",
  sendVoice: "voice",
  sendAnimation: "animation",
  sendSticker: "sticker",
  sendVideoNote: "video_note"
}

const captionKinds = (Object.keys(kinds) as ReadonlyArray<MediaKind>).filter((kind) => kinds[kind].caption)

const extensionOf = (name: string) => /\.([A-Za-z0-9]{1,8})$/.exec(name)?.[1]?.toLowerCase() ?? ""

/** The MIME type and path extension Telegram gives a new file of `kind` named `name`, sent as `sentType`. */
const fileTypeFor = (
  kind: MediaKind,
  name: string,
  sentType: string | undefined
): { readonly mime: string; readonly extension: string } => {
  const info = kinds[kind]
  if (kind !== "document" && kind !== "audio" && kind !== "sticker") return info
  const extension = extensionOf(name)
  const sent = sentType === "application/octet-stream" || sentType === "" ? undefined : sentType
  return {
    mime: sent ?? mimeByExtension[extension] ?? info.mime,
    extension: extension === "" ? info.extension : extension
  }
}

/** The file name Telegram takes from a URL: its last path segment, else one made from the kind. */
const urlFileName = (url: URL, kind: MediaKind): string => {
  const last = url.pathname.split("/").at(-1) ?? ""
  try {
    if (last !== "") return decodeURIComponent(last)
  } catch {
    return last
  }
  return `${kind}.${kinds[kind].extension === "" ? "dat" : kinds[kind].extension}`
}

/** Telegram's refusal of an album that mixes documents or audio with other kinds. */
const albumMixFailure = (itemKinds: ReadonlyArray<MediaKind>): Failure | undefined => {
  const alone = (["document", "audio"] as const).find((kind) =>
    itemKinds.includes(kind) && itemKinds.some((other) => other !== kind)
  )
  return alone === undefined ? undefined : badRequest(`${alone} can't be mixed with other media types`)
}

const commandEntities = (text: string): Json => {
  const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text)
  return command === null ? {} : { entities: [{ offset: 0, length: command[0].length, type: "bot_command" }] }
}

const makeToken = (id: number) => `${id}:AA${randomBytes(32).toString("base64url").slice(0, 33)}`

const millis = (duration: Duration.DurationInput) => Duration.toMillis(Duration.decode(duration))

const readBody = (stream: NodeJS.ReadableStream): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    stream.on("data", (chunk: Buffer) => chunks.push(chunk))
    stream.on("end", () => resolve(Buffer.concat(chunks)))
    stream.on("error", reject)
  })

const noFiles: ReadonlyMap<string, FilePart> = new Map()

type ParsedParams =
  | { readonly _tag: "Params"; readonly params: Params; readonly files: ReadonlyMap<string, FilePart> }
  | { readonly _tag: "Failure"; readonly failure: Failure }

/** One part of a multipart body; `filename` present makes it a file, as Telegram decides. */
interface Part {
  readonly name: string
  readonly filename: string | undefined
  readonly contentType: string | undefined
  readonly body: Buffer
}

/** The `boundary` parameter of a multipart Content-Type. */
const boundaryOf = (header: string): string | undefined => {
  const match = /;\s*boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(header)
  return match?.[1] ?? match?.[2]
}

/** The `key=value` parameters of a header value such as `form-data; name="a"; filename=b.jpg`, keys lowercased. */
const headerParams = (value: string): ReadonlyMap<string, string> => {
  const params = new Map<string, string>()
  for (const match of value.matchAll(/;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g)) {
    params.set(match[1]!.toLowerCase(), match[2] ?? match[3]!.trim())
  }
  return params
}

/** A part's headers (`Name: value` lines, any case, spaces optional), names lowercased. */
const partHeaders = (text: string): ReadonlyMap<string, string> => {
  const headers = new Map<string, string>()
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":")
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return headers
}

/**
 * The parts of a multipart body, or undefined when it is malformed. Only headers are decoded; a part's
 * body is a view of the request's bytes.
 */
const multipartParts = (body: Buffer, boundary: string): ReadonlyArray<Part> | undefined => {
  const delimiter = Buffer.from(`\r\n--${boundary}`)
  const first = body.indexOf(delimiter.subarray(2))
  if (first < 0) return undefined
  const parts: Array<Part> = []
  let position = first + delimiter.length - 2
  while (!(body[position] === 0x2d && body[position + 1] === 0x2d)) {
    const lineEnd = body.indexOf("\r\n", position)
    const headersEnd = lineEnd < 0 ? -1 : body.indexOf("\r\n\r\n", lineEnd)
    const end = headersEnd < 0 ? -1 : body.indexOf(delimiter, headersEnd + 4)
    if (end < 0) return undefined
    const headers = partHeaders(body.toString("utf8", lineEnd + 2, Math.max(lineEnd + 2, headersEnd)))
    const disposition = headerParams(headers.get("content-disposition") ?? "")
    const name = disposition.get("name")
    if (name === undefined || name === "") return undefined
    parts.push({
      name,
      filename: disposition.get("filename"),
      contentType: headers.get("content-type"),
      body: body.subarray(headersEnd + 4, end)
    })
    position = end + delimiter.length
  }
  return parts
}

/** How a file part shows in `params` and the call log. */
const partSummary = (part: FilePart): Json => ({
  file_name: part.file_name,
  mime_type: part.mime_type,
  file_size: part.bytes.length,
  sha256: part.sha256
})

/** A multipart body's fields as strings and its file parts as bytes. */
const parseMultipart = (body: Buffer, header: string, params: Record<string, unknown>): ParsedParams => {
  const boundary = boundaryOf(header)
  const parts = boundary === undefined ? undefined : multipartParts(body, boundary)
  if (parts === undefined) return { _tag: "Failure", failure: badRequest("can't parse multipart/form-data") }
  const files = new Map<string, FilePart>()
  for (const part of parts) {
    if (part.filename === undefined) {
      params[part.name] = part.body.toString("utf8")
      continue
    }
    const file: FilePart = {
      file_name: part.filename,
      mime_type: part.contentType ?? "application/octet-stream",
      bytes: part.body,
      sha256: createHash("sha256").update(part.body).digest("hex")
    }
    files.set(part.name, file)
    params[part.name] = partSummary(file)
  }
  return { _tag: "Params", params, files }
}

const parseBody = (body: Buffer, header: string, initial: Record<string, unknown> = {}): ParsedParams => {
  const params = initial
  const done = (params: Params): ParsedParams => ({ _tag: "Params", params, files: noFiles })
  if (body.length === 0) return done(params)
  const contentType = header.toLowerCase()
  if (contentType.startsWith("application/json")) {
    const parsed = asObject(body.toString("utf8"))
    return parsed === undefined
      ? { _tag: "Failure", failure: badRequest("can't parse JSON object") }
      : done({ ...params, ...parsed })
  }
  if (contentType.startsWith("application/x-www-form-urlencoded")) {
    return done({ ...params, ...Object.fromEntries(new URLSearchParams(body.toString("utf8"))) })
  }
  if (contentType.startsWith("multipart/form-data")) return parseMultipart(body, header, params)
  return done(params)
}

const describeConnectionError = (error: unknown): string => {
  const code = (error as { readonly code?: unknown } | undefined)?.code
  switch (code) {
    case "ECONNREFUSED":
      return "Connection refused"
    case "ETIMEDOUT":
      return "Read timeout expired"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "Failed to resolve host: Name or service not known"
    default:
      return "Connection reset by peer"
  }
}

/** The fields every file object of a message has. */
const fileFields = (file: StoredFile) => ({
  file_id: file.file_id,
  file_unique_id: file.file_unique_id,
  file_size: file.file_size
})

const fileContent = (file: StoredFile): Buffer => {
  if (file.bytes !== undefined) return file.bytes
  const bytes = Buffer.alloc(file.file_size)
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + file.seed * 7 + (i >>> 8)) & 0xff
  if (file.mime_type === "image/jpeg") bytes.set([0xff, 0xd8, 0xff].slice(0, bytes.length))
  return bytes
}

/** Waits for the first item, past or future, matching `predicate`. */
const waitFor = <T>(
  past: ReadonlyArray<T>,
  listeners: Set<(item: T) => void>,
  closers: Set<() => void>,
  predicate: (item: T) => boolean,
  timeout: Duration.DurationInput,
  what: string,
  timedOut: (ms: number) => string
): Promise<T> => {
  const found = past.find(predicate)
  if (found !== undefined) return Promise.resolve(found)
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer)
      listeners.delete(listener)
      closers.delete(onClose)
    }
    const listener = (item: T) => {
      if (!predicate(item)) return
      done()
      resolve(item)
    }
    const onClose = () => {
      done()
      reject(new Error(`FakeTelegram closed while waiting for ${what}`))
    }
    const ms = millis(timeout)
    const timer = setTimeout(() => {
      done()
      reject(new Error(timedOut(ms)))
    }, ms)
    listeners.add(listener)
    closers.add(onClose)
  })
}

/** Starts a fake on 127.0.0.1 port 0, for callers outside Effect. Close it with `close()`. */
export const start = async (options: Options = {}): Promise<FakeTelegram> => {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000))
  const retryDelay = millis(options.webhookRetryDelay ?? 100)
  const webhookTimeout = millis(options.webhookTimeout ?? "10 seconds")
  const botsByToken = new Map<string, Bot>()
  const botsById = new Map<number, Bot>()
  const people = new Map<number, Person>()
  const groups = new Map<number, Group>()
  const groupsByUsername = new Map<string, number>()
  const histories = new Map<string, History>()
  const files = new Map<string, StoredFile>()
  const filesByPath = new Map<string, StoredFile>()
  /** The message field each file appeared in (a PhotoSize array for photos), to send it again by `file_id`. */
  const mediaOf = new Map<string, unknown>()
  const uploadLog: Array<UploadedFile> = []
  const callbacks = new Map<string, { readonly botId: number; answered: boolean }>()
  type Injected = { readonly method: string; readonly botId: number | undefined; readonly error: InjectedError }
  const oneShot: Array<Injected> = []
  const always: Array<Injected> = []
  const callLog: Array<CallRecord> = []
  const sentLog: Array<SentMessage> = []
  const sentListeners = new Set<(sent: SentMessage) => void>()
  const callListeners = new Set<(call: CallRecord) => void>()
  const pollListeners = new Set<(botId: number) => void>()
  const closers = new Set<() => void>()
  const heldPolls = new Set<Poll>()
  const inFlight = new Set<() => void>()
  const sleepers = new Set<() => void>()
  let closed = false
  let nextBot = 1
  let nextUser = 1
  let nextGroup = 1
  let nextFile = 1
  let nextQuery = 1
  let nextAlbum = 1
  let defaultUser: BotApi.User | undefined
  const queryPrefix = String(randomInt(100_000, 999_999))

  const botOf = (botId: number): Bot => {
    const bot = botsById.get(botId)
    if (bot === undefined) throw new Error(`FakeTelegram: no bot ${botId}`)
    return bot
  }

  const privateChat = (user: BotApi.User): BotApi.Chat => ({
    id: user.id,
    first_name: user.first_name,
    ...(user.last_name === undefined ? {} : { last_name: user.last_name }),
    ...(user.username === undefined ? {} : { username: user.username }),
    type: "private"
  })

  const isMember = (group: Group, bot: Bot) => group.members === "all" || group.members.has(bot.id)
  const hasStarted = (person: Person, bot: Bot) => person.started === "all" || person.started.has(bot.id)

  /** The chat as `bot` may use it; `source` chats that it cannot see are "not found" rather than forbidden. */
  const chatFor = (bot: Bot, value: unknown, use: "write" | "read"): BotApi.Chat | Failure => {
    if (isEmpty(value)) return badRequest("chat_id is empty")
    const chatNotFound = badRequest("chat not found")
    if (typeof value === "string" && value.startsWith("@")) {
      const group = groups.get(groupsByUsername.get(value.slice(1).toLowerCase()) ?? 0)
      return group === undefined || !isMember(group, bot) ? chatNotFound : group.chat
    }
    const id = asInt(value)
    if (id === undefined) return chatNotFound
    const person = people.get(id)
    if (person !== undefined) {
      if (hasStarted(person, bot)) return privateChat(person.user)
      return use === "write" ? failure(403, "Forbidden: bot can't initiate conversation with a user") : chatNotFound
    }
    const group = groups.get(id)
    if (group !== undefined) return isMember(group, bot) ? group.chat : chatNotFound
    return botsById.has(id) ? failure(403, "Forbidden: bot can't send messages to bots") : chatNotFound
  }

  const history = (bot: Bot, chat: BotApi.Chat): History => {
    const key = chat.type === "private" ? `${bot.id}/${chat.id}` : `${chat.id}`
    let found = histories.get(key)
    if (found === undefined) {
      found = { nextId: 1, messages: new Map(), authors: new Map() }
      histories.set(key, found)
    }
    return found
  }

  const record = (bot: Bot, method: string, message: BotApi.Message, upload: UploadedFile | undefined) => {
    const sent: SentMessage = { botId: bot.id, method, message, ...(upload === undefined ? {} : { upload }) }
    sentLog.push(sent)
    for (const listener of [...sentListeners]) listener(sent)
  }

  /** A new message by `bot` in `chat`, stored and recorded as sent. */
  const post = (
    bot: Bot,
    chat: BotApi.Chat,
    content: Json,
    method: string,
    upload?: UploadedFile
  ): BotApi.Message => {
    const chatHistory = history(bot, chat)
    const message = {
      message_id: chatHistory.nextId++,
      ...(chat.type === "channel" ? { sender_chat: chat } : { from: bot.user }),
      chat,
      date: now(),
      ...content
    } as BotApi.Message
    chatHistory.messages.set(message.message_id, message)
    chatHistory.authors.set(message.message_id, bot.id)
    record(bot, method, message, upload)
    if (chat.type === "channel") {
      for (const member of audience(bot, chat)) if (member !== bot) pushUpdate(member, { channel_post: message })
    }
    return message
  }

  /** The message a send replies to, from `reply_parameters` or the legacy `reply_to_message_id`. */
  const replyTo = (bot: Bot, chat: BotApi.Chat, params: Params): Json | Failure => {
    const replyParameters = asObject(params["reply_parameters"])
    const id = asInt(replyParameters?.["message_id"] ?? params["reply_to_message_id"])
    if (id === undefined) return {}
    const replied = history(bot, chat).messages.get(id)
    if (replied !== undefined) return { reply_to_message: withoutReply(replied) }
    const allowWithoutReply = asBool(
      replyParameters?.["allow_sending_without_reply"] ?? params["allow_sending_without_reply"]
    )
    return allowWithoutReply ? {} : badRequest("message to be replied not found")
  }

  /** The message `from_chat_id`/`message_id` points at, for forwardMessage and copyMessage. */
  const sourceMessage = (bot: Bot, params: Params, missing: string): BotApi.Message | Failure => {
    const chat = chatFor(bot, params["from_chat_id"], "read")
    if (isFailure(chat)) return chat
    const id = asInt(params["message_id"])
    if (id === undefined) return badRequest("message identifier is not specified")
    return history(bot, chat).messages.get(id) ?? badRequest(missing)
  }

  const originOf = (message: BotApi.Message): Json => {
    if (message.forward_origin !== undefined) return message.forward_origin
    if (message.chat.type === "channel") {
      return {
        type: "channel",
        chat: message.chat,
        message_id: message.message_id,
        date: message.date,
        ...(message.author_signature === undefined ? {} : { author_signature: message.author_signature })
      }
    }
    if (message.sender_chat !== undefined) return { type: "chat", sender_chat: message.sender_chat, date: message.date }
    return { type: "user", sender_user: message.from, date: message.date }
  }

  /** The pre-7.0 `forward_*` fields, which Telegram still sends next to `forward_origin`. */
  const legacyForward = (origin: Json): Json => {
    switch (origin["type"]) {
      case "user":
        return { forward_from: origin["sender_user"], forward_date: origin["date"] }
      case "hidden_user":
        return { forward_sender_name: origin["sender_user_name"], forward_date: origin["date"] }
      case "chat":
        return { forward_from_chat: origin["sender_chat"], forward_date: origin["date"] }
      default:
        return {
          forward_from_chat: origin["chat"],
          forward_from_message_id: origin["message_id"],
          forward_date: origin["date"]
        }
    }
  }

  /** A file `getFile` and the download route know: an upload's bytes, or `content` generated bytes. */
  const addFile = (
    kind: MediaKind,
    content: Buffer | number,
    options: { readonly mime?: string; readonly extension?: string } = {}
  ): StoredFile => {
    const seed = nextFile++
    const info = kinds[kind]
    const extension = options.extension ?? info.extension
    const file: StoredFile = {
      file_id: `${info.idPrefix}${randomBytes(48).toString("base64url").slice(0, 60)}`,
      file_unique_id: `${kind === "photo" ? "AQAD" : "AgAD"}${randomBytes(9).toString("base64url")}`,
      file_size: typeof content === "number" ? content : content.length,
      file_path: `${info.folder}/file_${seed}${extension === "" ? "" : `.${extension}`}`,
      mime_type: options.mime ?? info.mime,
      kind,
      seed,
      bytes: typeof content === "number" ? undefined : content
    }
    files.set(file.file_id, file)
    filesByPath.set(file.file_path, file)
    return file
  }

  /** Sizes of one photo, smallest first, each its own file; `largest` is the last one's file. */
  const photoSet = (largest: StoredFile): ReadonlyArray<BotApi.PhotoSize> => {
    const dimensions = [{ width: 90, height: 67 }, { width: 320, height: 240 }, { width: 800, height: 600 }]
    const smaller = [Math.floor(largest.file_size / 16), Math.floor(largest.file_size / 4)].filter((size, i, all) =>
      size > 0 && size < largest.file_size && size !== all[i - 1]
    )
    const sizes = [...smaller.map((size) => addFile("photo", size)), largest].map((file, i, all) => ({
      ...fileFields(file),
      ...dimensions[dimensions.length - all.length + i]!
    }))
    for (const size of sizes) mediaOf.set(size.file_id, sizes)
    return sizes
  }

  const photoSizes = (): ReadonlyArray<BotApi.PhotoSize> => photoSet(addFile("photo", 24_000))

  /**
   * The media a send names, as Telegram reads it: the part `attach://<name>` names, else a URL or a known
   * `file_id`; left empty, the part called `field`. Undefined when there is none.
   */
  const mediaSource = (
    kind: MediaKind,
    value: unknown,
    field: string | undefined,
    context: Context
  ): MediaSource | Failure | undefined => {
    const text = typeof value === "string" ? value : ""
    if (text === "" || text.startsWith("attach://")) {
      const name = text === "" ? field : text.slice("attach://".length)
      const part = name === undefined ? undefined : context.files.get(name)
      return name === undefined || part === undefined ? undefined : { _tag: "Upload", field: name, part }
    }
    if (/^https?:\/\//i.test(text)) {
      return URL.canParse(text) ? { _tag: "Url", url: new URL(text) } : badRequest("wrong HTTP URL specified")
    }
    const file = files.get(text)
    if (file === undefined) return badRequest("wrong file identifier/HTTP URL specified")
    return file.kind === kind ? { _tag: "Stored", file } : badRequest("type of file mismatch")
  }

  /** The message field describing a new file; `options` holds the send's `duration`, `width`, `title`... */
  const mediaField = (kind: MediaKind, file: StoredFile, fileName: string, options: Params): unknown => {
    const int = (key: string, fallback: number) => asInt(options[key]) ?? fallback
    const text = (key: string) => (isEmpty(options[key]) ? {} : { [key]: asText(options[key]) })
    const named = { file_name: fileName, mime_type: file.mime_type }
    switch (kind) {
      case "photo":
        return photoSet(file)
      case "document":
        return { ...named, ...fileFields(file) }
      case "video":
      case "animation":
        return {
          duration: int("duration", 0),
          width: int("width", 640),
          height: int("height", 360),
          ...named,
          ...fileFields(file)
        }
      case "audio":
        return { duration: int("duration", 0), ...text("performer"), ...text("title"), ...named, ...fileFields(file) }
      case "voice":
        return { duration: int("duration", 0), mime_type: file.mime_type, ...fileFields(file) }
      case "sticker":
        return {
          type: "regular",
          width: 512,
          height: 512,
          is_animated: file.mime_type === "application/x-tgsticker",
          is_video: file.mime_type === "video/webm",
          ...text("emoji"),
          ...fileFields(file)
        }
      case "video_note":
        return { duration: int("duration", 0), length: int("length", 240), ...fileFields(file) }
    }
  }

  /** The message field for `source`, with a new file unless it names a known one; uploads are logged. */
  const attachMedia = (
    bot: Bot,
    method: string,
    kind: MediaKind,
    source: MediaSource,
    options: Params
  ): { readonly field: unknown; readonly upload?: UploadedFile } => {
    if (source._tag === "Stored") {
      return { field: mediaOf.get(source.file.file_id) ?? mediaField(kind, source.file, "", options) }
    }
    const name = source._tag === "Upload" ? source.part.file_name : urlFileName(source.url, kind)
    const type = fileTypeFor(kind, name, source._tag === "Upload" ? source.part.mime_type : undefined)
    const file = addFile(kind, source._tag === "Upload" ? source.part.bytes : 40_000, type)
    const field = mediaField(kind, file, name, options)
    mediaOf.set(file.file_id, field)
    if (source._tag === "Url") return { field }
    const upload: UploadedFile = {
      botId: bot.id,
      method,
      field: source.field,
      file_id: file.file_id,
      file_unique_id: file.file_unique_id,
      file_name: source.part.file_name,
      mime_type: source.part.mime_type,
      file_size: file.file_size,
      sha256: source.part.sha256
    }
    uploadLog.push(upload)
    return { field, upload }
  }

  /** `sendPhoto`, `sendDocument` and the like: one message with the media `params[kind]` names. */
  const sendMedia = (kind: MediaKind, method: string): Handler => (bot, params, context) => {
    const source = mediaSource(kind, params[kind], kind, context)
    if (source === undefined) return badRequest(`there is no ${kind.replace("_", " ")} in the request`)
    const caption = kinds[kind].caption ? captionOf(params) : {}
    if (isFailure(caption)) return caption
    const chat = chatFor(bot, params["chat_id"], "write")
    if (isFailure(chat)) return chat
    const reply = replyTo(bot, chat, params)
    if (isFailure(reply)) return reply
    if (isFailure(source)) return source
    const media = attachMedia(bot, method, kind, source, params)
    return ok(post(bot, chat, {
      ...reply,
      [kind]: media.field,
      ...caption,
      ...inlineKeyboard(params["reply_markup"])
    }, method, media.upload))
  }

  /** One InputMedia of `sendMediaGroup`, or Telegram's reason to refuse it. */
  const albumItem = (value: unknown, context: Context): AlbumItem | Failure => {
    const options = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined
    if (options === undefined) return badRequest("can't parse InputMedia: expected an Object")
    const caption = captionOf(options)
    if (isFailure(caption)) return caption
    const type = asText(options["type"])
    if (type === "animation") {
      return badRequest("can't parse InputMedia: type \"animation\" can't be used in sendMediaGroup")
    }
    if (!["photo", "video", "document", "audio"].includes(type)) {
      return badRequest(`can't parse InputMedia: type "${type}" is unsupported`)
    }
    const kind = type as MediaKind
    const source = mediaSource(kind, options["media"], undefined, context)
    if (source === undefined) return badRequest("can't parse InputMedia: media not found")
    return isFailure(source) ? source : { kind, source, caption, options }
  }

  /** The items of `sendMediaGroup`'s `media`, or Telegram's reason to refuse the album. */
  const albumItems = (value: unknown, context: Context): ReadonlyArray<AlbumItem> | Failure => {
    if (isEmpty(value)) return badRequest("parameter \"media\" is required")
    const media = parseJson(value)
    if (media === undefined) return badRequest("can't parse media JSON object")
    if (!Array.isArray(media)) return badRequest("expected an Array of InputMedia")
    if (media.length === 0) return badRequest("there are no messages to send")
    if (media.length > 10) return badRequest("too many messages to send as an album")
    const items: Array<AlbumItem> = []
    for (const entry of media) {
      const item = albumItem(entry, context)
      if (isFailure(item)) return item
      items.push(item)
    }
    return albumMixFailure(items.map((item) => item.kind)) ?? items
  }

  /** The bot's own message an edit names by `chat_id` and `message_id`. */
  const editTarget = (bot: Bot, params: Params): EditTarget | Failure => {
    if (isEmpty(params["chat_id"]) && !isEmpty(params["inline_message_id"])) return badRequest("MESSAGE_ID_INVALID")
    const chat = chatFor(bot, params["chat_id"], "write")
    if (isFailure(chat)) return chat
    const id = asInt(params["message_id"])
    if (id === undefined) return badRequest("message identifier is not specified")
    const chatHistory = history(bot, chat)
    const current = chatHistory.messages.get(id)
    if (current === undefined) return badRequest("message to edit not found")
    if (chatHistory.authors.get(id) !== bot.id) return badRequest("message can't be edited")
    return { chatHistory, id, current }
  }

  /** Gives the message `next`'s values for `keys` (absent ones removed); "not modified" if none changes. */
  const applyEdit = (target: EditTarget, next: Json, keys: ReadonlyArray<string>): Answer => {
    const current = target.current as unknown as Json
    if (keys.every((key) => JSON.stringify(next[key]) === JSON.stringify(current[key]))) return notModified
    const rest = Object.entries(current).filter(([key]) => !keys.includes(key) && key !== "edit_date")
    const edited = { ...Object.fromEntries(rest), ...next, edit_date: now() } as unknown as BotApi.Message
    target.chatHistory.messages.set(target.id, edited)
    return ok(edited)
  }

  const accepts = (bot: Bot, kind: string | undefined) =>
    kind === undefined ||
    (bot.allowed.length === 0 ? !BotApi.optInUpdateTypes.includes(kind) : bot.allowed.includes(kind))

  const pushUpdate = (bot: Bot, raw: Readonly<Record<string, unknown>>): BotApi.Update | undefined => {
    const { update_id: _, ...fields } = raw
    if (!accepts(bot, BotApi.updateType(fields))) return undefined
    const update = { update_id: bot.nextUpdateId++, ...fields } as BotApi.Update
    bot.queue.push(update)
    queueMicrotask(() => {
      const poll = bot.poll
      if (poll !== undefined && bot.queue.length > 0) poll.finish(ok(bot.queue.slice(0, poll.limit)))
    })
    deliver(bot)
    return update
  }

  const endPoll = (bot: Bot, answer: Answer) => bot.poll?.finish(answer)

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        sleepers.delete(done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      sleepers.add(done)
    })

  type Outcome =
    | { readonly _tag: "Delivered"; readonly body: Buffer; readonly contentType: string }
    | { readonly _tag: "Failed"; readonly message: string }

  const postUpdate = (hook: Webhook, update: BotApi.Update): Promise<Outcome> =>
    new Promise((resolve) => {
      let settled = false
      const settle = (outcome: Outcome) => {
        if (settled) return
        settled = true
        inFlight.delete(abort)
        resolve(outcome)
      }
      const abort = () => {
        settle({ _tag: "Failed", message: "Connection closed" })
        request.destroy()
      }
      const body = JSON.stringify(update)
      const url = new URL(hook.url)
      const request = (url.protocol === "https:" ? Https : Http).request(url, {
        method: "POST",
        agent: false,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...(hook.secret === undefined ? {} : { "x-telegram-bot-api-secret-token": hook.secret })
        }
      }, (response) => {
        readBody(response).then((answer) => {
          const status = response.statusCode ?? 0
          settle(
            status >= 200 && status < 300
              ? { _tag: "Delivered", body: answer, contentType: response.headers["content-type"] ?? "" }
              : {
                _tag: "Failed",
                message: `Wrong response from the webhook: ${status} ${response.statusMessage ?? ""}`.trim()
              }
          )
        }, () => settle({ _tag: "Failed", message: "Connection reset by peer" }))
      })
      request.setTimeout(webhookTimeout, () => {
        settle({ _tag: "Failed", message: "Read timeout expired" })
        request.destroy()
      })
      request.on("error", (error) => settle({ _tag: "Failed", message: describeConnectionError(error) }))
      inFlight.add(abort)
      request.end(body)
    })

  /** Runs a webhook response that is itself a Bot API call (`{"method": ...}`, JSON or a form). */
  const runWebhookReply = async (bot: Bot, body: Buffer, contentType: string) => {
    const type = contentType.toLowerCase()
    const header = type.startsWith("application/json") || type.startsWith("application/x-www-form-urlencoded") ||
        type.startsWith("multipart/form-data")
      ? contentType
      : body.toString("utf8").trimStart().startsWith("{")
      ? "application/json"
      : ""
    if (header === "") return
    const parsed = parseBody(body, header)
    if (parsed._tag === "Failure") return
    const { method, ...params } = parsed.params
    if (typeof method !== "string" || method === "") return
    await invoke(bot, method, params, { signal: undefined, files: parsed.files }, true)
  }

  const deliveryLoop = async (bot: Bot) => {
    while (!closed) {
      const hook = bot.webhook
      const update = bot.queue[0]
      if (hook === undefined || update === undefined) return
      const outcome = await postUpdate(hook, update)
      if (closed) return
      if (outcome._tag === "Delivered") {
        if (bot.queue[0] === update) bot.confirmed.push(bot.queue.shift()!)
        await runWebhookReply(bot, outcome.body, outcome.contentType)
      } else {
        if (bot.webhook === hook) bot.lastError = { date: now(), message: outcome.message }
        await sleep(retryDelay)
      }
    }
  }

  const deliver = (bot: Bot) => {
    if (closed || bot.delivery !== undefined || bot.webhook === undefined || bot.queue.length === 0) return
    bot.delivery = deliveryLoop(bot).finally(() => {
      bot.delivery = undefined
      deliver(bot)
    })
  }

  const getUpdates: Handler = (bot, params, context) => {
    if (bot.webhook !== undefined) return webhookActive
    endPoll(bot, terminated)
    const offset = asInt(params["offset"]) ?? 0
    if (offset > 0) {
      while (bot.queue[0] !== undefined && bot.queue[0].update_id < offset) bot.confirmed.push(bot.queue.shift()!)
    } else if (offset < 0) {
      bot.queue = bot.queue.slice(offset)
    }
    const limit = clamp(asInt(params["limit"]) ?? 100, 1, 100)
    const timeout = Math.max(0, asInt(params["timeout"]) ?? 0)
    const allowed = asArray(params["allowed_updates"])
    if (allowed !== undefined) bot.allowed = allowed.filter((kind): kind is string => typeof kind === "string")
    if (bot.queue.length > 0 || timeout === 0 || closed || context.signal?.aborted === true) {
      return ok(bot.queue.slice(0, limit))
    }
    return new Promise<Answer>((resolve) => {
      let finished = false
      const poll: Poll = {
        limit,
        finish: (answer) => {
          if (finished) return
          finished = true
          clearTimeout(timer)
          context.signal?.removeEventListener("abort", onAbort)
          heldPolls.delete(poll)
          if (bot.poll === poll) bot.poll = undefined
          resolve(answer)
        }
      }
      const onAbort = () => poll.finish(ok([]))
      const timer = setTimeout(() => poll.finish(ok(bot.queue.slice(0, limit))), timeout * 1000)
      context.signal?.addEventListener("abort", onAbort)
      heldPolls.add(poll)
      bot.poll = poll
      for (const listener of [...pollListeners]) listener(bot.id)
    })
  }

  const setWebhook: Handler = (bot, params) => {
    const url = asText(params["url"])
    if (url === "") return deleteWebhook(bot, params, { signal: undefined, files: noFiles })
    let parsed: URL | undefined
    try {
      parsed = new URL(url)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
      return badRequest("bad webhook: An HTTPS URL must be provided for webhook")
    }
    const secret = isEmpty(params["secret_token"]) ? undefined : asText(params["secret_token"])
    if (secret !== undefined && !secretPattern.test(secret)) {
      return badRequest("secret token contains unallowed characters")
    }
    const allowed = asArray(params["allowed_updates"])
    if (allowed !== undefined) bot.allowed = allowed.filter((kind): kind is string => typeof kind === "string")
    if (asBool(params["drop_pending_updates"])) bot.queue = []
    endPoll(bot, webhookActive)
    const same = bot.webhook?.url === url
    if (!same) bot.lastError = undefined
    bot.webhook = { url, secret, maxConnections: clamp(asInt(params["max_connections"]) ?? 40, 1, 100) }
    deliver(bot)
    return ok(true, same ? "Webhook is already set" : "Webhook was set")
  }

  const deleteWebhook: Handler = (bot, params) => {
    if (asBool(params["drop_pending_updates"])) bot.queue = []
    const had = bot.webhook !== undefined
    bot.webhook = undefined
    bot.lastError = undefined
    return ok(true, had ? "Webhook was deleted" : "Webhook is already deleted")
  }

  const methods: Record<string, Handler> = {
    getMe: (bot) =>
      ok({
        ...bot.user,
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
        can_connect_to_business: false,
        has_main_web_app: false
      }),
    getUpdates,
    setWebhook,
    deleteWebhook,
    getWebhookInfo: (bot) => {
      const hook = bot.webhook
      const base = { url: hook?.url ?? "", has_custom_certificate: false, pending_update_count: bot.queue.length }
      if (hook === undefined) return ok(base)
      return ok({
        ...base,
        ...(bot.lastError === undefined
          ? {}
          : { last_error_date: bot.lastError.date, last_error_message: bot.lastError.message }),
        max_connections: hook.maxConnections,
        ...(bot.allowed.length === 0 ? {} : { allowed_updates: bot.allowed })
      })
    },
    sendMessage: (bot, params) => {
      if (isEmpty(params["chat_id"])) return badRequest("chat_id is empty")
      const text = asText(params["text"])
      if (text.trim() === "") return badRequest("message text is empty")
      if (text.length > 4096) return badRequest("message is too long")
      if (badParseMode(params["parse_mode"])) return badRequest("unsupported parse_mode")
      const chat = chatFor(bot, params["chat_id"], "write")
      if (isFailure(chat)) return chat
      const reply = replyTo(bot, chat, params)
      if (isFailure(reply)) return reply
      const entities = asArray(params["entities"])
      return ok(post(bot, chat, {
        ...reply,
        text,
        ...(entities === undefined || entities.length === 0 ? {} : { entities }),
        ...inlineKeyboard(params["reply_markup"])
      }, "sendMessage"))
    },
    forwardMessage: (bot, params) => {
      const chat = chatFor(bot, params["chat_id"], "write")
      if (isFailure(chat)) return chat
      const original = sourceMessage(bot, params, "message to forward not found")
      if (isFailure(original)) return original
      const origin = originOf(original)
      return ok(post(bot, chat, {
        ...legacyForward(origin),
        forward_origin: origin,
        ...contentOf(original)
      }, "forwardMessage"))
    },
    copyMessage: (bot, params) => {
      const chat = chatFor(bot, params["chat_id"], "write")
      if (isFailure(chat)) return chat
      const original = sourceMessage(bot, params, "message to copy not found")
      if (isFailure(original)) return original
      const reply = replyTo(bot, chat, params)
      if (isFailure(reply)) return reply
      const { caption: _, caption_entities: __, ...content } = contentOf(original)
      const caption = original.text === undefined && "caption" in params ? asText(params["caption"]) : original.caption
      const captionEntities = "caption" in params
        ? asArray(params["caption_entities"])
        : original.caption_entities
      const message = post(bot, chat, {
        ...reply,
        ...content,
        ...(caption === undefined || caption === "" ? {} : { caption }),
        ...(caption === undefined || captionEntities === undefined || captionEntities.length === 0
          ? {}
          : { caption_entities: captionEntities }),
        ...inlineKeyboard(params["reply_markup"])
      }, "copyMessage")
      return ok({ message_id: message.message_id })
    },
    ...Object.fromEntries(
      Object.entries(mediaMethods).map(([method, kind]) => [method, sendMedia(kind, method)])
    ),
    sendMediaGroup: (bot, params, context) => {
      const items = albumItems(params["media"], context)
      if (isFailure(items)) return items
      const chat = chatFor(bot, params["chat_id"], "write")
      if (isFailure(chat)) return chat
      const reply = replyTo(bot, chat, params)
      if (isFailure(reply)) return reply
      const album = items.length > 1 ? { media_group_id: `${queryPrefix}${String(nextAlbum++).padStart(11, "0")}` } : {}
      return ok(items.map((item) => {
        const media = attachMedia(bot, "sendMediaGroup", item.kind, item.source, item.options)
        return post(bot, chat, {
          ...reply,
          ...album,
          [item.kind]: media.field,
          ...item.caption
        }, "sendMediaGroup", media.upload)
      }))
    },
    editMessageText: (bot, params) => {
      const text = asText(params["text"])
      if (text.trim() === "") return badRequest("message text is empty")
      if (text.length > 4096) return badRequest("message is too long")
      const target = editTarget(bot, params)
      if (isFailure(target)) return target
      if (target.current.text === undefined) return badRequest("there is no text in the message to edit")
      const entities = asArray(params["entities"])
      return applyEdit(target, {
        text,
        ...(entities === undefined || entities.length === 0 ? {} : { entities }),
        ...inlineKeyboard(params["reply_markup"])
      }, ["text", "entities", "reply_markup"])
    },
    editMessageCaption: (bot, params) => {
      const caption = captionOf(params)
      if (isFailure(caption)) return caption
      const target = editTarget(bot, params)
      if (isFailure(target)) return target
      if (!captionKinds.some((kind) => target.current[kind] !== undefined)) {
        return badRequest("there is no caption in the message to edit")
      }
      return applyEdit(
        target,
        { ...caption, ...inlineKeyboard(params["reply_markup"]) },
        ["caption", "caption_entities", "reply_markup"]
      )
    },
    editMessageReplyMarkup: (bot, params) => {
      const target = editTarget(bot, params)
      return isFailure(target) ? target : applyEdit(target, inlineKeyboard(params["reply_markup"]), ["reply_markup"])
    },
    deleteMessage: (bot, params) => {
      const chat = chatFor(bot, params["chat_id"], "read")
      if (isFailure(chat)) return chat
      const id = asInt(params["message_id"])
      if (id === undefined) return badRequest("message identifier is not specified")
      const chatHistory = history(bot, chat)
      if (!chatHistory.messages.delete(id)) return badRequest("message to delete not found")
      chatHistory.authors.delete(id)
      return ok(true)
    },
    answerCallbackQuery: (bot, params) => {
      const query = callbacks.get(asText(params["callback_query_id"]))
      if (query === undefined || query.botId !== bot.id || query.answered) return queryTooOld
      if (asText(params["text"]).length > 200) return badRequest("MESSAGE_TOO_LONG")
      query.answered = true
      return ok(true)
    },
    sendChatAction: (bot, params) => {
      const chat = chatFor(bot, params["chat_id"], "write")
      if (isFailure(chat)) return chat
      if (!chatActions.has(asText(params["action"]))) return badRequest("wrong parameter action in request")
      return ok(true)
    },
    getFile: (_bot, params) => {
      const file = files.get(asText(params["file_id"]))
      if (file === undefined) return badRequest("invalid file_id")
      if (file.file_size > 20 * 1024 * 1024) return badRequest("file is too big")
      return ok({
        file_id: file.file_id,
        file_unique_id: file.file_unique_id,
        file_size: file.file_size,
        file_path: file.file_path
      })
    }
  }
  const methodNames = new Map(Object.keys(methods).map((name) => [name.toLowerCase(), name]))

  const takeFailure = (method: string, bot: Bot): InjectedError | undefined => {
    const key = method.toLowerCase()
    const matches = (entry: Injected) => entry.method === key && (entry.botId === undefined || entry.botId === bot.id)
    const index = oneShot.findIndex(matches)
    if (index >= 0) return oneShot.splice(index, 1)[0]?.error
    return always.find(matches)?.error
  }

  const logCall = (call: CallRecord) => {
    callLog.push(call)
    for (const listener of [...callListeners]) listener(call)
  }

  /** One call through the whole pipeline: token, injected failures, method, handler; logged when answered. */
  const invoke = async (
    bot: Bot | undefined,
    requested: string,
    params: Params,
    context: Context,
    webhookReply: boolean,
    parseFailure?: Failure
  ): Promise<Answer> => {
    const method = methodNames.get(requested.toLowerCase()) ?? requested
    const receivedAt = Date.now()
    const log = (result: Answer) => {
      const status = "ok" in result ? 200 : result.error_code
      logCall({
        botId: bot?.id,
        method,
        params,
        status,
        receivedAt,
        ...(webhookReply ? { webhookReply: true as const } : {})
      })
      return result
    }
    if (bot === undefined) return log(unauthorized)
    const injected = takeFailure(method, bot)
    if (injected !== undefined) {
      const parameters = {
        ...(injected.retry_after === undefined ? {} : { retry_after: injected.retry_after }),
        ...(injected.migrate_to_chat_id === undefined ? {} : { migrate_to_chat_id: injected.migrate_to_chat_id })
      }
      return log({
        error_code: injected.error_code,
        description: injected.description,
        ...(Object.keys(parameters).length === 0 ? {} : { parameters })
      })
    }
    const handler = methods[method]
    if (handler === undefined) return log(notFound)
    if (parseFailure !== undefined) return log(parseFailure)
    return log(await handler(bot, params, context))
  }

  const decodeToken = (raw: string): string | undefined => {
    try {
      const token = decodeURIComponent(raw)
      return tokenPattern.test(token) ? token : undefined
    } catch {
      return undefined
    }
  }

  const answer = async (req: Http.IncomingMessage, url: URL, signal: AbortSignal): Promise<Answer> => {
    const route = /^\/bot([^/]+)\/([^/]+)$/.exec(url.pathname)
    if (route === null) return notFound
    const token = decodeToken(route[1]!)
    let requested: string
    try {
      requested = decodeURIComponent(route[2]!)
    } catch {
      return notFound
    }
    if (token === undefined) return notFound
    const query = Object.fromEntries(url.searchParams)
    const parsed = parseBody(await readBody(req), req.headers["content-type"] ?? "", { ...query })
    return parsed._tag === "Params"
      ? invoke(botsByToken.get(token), requested, parsed.params, { signal, files: parsed.files }, false)
      : invoke(
        botsByToken.get(token),
        requested,
        query,
        { signal, files: noFiles },
        false,
        parsed.failure
      )
  }

  const sendJson = (res: Http.ServerResponse, result: Answer) => {
    if (res.destroyed || res.headersSent) return
    const status = "ok" in result ? 200 : result.error_code
    const body = JSON.stringify("ok" in result ? result : { ok: false, ...result })
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  }

  /** `/file/bot<token>/<file_path>`: the file's bytes, with single byte ranges. */
  const serveFile = (req: Http.IncomingMessage, res: Http.ServerResponse, url: URL) => {
    const route = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname)
    const token = route === null ? undefined : decodeToken(route[1]!)
    if (route === null || token === undefined) return sendJson(res, notFound)
    if (!botsByToken.has(token)) return sendJson(res, unauthorized)
    let path: string
    try {
      path = decodeURIComponent(route[2]!)
    } catch {
      return sendJson(res, notFound)
    }
    const file = filesByPath.get(path)
    if (file === undefined) return sendJson(res, notFound)
    const bytes = fileContent(file)
    const headers = { "content-type": file.mime_type, "accept-ranges": "bytes" }
    const range = /^bytes=(\d*)-(\d*)$/.exec((req.headers.range ?? "").trim())
    let body = bytes
    if (range !== null && (range[1] !== "" || range[2] !== "")) {
      const size = bytes.length
      const start = range[1] === "" ? Math.max(0, size - Number(range[2])) : Number(range[1])
      const end = range[1] === "" || range[2] === "" ? size - 1 : Math.min(Number(range[2]), size - 1)
      if (start >= size || start > end) {
        res.writeHead(416, { ...headers, "content-range": `bytes */${size}`, "content-length": 0 })
        return res.end()
      }
      body = bytes.subarray(start, end + 1)
      res.writeHead(206, {
        ...headers,
        "content-range": `bytes ${start}-${end}/${size}`,
        "content-length": body.length
      })
    } else {
      res.writeHead(200, { ...headers, "content-length": body.length })
    }
    res.end(req.method === "HEAD" ? undefined : body)
  }

  const server = Http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (url.pathname.startsWith("/file/")) return serveFile(req, res, url)
    const controller = new AbortController()
    res.on("close", () => {
      if (!res.writableFinished) controller.abort()
    })
    answer(req, url, controller.signal).then(
      (result) => sendJson(res, result),
      () => sendJson(res, failure(500, "Internal Server Error"))
    )
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo

  const addUser: FakeTelegram["addUser"] = (options = {}) => {
    const n = nextUser++
    const user: BotApi.User = {
      id: 100_000_000 + n,
      is_bot: false,
      first_name: options.first_name ?? `User ${n}`,
      ...(options.last_name === undefined ? {} : { last_name: options.last_name }),
      ...(options.username === undefined ? {} : { username: options.username }),
      ...(options.language_code === undefined ? {} : { language_code: options.language_code })
    }
    people.set(user.id, { user, started: options.startedBots === undefined ? "all" : new Set(options.startedBots) })
    return user
  }

  const testUser = () => (defaultUser ??= addUser({ first_name: "Test", username: "test_user" }))

  const groupOf = (chatId: number): Group => {
    const group = groups.get(chatId)
    if (group === undefined) throw new Error(`FakeTelegram: no group or channel ${chatId}`)
    return group
  }

  /** The bots that get an update about a chat: the bot itself in private, else every member. */
  const audience = (bot: Bot, chat: BotApi.Chat): ReadonlyArray<Bot> => {
    if (chat.type === "private") return [bot]
    const group = groupOf(chat.id)
    if (!isMember(group, bot)) throw new Error(`FakeTelegram: bot ${bot.id} is not a member of chat ${chat.id}`)
    return [...botsById.values()].filter((member) => isMember(group, member))
  }

  /** The chat and sender of a user's message. */
  const userContext = (options: UserMessage): { readonly user: BotApi.User; readonly chat: BotApi.Chat } => {
    const chatId = typeof options.chat === "object" ? options.chat.id : options.chat
    const person = chatId === undefined ? undefined : people.get(chatId)
    const user = options.user ?? person?.user ?? testUser()
    if (chatId === undefined || person !== undefined) return { user, chat: privateChat(person?.user ?? user) }
    const group = groupOf(chatId)
    if (group.chat.type === "channel") throw new Error("FakeTelegram: users cannot write to a channel; use channelPost")
    return { user, chat: group.chat }
  }

  const fake: FakeTelegram = {
    apiRoot: `http://127.0.0.1:${port}`,
    addBot: (options = {}) => {
      const n = nextBot++
      const id = 7_000_000_000 + n
      const username = options.username ?? `fake${n}_bot`
      const first_name = options.first_name ?? `Fake Bot ${n}`
      const bot: Bot = {
        id,
        token: makeToken(id),
        username,
        first_name,
        user: { id, is_bot: true, first_name, username },
        nextUpdateId: 100_000_000 + randomInt(0, 100_000_000),
        queue: [],
        confirmed: [],
        allowed: [],
        poll: undefined,
        webhook: undefined,
        lastError: undefined,
        delivery: undefined
      }
      botsByToken.set(bot.token, bot)
      botsById.set(id, bot)
      return { id, token: bot.token, username, first_name }
    },
    addUser,
    addGroup: (options = {}) => {
      const n = nextGroup++
      const type = options.type ?? "group"
      const chat: BotApi.Chat = {
        id: type === "group" ? -(4_000_000_000 + n) : -(1_002_000_000_000 + n),
        title: options.title ?? `Group ${n}`,
        ...(type !== "group" && options.username !== undefined ? { username: options.username } : {}),
        type
      }
      groups.set(chat.id, { chat, members: options.members === undefined ? "all" : new Set(options.members) })
      if (chat.username !== undefined) groupsByUsername.set(chat.username.toLowerCase(), chat.id)
      return chat
    },
    addToGroup: (chatId, botId) => {
      const group = groupOf(chatId)
      if (group.members !== "all") group.members.add(botOf(botId).id)
    },
    revoke: (botId) => {
      const bot = botOf(botId)
      botsByToken.delete(bot.token)
      bot.token = makeToken(bot.id)
      botsByToken.set(bot.token, bot)
      endPoll(bot, unauthorized)
      return { id: bot.id, token: bot.token, username: bot.username, first_name: bot.first_name }
    },
    failNext: (method, error, options = {}) => {
      oneShot.push({ method: method.toLowerCase(), botId: options.botId, error })
    },
    failAlways: (method, error, options = {}) => {
      always.push({ method: method.toLowerCase(), botId: options.botId, error })
    },
    clearFailures: () => {
      oneShot.length = 0
      always.length = 0
    },
    userSends: (botId, options) => {
      const bot = botOf(botId)
      const { chat, user } = userContext(options)
      const recipients = audience(bot, chat)
      if (options.photo === true && options.text !== undefined) {
        throw new Error("FakeTelegram: a photo message takes a caption, not a text")
      }
      if (options.photo !== true && (options.text === undefined || options.text === "")) {
        throw new Error("FakeTelegram: userSends needs a text or a photo")
      }
      const person = people.get(chat.id)
      if (person !== undefined && person.started !== "all") person.started.add(bot.id)
      const chatHistory = history(bot, chat)
      let reply: Json = {}
      if (options.reply_to_message_id !== undefined) {
        const replied = chatHistory.messages.get(options.reply_to_message_id)
        if (replied === undefined) throw new Error(`FakeTelegram: no message ${options.reply_to_message_id} to answer`)
        reply = { reply_to_message: withoutReply(replied) }
      }
      const message = {
        message_id: chatHistory.nextId++,
        from: user,
        chat,
        date: now(),
        ...reply,
        ...(options.photo === true
          ? {
            photo: photoSizes(),
            ...(options.caption === undefined ? {} : { caption: options.caption }),
            ...(options.entities === undefined ? {} : { caption_entities: options.entities })
          }
          : {
            text: options.text,
            ...(options.entities === undefined ? commandEntities(options.text!) : { entities: options.entities })
          })
      } as BotApi.Message
      chatHistory.messages.set(message.message_id, message)
      for (const recipient of recipients) pushUpdate(recipient, { message })
      return message
    },
    userEdits: (botId, chatId, messageId, text) => {
      const bot = botOf(botId)
      const { chat } = userContext({ chat: chatId })
      const recipients = audience(bot, chat)
      const chatHistory = history(bot, chat)
      const current = chatHistory.messages.get(messageId)
      if (current === undefined || chatHistory.authors.has(messageId) || current.text === undefined) {
        throw new Error(`FakeTelegram: no text message ${messageId} of a user in chat ${chatId}`)
      }
      const { entities: _, ...rest } = current
      const edited = { ...rest, text, ...commandEntities(text), edit_date: now() } as BotApi.Message
      chatHistory.messages.set(messageId, edited)
      for (const recipient of recipients) pushUpdate(recipient, { edited_message: edited })
      return edited
    },
    channelPost: (botId, chatId, text) => {
      const bot = botOf(botId)
      const group = groupOf(chatId)
      if (group.chat.type !== "channel") throw new Error(`FakeTelegram: chat ${chatId} is not a channel`)
      const recipients = audience(bot, group.chat)
      const chatHistory = history(bot, group.chat)
      const message = {
        message_id: chatHistory.nextId++,
        sender_chat: group.chat,
        chat: group.chat,
        date: now(),
        text
      } as BotApi.Message
      chatHistory.messages.set(message.message_id, message)
      for (const recipient of recipients) pushUpdate(recipient, { channel_post: message })
      return message
    },
    userPresses: (botId, message, data, options = {}) => {
      const bot = botOf(botId)
      const current = history(bot, message.chat).messages.get(message.message_id) ?? message
      const user = options.user ?? people.get(message.chat.id)?.user ?? testUser()
      const query: BotApi.CallbackQuery = {
        id: `${queryPrefix}${String(nextQuery++).padStart(13, "0")}`,
        from: user,
        message: current,
        chat_instance: String(-(5_000_000_000_000_000 + Math.abs(message.chat.id))),
        data
      }
      callbacks.set(query.id, { botId: bot.id, answered: false })
      pushUpdate(bot, { callback_query: query })
      return query
    },
    enqueue: (botId, update) => pushUpdate(botOf(botId), update),
    pendingUpdates: (botId) => [...botOf(botId).queue],
    updatesConfirmed: (botId) => [...botOf(botId).confirmed],
    fileBytes: (fileId) => {
      const file = files.get(fileId)
      return file === undefined ? undefined : new Uint8Array(fileContent(file))
    },
    uploads: (botId) => uploadLog.filter((upload) => botId === undefined || upload.botId === botId),
    get calls() {
      return [...callLog]
    },
    waitForCall: (predicate, timeout = "5 seconds") =>
      waitFor(
        callLog,
        callListeners,
        closers,
        predicate,
        timeout,
        "a call",
        (ms) => `no matching call within ${ms} ms (${callLog.length} calls in total)`
      ),
    waitForPoll: (botId, timeout = "5 seconds") => {
      const bot = botOf(botId)
      if (bot.poll !== undefined) return Promise.resolve()
      return waitFor<number>(
        [],
        pollListeners,
        closers,
        (id) => id === botId,
        timeout,
        "a poll",
        (ms) => `no getUpdates of bot ${botId} held within ${ms} ms`
      ).then(() => undefined)
    },
    sent: (botId) => sentLog.filter((sent) => botId === undefined || sent.botId === botId),
    onSent: (listener) => {
      sentListeners.add(listener)
      return () => sentListeners.delete(listener)
    },
    waitForSent: (predicate, timeout = "5 seconds") =>
      waitFor(
        sentLog,
        sentListeners,
        closers,
        predicate,
        timeout,
        "a sent message",
        (ms) => `no matching message sent within ${ms} ms (${sentLog.length} sent in total)`
      ),
    close: async () => {
      closed = true
      for (const poll of [...heldPolls]) poll.finish(ok([]))
      for (const abort of [...inFlight]) abort()
      for (const wake of [...sleepers]) wake()
      for (const onClose of [...closers]) onClose()
      // eslint-disable-next-line @typescript-eslint/await-thenable -- a bot with no delivery running has `undefined`, which Promise.all takes
      await Promise.all([...botsById.values()].map((bot) => bot.delivery))
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    }
  }
  return fake
}

/** Starts a fake on 127.0.0.1 port 0 and stops it, connections included, when the scope closes. */
export const make = (options?: Options): Effect.Effect<FakeTelegram, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(options)),
    (fake) => Effect.promise(() => fake.close())
  )

/** The first sent message, past or future, matching `predicate`; fails after `timeout` (default 5 s). */
export const awaitSent = (
  fake: FakeTelegram,
  predicate: (sent: SentMessage) => boolean,
  timeout: Duration.DurationInput = "5 seconds"
): Effect.Effect<SentMessage, Cause.TimeoutException> =>
  Effect.async<SentMessage>((resume) => {
    const found = fake.sent().find(predicate)
    if (found !== undefined) return resume(Effect.succeed(found))
    const unsubscribe = fake.onSent((sent) => {
      if (!predicate(sent)) return
      unsubscribe()
      resume(Effect.succeed(sent))
    })
    return Effect.sync(unsubscribe)
  }).pipe(Effect.timeout(timeout))
