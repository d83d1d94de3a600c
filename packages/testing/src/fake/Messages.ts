import type { BotApi } from "@botrelay/telegram"
import { deleteRefusal } from "./Admin.js"
import { type Answer, badRequest, type Failure, isFailure, ok } from "./Answer.js"
import { audience, chatFor, history } from "./Chats.js"
import { recordSent } from "./Logs.js"
import { captionKinds } from "./MediaKinds.js"
import { asArray, asBool, asInt, asObject, asText, isEmpty, type Json, type Params } from "./Params.js"
import type { Bot, Handler, History, State } from "./State.js"
import type { UploadedFile } from "./Types.js"
import { pushUpdate } from "./Updates.js"

/** A message a bot may edit, and where it is kept. */
interface EditTarget {
  readonly chatHistory: History
  readonly id: number
  readonly current: BotApi.Message
}

/** Fields of a message that are about its place and history, not its content. */
const metaFields = new Set([
  "message_id", "message_thread_id", "business_connection_id", "from", "sender_chat", "sender_boost_count",
  "sender_business_bot", "chat", "date", "edit_date", "forward_origin", "forward_from", "forward_from_chat",
  "forward_from_message_id", "forward_signature", "forward_sender_name", "forward_date", "is_automatic_forward",
  "is_topic_message", "reply_to_message", "external_reply", "quote", "reply_to_story", "via_bot", "author_signature",
  "has_protected_content", "reply_markup"
])

const notModified = badRequest(
  "message is not modified: specified new message content and reply markup are exactly the same as a " +
    "current content and reply markup of the message"
)

/** A message as a reply shows it: without its own `reply_to_message`. */
export const withoutReply = (message: BotApi.Message): BotApi.Message => {
  const { reply_to_message: _, ...rest } = message
  return rest
}

const contentOf = (message: BotApi.Message): Json =>
  Object.fromEntries(Object.entries(message).filter(([key]) => !metaFields.has(key)))

/** The inline keyboard of a `reply_markup` parameter, as a sent message carries it. */
export const inlineKeyboard = (value: unknown): Json => {
  const keyboard = asObject(value)?.["inline_keyboard"]
  return Array.isArray(keyboard) ? { reply_markup: { inline_keyboard: keyboard } } : {}
}

const badParseMode = (value: unknown) => !isEmpty(value) && !["HTML", "MarkdownV2", "Markdown"].includes(asText(value))

/** The `caption` and `caption_entities` of a send, an album item or an edit. */
export const captionOf = (options: Params): Json | Failure => {
  if (badParseMode(options["parse_mode"])) return badRequest("unsupported parse_mode")
  const caption = asText(options["caption"])
  if (caption.length > 1024) return badRequest("message caption is too long")
  if (caption.trim() === "") return {}
  const entities = asArray(options["caption_entities"])
  return { caption, ...(entities === undefined || entities.length === 0 ? {} : { caption_entities: entities }) }
}

/** A new message by `bot` in `chat`, stored and recorded as sent; a channel's other bots get it as a post. */
export const post = (
  state: State,
  bot: Bot,
  chat: BotApi.Chat,
  content: Json,
  method: string,
  upload?: UploadedFile
): BotApi.Message => {
  const chatHistory = history(state, bot, chat)
  const message = {
    message_id: chatHistory.nextId++,
    ...(chat.type === "channel" ? { sender_chat: chat } : { from: bot.user }),
    chat,
    date: state.now(),
    ...content
  } as BotApi.Message
  chatHistory.messages.set(message.message_id, message)
  chatHistory.authors.set(message.message_id, bot.id)
  recordSent(state, { botId: bot.id, method, message, ...(upload === undefined ? {} : { upload }) })
  if (chat.type === "channel") {
    for (const member of audience(state, bot, chat)) {
      if (member !== bot) pushUpdate(state, member, { channel_post: message })
    }
  }
  return message
}

/** The message a send replies to, from `reply_parameters` or the legacy `reply_to_message_id`. */
export const replyTo = (state: State, bot: Bot, chat: BotApi.Chat, params: Params): Json | Failure => {
  const replyParameters = asObject(params["reply_parameters"])
  const id = asInt(replyParameters?.["message_id"] ?? params["reply_to_message_id"])
  if (id === undefined) return {}
  const replied = history(state, bot, chat).messages.get(id)
  if (replied !== undefined) return { reply_to_message: withoutReply(replied) }
  const allowWithoutReply = asBool(
    replyParameters?.["allow_sending_without_reply"] ?? params["allow_sending_without_reply"]
  )
  return allowWithoutReply ? {} : badRequest("message to be replied not found")
}

