import { BotApi } from "@botrelay/telegram"
import { Either, Schema } from "effect"
import { type ChatState, chatTypeOf } from "../domain/Chat.js"
import type { Message } from "../domain/Message.js"
import { fromTelegram } from "../domain/Message.js"
import {
  type BotState,
  type ChatMigration,
  type ChatSeen,
  isEmpty,
  type MemberLeft,
  type PersonSeen,
  type Reopen,
  type Sighting
} from "../domain/Sighting.js"

const decodeUpdate = Schema.decodeUnknownEither(BotApi.Update)

const messageKinds = [
  "message",
  "edited_message",
  "channel_post",
  "edited_channel_post",
  "business_message",
  "edited_business_message"
] as const

/** FNV-1a over the string, folded to 52 bits: stable across processes and restarts. */
const hash52 = (value: string): number => {
  let high = 0x811c9dc5
  let low = 0x050c5d1f
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    high = Math.imul(high ^ code, 0x01000193) >>> 0
    low = Math.imul(low ^ (code + i), 0x01000193) >>> 0
  }
  return (high & 0xfffff) * 0x100000000 + low
}

/**
 * The id of the synthetic message an inline-button press becomes: negative, so it never collides
 * with a real message id, and derived from the callback query id, so redelivery keeps it.
 */
export const callbackMessageId = (callbackQueryId: string): number => -(hash52(callbackQueryId) + 1)

const fromCallback = (botId: number, query: BotApi.CallbackQuery, date: number): Message => {
  const chatId = query.message?.chat.id ?? query.from.id
  return {
    id: callbackMessageId(query.id),
    chat_id: chatId,
    bot_id: botId,
    user_id: query.from.id,
    username: query.from.username ?? "",
    first_name: query.from.first_name,
    last_name: query.from.last_name ?? "",
    text: query.data ?? query.game_short_name ?? "",
    date,
    media_type: "callback",
    ...(query.message === undefined ? {} : { reply_to_message_id: query.message.message_id }),
    direction: "in",
    edit_date: 0
  }
}

/**
 * The messages an update adds to a bot's history: incoming, edited (replacing the stored text and
 * setting edit_date), channel and business messages, and button presses as `callback` messages.
 * `receivedAt` (Unix seconds) dates button presses, which carry no date of their own.
 */
export const messagesOf = (botId: number, payload: unknown, receivedAt: number): ReadonlyArray<Message> => {
  const decoded = decodeUpdate(payload)
  return Either.isLeft(decoded) ? [] : messagesOfUpdate(botId, decoded.right, receivedAt)
}

const messagesOfUpdate = (botId: number, update: BotApi.Update, receivedAt: number): ReadonlyArray<Message> => {
  const messages: Array<Message> = []
  for (const kind of messageKinds) {
    const message = update[kind]
    if (message !== undefined) messages.push(fromTelegram(botId, message, "in"))
  }
  if (update.callback_query !== undefined) messages.push(fromCallback(botId, update.callback_query, receivedAt))
  return messages
}

/** A chat as a sighting has it. */
export const chatSeen = (chat: BotApi.Chat, date: number): ChatSeen => ({
  chat_id: chat.id,
  type: chatTypeOf(chat.type, chat.id),
  title: chat.title ?? "",
  username: chat.username ?? "",
  first_name: chat.first_name ?? "",
  last_name: chat.last_name ?? "",
  date
})

const personSeen = (user: BotApi.User, chatId: number, date: number): PersonSeen => ({
  user_id: user.id,
  username: user.username ?? "",
  first_name: user.first_name,
  last_name: user.last_name ?? "",
  language_code: user.language_code ?? "",
  is_bot: user.is_bot,
  chat_id: chatId,
  date
})

/** The private chat with a user, as a sighting has it. */
const privateChatOf = (user: BotApi.User, date: number): ChatSeen => ({
  chat_id: user.id,
  type: "private",
  title: "",
  username: user.username ?? "",
  first_name: user.first_name,
  last_name: user.last_name ?? "",
  date
})

/** Whether a member status means the member is gone. */
const gone = (status: string) => status === "left" || status === "kicked"

const stateOf = (status: string): ChatState => status === "left" ? "left" : status === "kicked" ? "kicked" : "member"

/** Updates whose `from` is the user they tell of, with no chat. */
const fromKinds = ["inline_query", "chosen_inline_result", "shipping_query", "pre_checkout_query"] as const

const decodeFrom = Schema.decodeUnknownEither(Schema.Struct({ from: BotApi.User }))
const decodeJoinRequest = Schema.decodeUnknownEither(
  Schema.Struct({ chat: BotApi.Chat, from: BotApi.User, date: Schema.Int })
)
const decodeReaction = Schema.decodeUnknownEither(
  Schema.Struct({ chat: BotApi.Chat, user: Schema.optionalWith(BotApi.User, { exact: true }), date: Schema.Int })
)
const decodePollAnswer = Schema.decodeUnknownEither(Schema.Struct({ user: Schema.optionalWith(BotApi.User, { exact: true }) }))

