import { Schema } from "effect"
import { ChatTarget, ParseMode, ReplyMarkup } from "./Message.js"

/** The kinds of media `POST /api/messages/send-media` sends; each is sent with its own method (`sendPhoto`...). */
export const SendableMedia = Schema.Literal("photo", "document", "video", "audio", "voice", "animation", "sticker")
export type SendableMedia = typeof SendableMedia.Type

/** The Bot API method that sends a kind of media. */
export const methodOf = (type: SendableMedia): string => `send${type[0]!.toUpperCase()}${type.slice(1)}`

/** The largest file Telegram takes from a bot, in bytes (its 50 MB upload limit). */
export const maxUploadBytes = 50 * 1024 * 1024

/** The largest file Telegram lets a bot download (getFile), in bytes: 20 MB. */
export const maxDownloadBytes = 20 * 1024 * 1024

const Caption = Schema.String.pipe(
  Schema.maxLength(1024, { message: () => "caption must be at most 1024 characters" })
)

const noStickerCaption = <A extends { readonly type: SendableMedia; readonly caption?: string | undefined }>(a: A) =>
  a.type !== "sticker" || a.caption === undefined || a.caption === "" ||
  { path: ["caption"], message: "a sticker takes no caption" }

/** The fields of a media send besides the file, as `POST /api/messages/send-media` takes them. */
export const MediaSendFields = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  chat_id: ChatTarget,
  type: SendableMedia,
  caption: Schema.optional(Caption),
  reply_to_message_id: Schema.optional(Schema.Int.pipe(Schema.positive())),
  parse_mode: Schema.optional(ParseMode),
  disable_notification: Schema.optional(Schema.Boolean),
  reply_markup: Schema.optional(ReplyMarkup)
})
export type MediaSendFields = typeof MediaSendFields.Type

const HttpUrl = Schema.String.pipe(
  Schema.filter((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), {
    message: () => "url must be an absolute http or https URL"
  })
)

/** JSON body of `POST /api/messages/send-media`: media Telegram knows (`file_id`) or fetches (`url`). */
export const SendMedia = Schema.Struct({
  ...MediaSendFields.fields,
  file_id: Schema.optional(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "file_id must not be empty" }),
      Schema.maxLength(256, { message: () => "file_id must be at most 256 characters" })
    )
  ),
  url: Schema.optional(HttpUrl)
}).pipe(
  Schema.filter((a) =>
    (a.file_id === undefined) !== (a.url === undefined) ||
    { path: ["file_id"], message: "send-media takes file_id or url (or a multipart file), exactly one of them" }
  ),
  Schema.filter(noStickerCaption)
).annotations({ identifier: "SendMedia" })
export type SendMedia = typeof SendMedia.Type

const FormInt = Schema.NumberFromString.pipe(Schema.int())

const FormChatTarget = Schema.Union(
  Schema.compose(Schema.String.pipe(Schema.pattern(/^\s*-?\d+\s*$/)), FormInt),
  ChatTarget
).annotations({ message: () => "chat_id must be an integer or @channelusername" })

const FormBoolean = Schema.transform(Schema.Literal("true", "false", "1", "0"), Schema.Boolean, {
  strict: true,
  decode: (s) => s === "true" || s === "1",
  encode: (b) => (b ? "true" : "false")
}).annotations({ message: () => "must be true or false" })

/**
 * The text fields of a multipart `POST /api/messages/send-media`, decoded to `MediaSendFields`: numbers and
 * booleans as text, `reply_markup` as JSON text. The `file` part is not among them.
 */
export const MediaSendForm = Schema.Struct({
  bot_id: FormInt.pipe(Schema.positive()),
  chat_id: FormChatTarget,
  type: SendableMedia,
  caption: Schema.optional(Caption),
  reply_to_message_id: Schema.optional(FormInt.pipe(Schema.positive())),
  parse_mode: Schema.optional(ParseMode),
  disable_notification: Schema.optional(FormBoolean),
  reply_markup: Schema.optional(Schema.parseJson(ReplyMarkup))
}).pipe(Schema.filter(noStickerCaption)).annotations({ identifier: "MediaSendForm" })

/** The bot's history holds no message with this file, or Telegram no longer has it. */
export class FileNotFound extends Schema.TaggedError<FileNotFound>()("FileNotFound", {
  bot_id: Schema.Int,
  file_id: Schema.String
}) {
  override get message() {
    return `bot ${this.bot_id} has no file with this file_id in its history, or Telegram no longer has it`
  }
}

/** Telegram does not let bots download files over 20 MB. */
export class FileTooBig extends Schema.TaggedError<FileTooBig>()("FileTooBig", { bot_id: Schema.Int }) {
  override get message() {
    return "the file is larger than 20 MB, the most Telegram lets a bot download; it cannot be fetched through the Bot API"
  }
}