/** The message `from_chat_id`/`message_id` points at, for forwardMessage and copyMessage. */
const sourceMessage = (state: State, bot: Bot, params: Params, missing: string): BotApi.Message | Failure => {
  const chat = chatFor(state, bot, params["from_chat_id"], "read")
  if (isFailure(chat)) return chat
  const id = asInt(params["message_id"])
  if (id === undefined) return badRequest("message identifier is not specified")
  return history(state, bot, chat).messages.get(id) ?? badRequest(missing)
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

/** The bot's own message an edit names by `chat_id` and `message_id`. */
const editTarget = (state: State, bot: Bot, params: Params): EditTarget | Failure => {
  if (isEmpty(params["chat_id"]) && !isEmpty(params["inline_message_id"])) return badRequest("MESSAGE_ID_INVALID")
  const chat = chatFor(state, bot, params["chat_id"], "write")
  if (isFailure(chat)) return chat
  const id = asInt(params["message_id"])
  if (id === undefined) return badRequest("message identifier is not specified")
  const chatHistory = history(state, bot, chat)
  const current = chatHistory.messages.get(id)
  if (current === undefined) return badRequest("message to edit not found")
  if (chatHistory.authors.get(id) !== bot.id) return badRequest("message can't be edited")
  return { chatHistory, id, current }
}

/** Gives the message `next`'s values for `keys` (absent ones removed); "not modified" if none changes. */
const applyEdit = (state: State, target: EditTarget, next: Json, keys: ReadonlyArray<string>): Answer => {
  const current = target.current as unknown as Json
  if (keys.every((key) => JSON.stringify(next[key]) === JSON.stringify(current[key]))) return notModified
  const rest = Object.entries(current).filter(([key]) => !keys.includes(key) && key !== "edit_date")
  const edited = { ...Object.fromEntries(rest), ...next, edit_date: state.now() } as unknown as BotApi.Message
  target.chatHistory.messages.set(target.id, edited)
  return ok(edited)
}

/** The message methods: send, forward, copy, edit and delete. */
export const messageMethods = (state: State): Readonly<Record<string, Handler>> => ({
  sendMessage: (bot, params) => {
    if (isEmpty(params["chat_id"])) return badRequest("chat_id is empty")
    const text = asText(params["text"])
    if (text.trim() === "") return badRequest("message text is empty")
    if (text.length > 4096) return badRequest("message is too long")
    if (badParseMode(params["parse_mode"])) return badRequest("unsupported parse_mode")
    const chat = chatFor(state, bot, params["chat_id"], "write")
    if (isFailure(chat)) return chat
    const reply = replyTo(state, bot, chat, params)
    if (isFailure(reply)) return reply
    const entities = asArray(params["entities"])
    return ok(post(state, bot, chat, {
      ...reply,
      text,
      ...(entities === undefined || entities.length === 0 ? {} : { entities }),
      ...inlineKeyboard(params["reply_markup"])
    }, "sendMessage"))
  },
  forwardMessage: (bot, params) => {
    const chat = chatFor(state, bot, params["chat_id"], "write")
    if (isFailure(chat)) return chat
    const original = sourceMessage(state, bot, params, "message to forward not found")
    if (isFailure(original)) return original
    const origin = originOf(original)
    return ok(post(state, bot, chat, {
      ...legacyForward(origin),
      forward_origin: origin,
      ...contentOf(original)
    }, "forwardMessage"))
  },
  copyMessage: (bot, params) => {
    const chat = chatFor(state, bot, params["chat_id"], "write")
    if (isFailure(chat)) return chat
    const original = sourceMessage(state, bot, params, "message to copy not found")
    if (isFailure(original)) return original
    const reply = replyTo(state, bot, chat, params)
    if (isFailure(reply)) return reply
    const { caption: _, caption_entities: __, ...content } = contentOf(original)
    const caption = original.text === undefined && "caption" in params ? asText(params["caption"]) : original.caption
    const captionEntities = "caption" in params
      ? asArray(params["caption_entities"])
      : original.caption_entities
    const message = post(state, bot, chat, {
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
  editMessageText: (bot, params) => {
    const text = asText(params["text"])
    if (text.trim() === "") return badRequest("message text is empty")
    if (text.length > 4096) return badRequest("message is too long")
    const target = editTarget(state, bot, params)
    if (isFailure(target)) return target
    if (target.current.text === undefined) return badRequest("there is no text in the message to edit")
    const entities = asArray(params["entities"])
    return applyEdit(state, target, {
      text,
      ...(entities === undefined || entities.length === 0 ? {} : { entities }),
      ...inlineKeyboard(params["reply_markup"])
    }, ["text", "entities", "reply_markup"])
  },
  editMessageCaption: (bot, params) => {
    const caption = captionOf(params)
    if (isFailure(caption)) return caption
    const target = editTarget(state, bot, params)
    if (isFailure(target)) return target
    if (!captionKinds.some((kind) => target.current[kind] !== undefined)) {
      return badRequest("there is no caption in the message to edit")
    }
    return applyEdit(
      state,
      target,
      { ...caption, ...inlineKeyboard(params["reply_markup"]) },
      ["caption", "caption_entities", "reply_markup"]
    )
  },
  editMessageReplyMarkup: (bot, params) => {
    const target = editTarget(state, bot, params)
    return isFailure(target)
      ? target
      : applyEdit(state, target, inlineKeyboard(params["reply_markup"]), ["reply_markup"])
  },
  deleteMessage: (bot, params) => {
    const chat = chatFor(state, bot, params["chat_id"], "read")
    if (isFailure(chat)) return chat
    const id = asInt(params["message_id"])
    if (id === undefined) return badRequest("message identifier is not specified")
    const chatHistory = history(state, bot, chat)
    if (!chatHistory.messages.has(id)) return badRequest("message to delete not found")
    const refusal = deleteRefusal(state, bot, chat, chatHistory.authors.get(id))
    if (refusal !== undefined) return refusal
    chatHistory.messages.delete(id)
    chatHistory.authors.delete(id)
    const pinned = chatHistory.pinned.indexOf(id)
    if (pinned >= 0) chatHistory.pinned.splice(pinned, 1)
    return ok(true)
  }
})
