import { Schema } from "effect"

/**
 * Decoding keeps fields this module does not declare: Telegram adds fields all the time, and
 * updates are forwarded to backends as Telegram sent them.
 */
const lenient = { parseOptions: { onExcessProperty: "preserve" } } as const

const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** A Telegram user or bot. */
export const User = Schema.Struct({
  id: Schema.Int,
  is_bot: Schema.Boolean,
  first_name: Schema.String,
  last_name: optional(Schema.String),
  username: optional(Schema.String),
  language_code: optional(Schema.String),
  is_premium: optional(Schema.Boolean),
  can_join_groups: optional(Schema.Boolean),
  can_read_all_group_messages: optional(Schema.Boolean),
  supports_inline_queries: optional(Schema.Boolean),
  can_connect_to_business: optional(Schema.Boolean),
  has_main_web_app: optional(Schema.Boolean)
}).annotations({ identifier: "User", ...lenient })
export type User = typeof User.Type

/** `private`, `group`, `supergroup` or `channel`; kept open so a new kind never fails a decode. */
export const ChatType = Schema.String
export type ChatType = typeof ChatType.Type

/** A chat as messages carry it. */
export const Chat = Schema.Struct({
  id: Schema.Int,
  type: ChatType,
  title: optional(Schema.String),
  username: optional(Schema.String),
  first_name: optional(Schema.String),
  last_name: optional(Schema.String),
  is_forum: optional(Schema.Boolean)
}).annotations({ identifier: "Chat", ...lenient })
export type Chat = typeof Chat.Type

/** A special entity in a text (mention, link, bold...). `type` is open: Telegram adds kinds. */
export const MessageEntity = Schema.Struct({
  type: Schema.String,
  offset: Schema.Int,
  length: Schema.Int,
  url: optional(Schema.String),
  user: optional(User),
  language: optional(Schema.String),
  custom_emoji_id: optional(Schema.String)
}).annotations({ identifier: "MessageEntity", ...lenient })
export type MessageEntity = typeof MessageEntity.Type

/** One size of a photo or a thumbnail. */
export const PhotoSize = Schema.Struct({
  file_id: Schema.String,
  file_unique_id: Schema.String,
  width: Schema.Int,
  height: Schema.Int,
  file_size: optional(Schema.Number)
}).annotations({ identifier: "PhotoSize", ...lenient })
export type PhotoSize = typeof PhotoSize.Type

const fileFields = {
  file_id: Schema.String,
  file_unique_id: Schema.String,
  file_size: optional(Schema.Number)
}

const documentFields = {
  ...fileFields,
  thumbnail: optional(PhotoSize),
  file_name: optional(Schema.String),
  mime_type: optional(Schema.String)
}

/** A video file. */
export const Video = Schema.Struct({
  ...documentFields,
  width: Schema.Int,
  height: Schema.Int,
  duration: Schema.Int
}).annotations({ identifier: "Video", ...lenient })
export type Video = typeof Video.Type

/** A GIF or an H.264/MPEG-4 AVC video without sound. */
export const Animation = Schema.Struct({
  ...documentFields,
  width: Schema.Int,
  height: Schema.Int,
  duration: Schema.Int
}).annotations({ identifier: "Animation", ...lenient })
export type Animation = typeof Animation.Type

/** A sticker. */
export const Sticker = Schema.Struct({
  ...fileFields,
  type: Schema.String,
  width: Schema.Int,
  height: Schema.Int,
  is_animated: Schema.Boolean,
  is_video: Schema.Boolean,
  thumbnail: optional(PhotoSize),
  emoji: optional(Schema.String),
  set_name: optional(Schema.String)
}).annotations({ identifier: "Sticker", ...lenient })
export type Sticker = typeof Sticker.Type

/** A voice note. */
export const Voice = Schema.Struct({
  ...fileFields,
  duration: Schema.Int,
  mime_type: optional(Schema.String)
}).annotations({ identifier: "Voice", ...lenient })
export type Voice = typeof Voice.Type

/** An audio file to be treated as music. */
export const Audio = Schema.Struct({
  ...documentFields,
  duration: Schema.Int,
  performer: optional(Schema.String),
  title: optional(Schema.String)
}).annotations({ identifier: "Audio", ...lenient })
export type Audio = typeof Audio.Type

/** A general file. */
export const Document = Schema.Struct(documentFields).annotations({ identifier: "Document", ...lenient })
export type Document = typeof Document.Type

/** A round video message. */
export const VideoNote = Schema.Struct({
  ...fileFields,
  length: Schema.Int,
  duration: Schema.Int,
  thumbnail: optional(PhotoSize)
}).annotations({ identifier: "VideoNote", ...lenient })
export type VideoNote = typeof VideoNote.Type

const messageFields = {
  message_id: Schema.Int,
  message_thread_id: optional(Schema.Int),
  business_connection_id: optional(Schema.String),
  from: optional(User),
  sender_chat: optional(Chat),
  chat: Chat,
  date: Schema.Int,
  edit_date: optional(Schema.Int),
  media_group_id: optional(Schema.String),
  author_signature: optional(Schema.String),
  via_bot: optional(User),
  text: optional(Schema.String),
  entities: optional(Schema.Array(MessageEntity)),
  caption: optional(Schema.String),
  caption_entities: optional(Schema.Array(MessageEntity)),
  photo: optional(Schema.Array(PhotoSize)),
  video: optional(Video),
  animation: optional(Animation),
  sticker: optional(Sticker),
  voice: optional(Voice),
  audio: optional(Audio),
  document: optional(Document),
  video_note: optional(VideoNote)
}