/** What an update tells about chats and people; `botUserId` is the bot's own Telegram id. */
const sightingOfUpdate = (
  botId: number,
  botUserId: number,
  update: BotApi.Update,
  receivedAt: number
): Sighting | undefined => {
  const chats: Array<ChatSeen> = []
  const people: Array<PersonSeen> = []
  const left: Array<MemberLeft> = []
  const states: Array<BotState> = []
  const migrations: Array<ChatMigration> = []
  const reopens: Array<Reopen> = []
  const seeUser = (user: BotApi.User, chatId: number, date: number) => {
    if (user.id !== botUserId) people.push(personSeen(user, chatId, date))
  }
  for (const kind of messageKinds) {
    const message = update[kind]
    if (message === undefined) continue
    const chatId = message.chat.id
    const date = message.edit_date ?? message.date
    chats.push(chatSeen(message.chat, date))
    if (message.from !== undefined) seeUser(message.from, chatId, date)
    for (const user of message.new_chat_members ?? []) {
      if (user.id === botUserId) states.push({ chat_id: chatId, state: "member", date })
      else seeUser(user, chatId, date)
    }
    const leaving = message.left_chat_member
    if (leaving !== undefined) {
      if (leaving.id === botUserId) states.push({ chat_id: chatId, state: "left", date })
      else left.push({ chat_id: chatId, user_id: leaving.id, date })
    }
    if (message.migrate_to_chat_id !== undefined) {
      migrations.push({ from_chat_id: chatId, to_chat_id: message.migrate_to_chat_id })
    }
    if (message.migrate_from_chat_id !== undefined) {
      migrations.push({ from_chat_id: message.migrate_from_chat_id, to_chat_id: chatId })
    }
    if (
      !kind.startsWith("edited_") && message.from?.id !== botUserId &&
      message.migrate_to_chat_id === undefined && message.migrate_from_chat_id === undefined
    ) reopens.push({ chat_id: chatId, at: receivedAt })
  }
  const query = update.callback_query
  if (query !== undefined) {
    const chat = query.message?.chat
    chats.push(chat === undefined ? privateChatOf(query.from, receivedAt) : chatSeen(chat, receivedAt))
    seeUser(query.from, chat?.id ?? query.from.id, receivedAt)
    if (query.from.id !== botUserId) reopens.push({ chat_id: chat?.id ?? query.from.id, at: receivedAt })
  }
  const mine = update.my_chat_member
  if (mine !== undefined) {
    chats.push(chatSeen(mine.chat, mine.date))
    seeUser(mine.from, mine.chat.id, mine.date)
    states.push({ chat_id: mine.chat.id, state: stateOf(mine.new_chat_member.status), date: mine.date })
  }
  const member = update.chat_member
  if (member !== undefined) {
    const chatId = member.chat.id
    chats.push(chatSeen(member.chat, member.date))
    seeUser(member.from, chatId, member.date)
    const target = member.new_chat_member.user
    if (target.id === botUserId) {
      states.push({ chat_id: chatId, state: stateOf(member.new_chat_member.status), date: member.date })
    } else if (gone(member.new_chat_member.status)) {
      left.push({ chat_id: chatId, user_id: target.id, date: member.date })
    } else {
      seeUser(target, chatId, member.date)
    }
  }
  const raw = update as Readonly<Record<string, unknown>>
  for (const kind of fromKinds) {
    if (raw[kind] === undefined) continue
    const decoded = decodeFrom(raw[kind])
    if (Either.isRight(decoded)) seeUser(decoded.right.from, 0, receivedAt)
  }
  if (raw.chat_join_request !== undefined) {
    const request = decodeJoinRequest(raw.chat_join_request)
    if (Either.isRight(request)) {
      chats.push(chatSeen(request.right.chat, request.right.date))
      seeUser(request.right.from, 0, request.right.date)
    }
  }
  if (raw.message_reaction !== undefined) {
    const reaction = decodeReaction(raw.message_reaction)
    if (Either.isRight(reaction)) {
      chats.push(chatSeen(reaction.right.chat, reaction.right.date))
      if (reaction.right.user !== undefined) seeUser(reaction.right.user, reaction.right.chat.id, reaction.right.date)
    }
  }
  if (raw.poll_answer !== undefined) {
    const answer = decodePollAnswer(raw.poll_answer)
    if (Either.isRight(answer) && answer.right.user !== undefined) seeUser(answer.right.user, 0, receivedAt)
  }
  const sighting = { bot_id: botId, chats, people, left, states, migrations, reads: [], reopens }
  return isEmpty(sighting) ? undefined : sighting
}

/** What an update adds to a bot's history (`messagesOf`) and what it tells about chats and people. */
export interface Captured {
  readonly messages: ReadonlyArray<Message>
  /** Undefined when the update tells nothing about chats or people. */
  readonly sighting: Sighting | undefined
}

/**
 * The messages an update adds to a bot's history (`messagesOf`) and its sighting: the chats it shows
 * (kinds and names), the users in it (senders, button presses, inline queries, members joining), users
 * leaving, the bot's own membership (`my_chat_member`, the bot added or leaving), and migrations to a
 * supergroup (`migrate_to_chat_id` or `migrate_from_chat_id`). `botUserId` is the bot's own Telegram id,
 * never recorded as a person.
 */
export const captureOf = (botId: number, botUserId: number, payload: unknown, receivedAt: number): Captured => {
  const decoded = decodeUpdate(payload)
  if (Either.isLeft(decoded)) return { messages: [], sighting: undefined }
  return {
    messages: messagesOfUpdate(botId, decoded.right, receivedAt),
    sighting: sightingOfUpdate(botId, botUserId, decoded.right, receivedAt)
  }
}
