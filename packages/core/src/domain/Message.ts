import { BotApi } from "@botrelay/telegram"
import { Schema } from "effect"

/** The kind of media a message carries; `callback` marks an inline-button press stored as a message. */
export const MediaType = Schema.Literal(
  "photo",
  "video",
  "animation",
  "sticker",
  "voice",
  "audio",
  "document",
  "video_note",
  "callback"
)
export type MediaType = typeof MediaType.Type

/** Whether the bot received the message or sent it. */
export const Direction = Schema.Literal("in", "out")
export type Direction = typeof Direction.Type

/** A message a bot saw or sent. `id` is Telegram's message_id, unique per (bot, chat). */
export const Message = Schema.Struct({
  id: Schema.Int,
  chat_id: Schema.Int,
  bot_id: Schema.Int,
  user_id: Schema.Int,
  username: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  text: Schema.String,
  date: Schema.Int,
  media_type: Schema.optionalWith(MediaType, { exact: true }),
  file_id: Schema.optionalWith(Schema.String, { exact: true }),
  reply_to_message_id: Schema.optionalWith(Schema.Int, { exact: true }),
  direction: Direction,
  edit_date: Schema.Int,
  /** Present (true) only once the message was deleted through Botrelay; the record stays in the history. */
  deleted: Schema.optionalWith(Schema.Literal(true), { exact: true }),
  /** Whether Telegram took the message; absent means "sent" (messages received, or sent by other paths). */
  delivery: Schema.optionalWith(Schema.Literal("queued", "sent", "failed", "unknown"), { exact: true }),
  /** Telegram's reason when `failed`; "" otherwise. Set with `delivery`. */
  delivery_error: Schema.optionalWith(Schema.String, { exact: true }),
  /** Unix seconds the state was last set. Set with `delivery`. */
  delivery_at: Schema.optionalWith(Schema.Int, { exact: true }),
  /** Botrelay's own number of a message sent through the API, stable while `id` is 0 (not sent). */
  local_id: Schema.optionalWith(Schema.Int, { exact: true })
}).annotations({ identifier: "Message" })
export type Message = typeof Message.Type

/** The largest page `GET /api/messages` serves. */
export const maxPageSize = 200

/** A page of one chat's history, newest first. */
export interface MessageQuery {
  readonly bot_id: number
  readonly chat_id: number
  readonly limit: number
  readonly offset: number
}

/** A chat as Telegram names it: a numeric id, or `@username` of a public channel or group. */
export const ChatTarget = Schema.Union(
  Schema.Int,
  Schema.String.pipe(
    Schema.pattern(/^@[A-Za-z0-9_]{4,64}$/, { message: () => "chat_id must be an integer or @channelusername" })
  )
)

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * Telegram's `reply_markup`: an InlineKeyboardMarkup, ReplyKeyboardMarkup, ReplyKeyboardRemove or
 * ForceReply object, told apart by its defining field and passed on to Telegram as it came.
 */
export const ReplyMarkup = Schema.Union(
  Schema.Struct({ inline_keyboard: Schema.Array(Schema.Array(JsonObject)) }, JsonObject),
  Schema.Struct({ keyboard: Schema.Array(Schema.Array(Schema.Union(Schema.String, JsonObject))) }, JsonObject),
  Schema.Struct({ remove_keyboard: Schema.Literal(true) }, JsonObject),
  Schema.Struct({ force_reply: Schema.Literal(true) }, JsonObject)
).annotations({
  identifier: "ReplyMarkup",
  message: () =>
    "reply_markup must be an InlineKeyboardMarkup (inline_keyboard), ReplyKeyboardMarkup (keyboard), " +
    "ReplyKeyboardRemove (remove_keyboard: true) or ForceReply (force_reply: true) object"
})
export type ReplyMarkup = typeof ReplyMarkup.Type

