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

/** A button of an inline keyboard. */
export const InlineKeyboardButton = Schema.Struct({
  text: Schema.String,
  url: optional(Schema.String),
  callback_data: optional(Schema.String)
}).annotations({ identifier: "InlineKeyboardButton", ...lenient })
export type InlineKeyboardButton = typeof InlineKeyboardButton.Type

/** An inline keyboard attached to a message. */
export const InlineKeyboardMarkup = Schema.Struct({
  inline_keyboard: Schema.Array(Schema.Array(InlineKeyboardButton))
}).annotations({ identifier: "InlineKeyboardMarkup", ...lenient })
export type InlineKeyboardMarkup = typeof InlineKeyboardMarkup.Type

/**
 * Where a forwarded message came from. `type` is `user`, `hidden_user`, `chat` or `channel`; the
 * other fields depend on it.
 */
export const MessageOrigin = Schema.Struct({
  type: Schema.String,
  date: Schema.Int,
  sender_user: optional(User),
  sender_user_name: optional(Schema.String),
  sender_chat: optional(Chat),
  chat: optional(Chat),
  message_id: optional(Schema.Int),
  author_signature: optional(Schema.String)
}).annotations({ identifier: "MessageOrigin", ...lenient })
export type MessageOrigin = typeof MessageOrigin.Type

