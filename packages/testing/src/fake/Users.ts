import type { BotApi } from "@botrelay/telegram"
import { badRequest, ok } from "./Answer.js"
import { addUser, audience, groupOf, history, privateChat } from "./Chats.js"
import { addFile, fileFields, photoSizes } from "./Files.js"
import { fileTypeFor } from "./MediaKinds.js"
import { withoutReply } from "./Messages.js"
import { asText, type Json } from "./Params.js"
import { botOf, type Handler, type State } from "./State.js"
import type { UserMessage, UserPhoto } from "./Types.js"
import { pushUpdate } from "./Updates.js"

const queryTooOld = badRequest("query is too old and response timeout expired or query ID is invalid")

const commandEntities = (text: string): Json => {
  const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text)
  return command === null ? {} : { entities: [{ offset: 0, length: command[0].length, type: "bot_command" }] }
}

const testUser = (state: State) =>
  (state.defaultUser ??= addUser(state, { first_name: "Test", username: "test_user" }))

/** The chat and sender of a user's message. */
const userContext = (
  state: State,
  options: UserMessage
): { readonly user: BotApi.User; readonly chat: BotApi.Chat } => {
  const chatId = typeof options.chat === "object" ? options.chat.id : options.chat
  const person = chatId === undefined ? undefined : state.people.get(chatId)
  const user = options.user ?? person?.user ?? testUser(state)
  if (chatId === undefined || person !== undefined) return { user, chat: privateChat(person?.user ?? user) }
  const group = groupOf(state, chatId)
  if (group.chat.type === "channel") throw new Error("FakeTelegram: users cannot write to a channel; use channelPost")
  return { user, chat: group.chat }
}

/** A document as a user sends one: a file of the declared size, whose bytes are made only when downloaded. */
const userDocument = (state: State, document: NonNullable<UserMessage["document"]>): Json => {
  const file_name = document.file_name ?? "document.bin"
  const type = fileTypeFor("document", file_name, document.mime_type)
  const file = addFile(state, "document", document.file_size ?? 30_000, type)
  const field = { file_name, mime_type: file.mime_type, ...fileFields(file) }
  state.mediaOf.set(file.file_id, field)
  return field
}

/** A user's photo: three generated sizes, or one of the bytes given. */
const userPhoto = (state: State, photo: true | UserPhoto): ReadonlyArray<BotApi.PhotoSize> => {
  if (photo === true) return photoSizes(state)
  const file = addFile(state, "photo", Buffer.from(photo.bytes))
  const sizes = [{ ...fileFields(file), width: photo.width, height: photo.height }]
  state.mediaOf.set(file.file_id, sizes)
  return sizes
}

/** A user writes to a bot; the `message` update goes to that bot, or to every bot in the group. */
export const userSends = (state: State, botId: number, options: UserMessage): BotApi.Message => {
  const bot = botOf(state, botId)
  const { chat, user } = userContext(state, options)
  const recipients = audience(state, bot, chat)
  const photo = options.photo === undefined || options.photo === false ? undefined : options.photo
  const media = photo !== undefined || options.document !== undefined
  if (media && options.text !== undefined) {
    throw new Error("FakeTelegram: a photo or document message takes a caption, not a text")
  }
  if (!media && (options.text === undefined || options.text === "")) {
    throw new Error("FakeTelegram: userSends needs a text, a photo or a document")
  }
  const person = state.people.get(chat.id)
  if (person !== undefined && person.started !== "all") person.started.add(bot.id)
  if (chat.type !== "private") groupOf(state, chat.id).users.add(user.id)
  const chatHistory = history(state, bot, chat)
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
    date: state.now(),
    ...reply,
    ...(media
      ? {
        ...(photo === undefined ? { document: userDocument(state, options.document!) } : { photo: userPhoto(state, photo) }),
        ...(options.caption === undefined ? {} : { caption: options.caption }),
        ...(options.entities === undefined ? {} : { caption_entities: options.entities })
      }
      : {
        text: options.text,
        ...(options.entities === undefined ? commandEntities(options.text!) : { entities: options.entities })
      })
  } as BotApi.Message
  chatHistory.messages.set(message.message_id, message)
  for (const recipient of recipients) pushUpdate(state, recipient, { message })
  return message
}

/** A user edits their message; an `edited_message` update goes to the bot (every bot in a group). */
export const userEdits = (
  state: State,
  botId: number,
  chatId: number,
  messageId: number,
  text: string
): BotApi.Message => {
  const bot = botOf(state, botId)
  const { chat } = userContext(state, { chat: chatId })
  const recipients = audience(state, bot, chat)
  const chatHistory = history(state, bot, chat)
  const current = chatHistory.messages.get(messageId)
  if (current === undefined || chatHistory.authors.has(messageId) || current.text === undefined) {
    throw new Error(`FakeTelegram: no text message ${messageId} of a user in chat ${chatId}`)
  }
  const { entities: _, ...rest } = current
  const edited = { ...rest, text, ...commandEntities(text), edit_date: state.now() } as BotApi.Message
  chatHistory.messages.set(messageId, edited)
  for (const recipient of recipients) pushUpdate(state, recipient, { edited_message: edited })
  return edited
}

/** A post in a channel; a `channel_post` update goes to every bot in it. */
export const channelPost = (state: State, botId: number, chatId: number, text: string): BotApi.Message => {
  const bot = botOf(state, botId)
  const group = groupOf(state, chatId)
  if (group.chat.type !== "channel") throw new Error(`FakeTelegram: chat ${chatId} is not a channel`)
  const recipients = audience(state, bot, group.chat)
  const chatHistory = history(state, bot, group.chat)
  const message = {
    message_id: chatHistory.nextId++,
    sender_chat: group.chat,
    chat: group.chat,
    date: state.now(),
    text
  } as BotApi.Message
  chatHistory.messages.set(message.message_id, message)
  for (const recipient of recipients) pushUpdate(state, recipient, { channel_post: message })
  return message
}

/** A user presses an inline button of `message`; a `callback_query` update goes to the bot. */
export const userPresses = (
  state: State,
  botId: number,
  message: BotApi.Message,
  data: string,
  options: { readonly user?: BotApi.User }
): BotApi.CallbackQuery => {
  const bot = botOf(state, botId)
  const current = history(state, bot, message.chat).messages.get(message.message_id) ?? message
  const user = options.user ?? state.people.get(message.chat.id)?.user ?? testUser(state)
  const query: BotApi.CallbackQuery = {
    id: `${state.queryPrefix}${String(state.nextQuery++).padStart(13, "0")}`,
    from: user,
    message: current,
    chat_instance: String(-(5_000_000_000_000_000 + Math.abs(message.chat.id))),
    data
  }
  state.callbacks.set(query.id, { botId: bot.id, answered: false })
  pushUpdate(state, bot, { callback_query: query })
  return query
}

/** The callback query methods. */
export const callbackMethods = (state: State): Readonly<Record<string, Handler>> => ({
  answerCallbackQuery: (bot, params) => {
    const query = state.callbacks.get(asText(params["callback_query_id"]))
    if (query === undefined || query.botId !== bot.id || query.answered) return queryTooOld
    if (asText(params["text"]).length > 200) return badRequest("MESSAGE_TOO_LONG")
    query.answered = true
    return ok(true)
  }
})