/** A message text: 1 to 4096 characters. */
export const Text = Schema.String.pipe(
  Schema.minLength(1, { message: () => "text must not be empty" }),
  Schema.maxLength(4096, { message: () => "text must be at most 4096 characters" })
)

/** How Telegram reads formatting in a text or caption. */
export const ParseMode = Schema.Literal("HTML", "MarkdownV2", "Markdown")

/** Body of `POST /api/messages/send`. */
export const SendMessage = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  chat_id: ChatTarget,
  text: Text,
  reply_to_message_id: Schema.optional(Schema.Int.pipe(Schema.positive())),
  parse_mode: Schema.optional(ParseMode),
  disable_notification: Schema.optional(Schema.Boolean),
  reply_markup: Schema.optional(ReplyMarkup)
}).annotations({ identifier: "SendMessage" })
export type SendMessage = typeof SendMessage.Type

/** Body of `POST /api/messages/edit`: the new text of a message the bot sent. */
export const EditMessage = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  chat_id: Schema.Int,
  message_id: Schema.Int.pipe(Schema.positive()),
  text: Text,
  parse_mode: Schema.optional(ParseMode)
}).annotations({ identifier: "EditMessage" })
export type EditMessage = typeof EditMessage.Type

/** The history shows the message as one the bot received, so the bot cannot edit it. */
export class NotEditable extends Schema.TaggedError<NotEditable>()("NotEditable", {
  bot_id: Schema.Int,
  chat_id: Schema.Int,
  message_id: Schema.Int
}) {
  override get message() {
    return `message ${this.message_id} of chat ${this.chat_id} is one bot ${this.bot_id} received; a bot can edit only what it sent`
  }
}

const mediaKinds = ["animation", "video", "sticker", "voice", "audio", "document", "video_note"] as const

/**
 * The fields of a Telegram message its record is made of (`fromTelegram`), picked from `BotApi.Message`:
 * decoding only these costs half as much, which counts where every sent message is recorded.
 */
export const Recorded = BotApi.Message.pick(
  "message_id",
  "chat",
  "from",
  "sender_chat",
  "date",
  "edit_date",
  "text",
  "caption",
  "photo",
  "reply_to_message",
  ...mediaKinds
)
export type Recorded = typeof Recorded.Type

/** The media type and file id of a Telegram message: the largest photo size, animations before documents. */
export const mediaOf = (
  message: Pick<BotApi.Message, "photo" | typeof mediaKinds[number]>
): { readonly media_type: MediaType; readonly file_id: string } | undefined => {
  const photo = message.photo
  if (photo !== undefined && photo.length > 0) {
    const largest = photo.reduce((a, b) => area(b) > area(a) ? b : a)
    return { media_type: "photo", file_id: largest.file_id }
  }
  for (const kind of mediaKinds) {
    const media = message[kind]
    if (media !== undefined) return { media_type: kind, file_id: media.file_id }
  }
  return undefined
}

const area = (size: { readonly width: number; readonly height: number; readonly file_size?: number | undefined }) =>
  size.file_size ?? size.width * size.height

/** Our record of a Telegram message a bot received (`in`) or sent (`out`). */
export const fromTelegram = (botId: number, message: Recorded, direction: Direction): Message => {
  const sender = message.from
  const senderChat = message.sender_chat
  const media = mediaOf(message)
  return {
    id: message.message_id,
    chat_id: message.chat.id,
    bot_id: botId,
    user_id: sender?.id ?? senderChat?.id ?? 0,
    username: sender?.username ?? senderChat?.username ?? "",
    first_name: sender?.first_name ?? senderChat?.title ?? "",
    last_name: sender?.last_name ?? "",
    text: message.text ?? message.caption ?? "",
    date: message.date,
    ...media,
    ...(message.reply_to_message === undefined ? {} : { reply_to_message_id: message.reply_to_message.message_id }),
    direction,
    edit_date: message.edit_date ?? 0
  }
}