/** A message; `reply_to_message` nests one level in practice. */
export interface Message extends Schema.Struct.Type<typeof messageFields> {
  readonly reply_to_message?: Message
}

/** The JSON form of a `Message`. */
export interface MessageEncoded extends Schema.Struct.Encoded<typeof messageFields> {
  readonly reply_to_message?: MessageEncoded
}

/** A message. */
export const Message = Schema.Struct({
  ...messageFields,
  reply_to_message: optional(Schema.suspend((): Schema.Schema<Message, MessageEncoded> => Message))
}).annotations({ identifier: "Message", ...lenient })

/** A press of an inline keyboard button. `message` is absent for inline-mode messages. */
export const CallbackQuery = Schema.Struct({
  id: Schema.String,
  from: User,
  message: optional(Message),
  inline_message_id: optional(Schema.String),
  chat_instance: Schema.String,
  data: optional(Schema.String),
  game_short_name: optional(Schema.String)
}).annotations({ identifier: "CallbackQuery", ...lenient })
export type CallbackQuery = typeof CallbackQuery.Type

/** An incoming update. Kinds not declared here are kept as they came. */
export const Update = Schema.Struct({
  update_id: Schema.Int,
  message: optional(Message),
  edited_message: optional(Message),
  channel_post: optional(Message),
  edited_channel_post: optional(Message),
  business_message: optional(Message),
  edited_business_message: optional(Message),
  callback_query: optional(CallbackQuery)
}).annotations({ identifier: "Update", ...lenient })
export type Update = typeof Update.Type

/** How Telegram parses formatting in a text. */
export const ParseMode = Schema.Literal("HTML", "MarkdownV2", "Markdown")
export type ParseMode = typeof ParseMode.Type

/** What a sent message replies to. */
export const ReplyParameters = Schema.Struct({
  message_id: Schema.Int,
  chat_id: optional(Schema.Union(Schema.Int, Schema.String)),
  allow_sending_without_reply: optional(Schema.Boolean),
  quote: optional(Schema.String),
  quote_parse_mode: optional(ParseMode),
  quote_entities: optional(Schema.Array(MessageEntity)),
  quote_position: optional(Schema.Int)
}).annotations({ identifier: "ReplyParameters", ...lenient })
export type ReplyParameters = typeof ReplyParameters.Type

/** Link preview generation options. */
export const LinkPreviewOptions = Schema.Struct({
  is_disabled: optional(Schema.Boolean),
  url: optional(Schema.String),
  prefer_small_media: optional(Schema.Boolean),
  prefer_large_media: optional(Schema.Boolean),
  show_above_text: optional(Schema.Boolean)
}).annotations({ identifier: "LinkPreviewOptions", ...lenient })
export type LinkPreviewOptions = typeof LinkPreviewOptions.Type

/** Parameters of `sendMessage`. `chat_id` is a numeric id or `@channelusername`. */
export const SendMessageParams = Schema.Struct({
  business_connection_id: optional(Schema.String),
  chat_id: Schema.Union(Schema.Int, Schema.String),
  message_thread_id: optional(Schema.Int),
  text: Schema.String,
  parse_mode: optional(ParseMode),
  entities: optional(Schema.Array(MessageEntity)),
  link_preview_options: optional(LinkPreviewOptions),
  disable_notification: optional(Schema.Boolean),
  protect_content: optional(Schema.Boolean),
  allow_paid_broadcast: optional(Schema.Boolean),
  message_effect_id: optional(Schema.String),
  reply_parameters: optional(ReplyParameters),
  reply_markup: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "SendMessageParams", ...lenient })
export type SendMessageParams = typeof SendMessageParams.Type

/** Extra information Telegram attaches to some errors. */
export const ResponseParameters = Schema.Struct({
  migrate_to_chat_id: optional(Schema.Int),
  retry_after: optional(Schema.Number)
}).annotations({ identifier: "ResponseParameters", ...lenient })
export type ResponseParameters = typeof ResponseParameters.Type

/** A successful answer: `{ ok: true, result }`. */
export const ApiSuccess = <A, I, R>(result: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    ok: Schema.Literal(true),
    result,
    description: optional(Schema.String)
  }).annotations(lenient)

/** A failed answer: `{ ok: false, error_code, description, parameters? }`. */
export const ApiFailure = Schema.Struct({
  ok: Schema.Literal(false),
  error_code: Schema.Int,
  description: Schema.String,
  parameters: optional(ResponseParameters)
}).annotations({ identifier: "ApiFailure", ...lenient })
export type ApiFailure = typeof ApiFailure.Type

/** The envelope of every Bot API answer. */
export const ApiResponse = <A, I, R>(result: Schema.Schema<A, I, R>) => Schema.Union(ApiSuccess(result), ApiFailure)
