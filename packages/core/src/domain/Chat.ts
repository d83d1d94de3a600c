import { Either, Schema } from "effect"
import { Tag } from "./ChatTag.js"
import { Message } from "./Message.js"

/** The kind of a chat, as Telegram names it. */
export const ChatType = Schema.Literal("private", "group", "supergroup", "channel")
export type ChatType = typeof ChatType.Type

/** Whether the bot is in the chat: `left` it, was removed (`kicked`), or is a `member` (also for private chats). */
export const ChatState = Schema.Literal("member", "left", "kicked")
export type ChatState = typeof ChatState.Type

/**
 * A chat a bot keeps history of, with its unread count and last message. `tags` are those of the private
 * chat's user (none for groups and channels); `state` tells whether the bot is still in the chat.
 */
export const Chat = Schema.Struct({
  bot_id: Schema.Int,
  chat_id: Schema.Int,
  type: ChatType,
  title: Schema.String,
  username: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  last_message: Schema.NullOr(Message),
  /** Unix seconds of the last message; 0 before the first. */
  last_message_at: Schema.Int,
  unread_count: Schema.Int,
  message_count: Schema.Int,
  /** 0 until known (`POST /api/chats/refresh`). */
  member_count: Schema.Int,
  tags: Schema.Array(Tag),
  state: ChatState,
  /** False once a send failed because the person blocked the bot, was deactivated or never started it. */
  reachable: Schema.Boolean,
  /** Unix seconds since the chat is unreachable; 0 while reachable. */
  unreachable_since: Schema.Int,
  /** Telegram's reason the chat is unreachable; "" while reachable. */
  unreachable_reason: Schema.String
}).annotations({ identifier: "Chat" })
export type Chat = typeof Chat.Type

/** A page of chats: `next_cursor` continues it, null on the last page. */
export const ChatPage = Schema.Struct({
  items: Schema.Array(Chat),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ChatPage" })
export type ChatPage = typeof ChatPage.Type

/** What Telegram says about a chat: its kind and names. */
export interface ChatInfo {
  readonly type: ChatType
  readonly title: string
  readonly username: string
  readonly first_name: string
  readonly last_name: string
}

/** The largest page of a list of chats or people. */
export const maxPageSize = 200

/**
 * The kind a chat id implies when nothing else says: users' ids are positive, supergroups' and channels'
 * start at -1000000000000 (a channel is told apart only by what Telegram says of it).
 */
export const typeOfId = (chatId: number): ChatType =>
  chatId > 0 ? "private" : chatId <= -1_000_000_000_000 ? "supergroup" : "group"

/** Telegram's chat type as ours; a kind we do not know is taken from the id. */
export const chatTypeOf = (type: string, chatId: number): ChatType =>
  type === "private" || type === "group" || type === "supergroup" || type === "channel" ? type : typeOfId(chatId)

/** How a chat is named in lists: its title, else the user's name, else `@username`. */
export const displayTitle = (chat: Pick<ChatInfo, "title" | "first_name" | "last_name" | "username">): string => {
  if (chat.title !== "") return chat.title
  const name = `${chat.first_name} ${chat.last_name}`.trim()
  if (name !== "") return name
  return chat.username === "" ? "" : `@${chat.username}`
}

/** Where a page of chats starts: after this chat in the list order (newest activity first). */
export interface ChatCursor {
  readonly last_message_at: number
  readonly bot_id: number
  readonly chat_id: number
}

/** A query of chats, newest activity first (last_message_at desc, then bot_id, chat_id desc). */
export interface ChatQuery {
  /** The bots whose chats are listed. */
  readonly bot_ids: ReadonlyArray<number>
  /** Lower-case text the title, username or names must contain. */
  readonly q?: string | undefined
  readonly type?: ChatType | undefined
  /** Only chats with unread messages. */
  readonly unread?: boolean | undefined
  readonly limit: number
  readonly after?: ChatCursor | undefined
}

/** The opaque text of a cursor: base64url of the sort key's numbers. */
export const encodeCursor = (key: ReadonlyArray<number>): string =>
  btoa(JSON.stringify(key)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")

/** The `length` numbers of a cursor `encodeCursor` made; Left with a sentence when it is not one. */
export const decodeCursor = (cursor: string, length: number): Either.Either<ReadonlyArray<number>, string> => {
  const invalid = Either.left("cursor must be a next_cursor this endpoint returned")
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return invalid
  try {
    const parsed: unknown = JSON.parse(atob(cursor.replace(/-/g, "+").replace(/_/g, "/")))
    return Array.isArray(parsed) && parsed.length === length && parsed.every(Number.isSafeInteger)
      ? Either.right(parsed as ReadonlyArray<number>)
      : invalid
  } catch {
    return invalid
  }
}

/** The cursor after a chat. */
export const chatCursor = (chat: Pick<Chat, "last_message_at" | "bot_id" | "chat_id">): string =>
  encodeCursor([chat.last_message_at, chat.bot_id, chat.chat_id])

/** The position a chat cursor names. */
export const decodeChatCursor = (cursor: string): Either.Either<ChatCursor, string> =>
  Either.map(decodeCursor(cursor, 3), ([last_message_at, bot_id, chat_id]) => ({
    last_message_at: last_message_at!,
    bot_id: bot_id!,
    chat_id: chat_id!
  }))

/** The bot keeps no history of that chat. */
export class ChatNotFound extends Schema.TaggedError<ChatNotFound>()("ChatNotFound", {
  bot_id: Schema.Int,
  chat_id: Schema.Int
}) {
  override get message() {
    return `bot ${this.bot_id} has no chat ${this.chat_id}`
  }
}

/** The bot keeps no message history (manage_enabled is off), so it has no chats, people or stats. */
export class HistoryDisabled extends Schema.TaggedError<HistoryDisabled>()("HistoryDisabled", {
  bot_id: Schema.Int
}) {
  override get message() {
    return `bot ${this.bot_id} keeps no message history; turn manage_enabled on to see its chats, people and stats`
  }
}