const messageFields = {
  message_id: Schema.Int,
  message_thread_id: optional(Schema.Int),
  business_connection_id: optional(Schema.String),
  from: optional(User),
  sender_chat: optional(Chat),
  chat: Chat,
  date: Schema.Int,
  forward_origin: optional(MessageOrigin),
  is_automatic_forward: optional(Schema.Boolean),
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
  video_note: optional(VideoNote),
  reply_markup: optional(InlineKeyboardMarkup),
  new_chat_members: optional(Schema.Array(User)),
  left_chat_member: optional(User),
  new_chat_title: optional(Schema.String),
  migrate_to_chat_id: optional(Schema.Int),
  migrate_from_chat_id: optional(Schema.Int)
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

/** A member of a chat; `status` is `creator`, `administrator`, `member`, `restricted`, `left` or `kicked`. */
export const ChatMember = Schema.Struct({
  status: Schema.String,
  user: User
}).annotations({ identifier: "ChatMember", ...lenient })
export type ChatMember = typeof ChatMember.Type

/** A change of a member's status in a chat, e.g. the bot added to or removed from a group. */
export const ChatMemberUpdated = Schema.Struct({
  chat: Chat,
  from: User,
  date: Schema.Int,
  old_chat_member: ChatMember,
  new_chat_member: ChatMember
}).annotations({ identifier: "ChatMemberUpdated", ...lenient })
export type ChatMemberUpdated = typeof ChatMemberUpdated.Type

/** An incoming update. Kinds not declared here are kept as they came. */
export const Update = Schema.Struct({
  update_id: Schema.Int,
  message: optional(Message),
  edited_message: optional(Message),
  channel_post: optional(Message),
  edited_channel_post: optional(Message),
  business_message: optional(Message),
  edited_business_message: optional(Message),
  callback_query: optional(CallbackQuery),
  my_chat_member: optional(ChatMemberUpdated),
  chat_member: optional(ChatMemberUpdated)
}).annotations({ identifier: "Update", ...lenient })
export type Update = typeof Update.Type

/** The kinds of update Telegram sends, as `allowed_updates` names them. */
export const updateTypes = [
  "message",
  "edited_message",
  "channel_post",
  "edited_channel_post",
  "business_connection",
  "business_message",
  "edited_business_message",
  "deleted_business_messages",
  "message_reaction",
  "message_reaction_count",
  "inline_query",
  "chosen_inline_result",
  "callback_query",
  "shipping_query",
  "pre_checkout_query",
  "purchased_paid_media",
  "poll",
  "poll_answer",
  "my_chat_member",
  "chat_member",
  "chat_join_request",
  "chat_boost",
  "removed_chat_boost"
] as const

/** Kinds sent only when `allowed_updates` names them: an empty or absent list means every other kind. */
export const optInUpdateTypes: ReadonlyArray<string> = ["chat_member", "message_reaction", "message_reaction_count"]

/** An update's kind: its first field other than `update_id`. Kept open, as Telegram adds kinds. */
export const UpdateType = Schema.String
export type UpdateType = typeof UpdateType.Type

/** The kind of an update object (`message`, `callback_query`...), or undefined when it has none. */
export const updateType = (update: Readonly<Record<string, unknown>>): string | undefined =>
  Object.keys(update).find((key) => key !== "update_id")

/**
 * An update as `getUpdates` returned it: `update_id` decoded, and `payload`, the update's JSON text
 * exactly as it appeared in Telegram's answer, for storing and forwarding unchanged.
 */
export const RawUpdate = Schema.Struct({
  update_id: Schema.Int,
  payload: Schema.String
}).annotations({ identifier: "RawUpdate" })
export type RawUpdate = typeof RawUpdate.Type

/** The state of a bot's webhook. */
export const WebhookInfo = Schema.Struct({
  url: Schema.String,
  has_custom_certificate: Schema.Boolean,
  pending_update_count: Schema.Int,
  ip_address: optional(Schema.String),
  last_error_date: optional(Schema.Int),
  last_error_message: optional(Schema.String),
  last_synchronization_error_date: optional(Schema.Int),
  max_connections: optional(Schema.Int),
  allowed_updates: optional(Schema.Array(UpdateType))
}).annotations({ identifier: "WebhookInfo", ...lenient })
export type WebhookInfo = typeof WebhookInfo.Type

/** A file ready to download from `<apiRoot>/file/bot<token>/<file_path>` (for about an hour). */
export const File = Schema.Struct({
  file_id: Schema.String,
  file_unique_id: Schema.String,
  file_size: optional(Schema.Number),
  file_path: optional(Schema.String)
}).annotations({ identifier: "File", ...lenient })
export type File = typeof File.Type

/** The id of a message, as `copyMessage` returns it. */
export const MessageId = Schema.Struct({
  message_id: Schema.Int
}).annotations({ identifier: "MessageId", ...lenient })
export type MessageId = typeof MessageId.Type

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

const ChatId = Schema.Union(Schema.Int, Schema.String)
const Markup = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Parameters of `getUpdates`. `timeout` is in seconds; `allowed_updates`, when left out, keeps the previous list. */
export const GetUpdatesParams = Schema.Struct({
  offset: optional(Schema.Int),
  limit: optional(Schema.Int),
  timeout: optional(Schema.Int),
  allowed_updates: optional(Schema.Array(UpdateType))
}).annotations({ identifier: "GetUpdatesParams" })
export type GetUpdatesParams = typeof GetUpdatesParams.Type

/** Parameters of `setWebhook`. The secret is sent in `X-Telegram-Bot-Api-Secret-Token` (1-256 of `A-Za-z0-9_-`). */
export const SetWebhookParams = Schema.Struct({
  url: Schema.String,
  secret_token: optional(Schema.Redacted(Schema.String)),
  allowed_updates: optional(Schema.Array(UpdateType)),
  drop_pending_updates: optional(Schema.Boolean),
  max_connections: optional(Schema.Int),
  ip_address: optional(Schema.String)
}).annotations({ identifier: "SetWebhookParams" })
export type SetWebhookParams = typeof SetWebhookParams.Type

/** Parameters of `deleteWebhook`. */
export const DeleteWebhookParams = Schema.Struct({
  drop_pending_updates: optional(Schema.Boolean)
}).annotations({ identifier: "DeleteWebhookParams" })
export type DeleteWebhookParams = typeof DeleteWebhookParams.Type

/** Parameters of `forwardMessage`. */
export const ForwardMessageParams = Schema.Struct({
  chat_id: ChatId,
  message_thread_id: optional(Schema.Int),
  from_chat_id: ChatId,
  message_id: Schema.Int,
  video_start_timestamp: optional(Schema.Int),
  disable_notification: optional(Schema.Boolean),
  protect_content: optional(Schema.Boolean)
}).annotations({ identifier: "ForwardMessageParams", ...lenient })
export type ForwardMessageParams = typeof ForwardMessageParams.Type

/** Parameters of `copyMessage`. */
export const CopyMessageParams = Schema.Struct({
  chat_id: ChatId,
  message_thread_id: optional(Schema.Int),
  from_chat_id: ChatId,
  message_id: Schema.Int,
  video_start_timestamp: optional(Schema.Int),
  caption: optional(Schema.String),
  parse_mode: optional(ParseMode),
  caption_entities: optional(Schema.Array(MessageEntity)),
  show_caption_above_media: optional(Schema.Boolean),
  disable_notification: optional(Schema.Boolean),
  protect_content: optional(Schema.Boolean),
  allow_paid_broadcast: optional(Schema.Boolean),
  reply_parameters: optional(ReplyParameters),
  reply_markup: optional(Markup)
}).annotations({ identifier: "CopyMessageParams", ...lenient })
export type CopyMessageParams = typeof CopyMessageParams.Type

/** Parameters of `editMessageText`: `chat_id` and `message_id`, or `inline_message_id`. */
export const EditMessageTextParams = Schema.Struct({
  business_connection_id: optional(Schema.String),
  chat_id: optional(ChatId),
  message_id: optional(Schema.Int),
  inline_message_id: optional(Schema.String),
  text: Schema.String,
  parse_mode: optional(ParseMode),
  entities: optional(Schema.Array(MessageEntity)),
  link_preview_options: optional(LinkPreviewOptions),
  reply_markup: optional(Markup)
}).annotations({ identifier: "EditMessageTextParams", ...lenient })
export type EditMessageTextParams = typeof EditMessageTextParams.Type

/** Parameters of `deleteMessage`. */
export const DeleteMessageParams = Schema.Struct({
  chat_id: ChatId,
  message_id: Schema.Int
}).annotations({ identifier: "DeleteMessageParams", ...lenient })
export type DeleteMessageParams = typeof DeleteMessageParams.Type

/** Parameters of `answerCallbackQuery`. */
export const AnswerCallbackQueryParams = Schema.Struct({
  callback_query_id: Schema.String,
  text: optional(Schema.String),
  show_alert: optional(Schema.Boolean),
  url: optional(Schema.String),
  cache_time: optional(Schema.Int)
}).annotations({ identifier: "AnswerCallbackQueryParams", ...lenient })
export type AnswerCallbackQueryParams = typeof AnswerCallbackQueryParams.Type

/** Parameters of `getFile`. */
export const GetFileParams = Schema.Struct({
  file_id: Schema.String
}).annotations({ identifier: "GetFileParams", ...lenient })
export type GetFileParams = typeof GetFileParams.Type

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
