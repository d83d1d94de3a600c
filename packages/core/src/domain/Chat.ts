import { Either, Schema } from "effect"
import { Tag } from "./ChatTag.js"
import { Message } from "./Message.js"

/** The kind of a chat, as Telegram names it. */
export const ChatType = Schema.Literal("private", "group", "supergroup", "channel")
export type ChatType = typeof ChatType.Type

/** Whether the bot is in the chat: `left` it, was removed (`kicked`), or is a `member` (also for private chats). */
export const ChatState = Schema.Literal("member", "left", "kicked")
export type ChatState = typeof ChatState.Type

/** Where the team is with a chat: `snoozed` reopens by itself at `snoozed_until`. */
export const ConversationStatus = Schema.Literal("open", "pending", "resolved", "snoozed")
export type ConversationStatus = typeof ConversationStatus.Type

/** How urgent a chat is to the team. */
export const Priority = Schema.Literal("none", "low", "medium", "high", "urgent")
export type Priority = typeof Priority.Type

/** A chat's conversation state as the team sets it. */
export interface Conversation {
  readonly status: ConversationStatus
  readonly priority: Priority
  /** The account the chat is assigned to; 0 for none. */
  readonly assignee_id: number
  /** Unix seconds a snoozed chat reopens at; 0 for none. */
  readonly snoozed_until: number
}

/** A new chat's conversation state. */
export const openConversation: Conversation = { status: "open", priority: "none", assignee_id: 0, snoozed_until: 0 }

/** Whether a conversation state is a new chat's: open, no priority, unassigned. */
export const isNewConversation = (c: Conversation): boolean =>
  c.status === "open" && c.priority === "none" && c.assignee_id === 0

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
  status: ConversationStatus,
  priority: Priority,
  /** The account the chat is assigned to; 0 for none. */
  assignee_id: Schema.Int,
  /** The assignee's display name (its username when it has none); "" for none. */
  assignee_name: Schema.String,
  /** Unix seconds a snoozed chat reopens at; 0 for none. */
  snoozed_until: Schema.Int,
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
  /** Single chats of other bots listed too (a chat-level scope). */
  readonly chats?: ReadonlyArray<{ readonly bot_id: number; readonly chat_id: number }> | undefined
  /** Lower-case text the title, username or names must contain. */
  readonly q?: string | undefined
  readonly type?: ChatType | undefined
  /** Only chats with unread messages. */
  readonly unread?: boolean | undefined
  /** Only chats with one of these statuses. */
  readonly statuses?: ReadonlyArray<ConversationStatus> | undefined
  /** Only chats with one of these priorities. */
  readonly priorities?: ReadonlyArray<Priority> | undefined
  /** Only chats assigned to one of these accounts (0: unassigned). */
  readonly assignees?: ReadonlyArray<number> | undefined
  readonly limit: number
  readonly after?: ChatCursor | undefined
}

/** Body of `POST /api/chats/update`: what is given changes, the rest stays. */
export const ChatUpdate = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  chat_id: Schema.Int,
  status: Schema.optionalWith(ConversationStatus, { exact: true }),
  priority: Schema.optionalWith(Priority, { exact: true }),
  /** 0 unassigns. */
  assignee_id: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { exact: true }),
  /** Unix seconds, in the future; needed (and only kept) with status `snoozed`. */
  snoozed_until: Schema.optionalWith(Schema.Int.pipe(Schema.nonNegative()), { exact: true })
}).annotations({ identifier: "ChatUpdate" })
export type ChatUpdate = typeof ChatUpdate.Type

/** How many chats per status, and per assignee among those not resolved (`me`: the caller, `none`: unassigned). */
export const ChatCounts = Schema.Struct({
  status: Schema.Struct({ open: Schema.Int, pending: Schema.Int, resolved: Schema.Int, snoozed: Schema.Int }),
  assignee: Schema.Struct(
    { me: Schema.Int, none: Schema.Int },
    Schema.Record({ key: Schema.String, value: Schema.Int })
  )
}).annotations({ identifier: "ChatCounts" })
export type ChatCounts = typeof ChatCounts.Type

/** A row of the kept counts: listed chats of a bot with a status and assignee. */
export interface ChatCountRow {
  readonly bot_id: number
  readonly status: ConversationStatus
  readonly assignee_id: number
  readonly chats: number
}

/** The answer of `GET /api/chats/counts` from the kept rows; `me` is the caller's account (0 for keys). */
export const countsOf = (rows: ReadonlyArray<ChatCountRow>, me: number): ChatCounts => {
  const status = { open: 0, pending: 0, resolved: 0, snoozed: 0 }
  const byAssignee = new Map<number, number>()
  for (const row of rows) {
    if (row.chats <= 0) continue
    status[row.status] += row.chats
    if (row.status !== "resolved") byAssignee.set(row.assignee_id, (byAssignee.get(row.assignee_id) ?? 0) + row.chats)
  }
  const assignee: Record<string, number> = {}
  for (const [id, n] of [...byAssignee].sort(([a], [b]) => a - b)) if (id !== 0) assignee[String(id)] = n
  return {
    status,
    assignee: { ...assignee, me: me === 0 ? 0 : byAssignee.get(me) ?? 0, none: byAssignee.get(0) ?? 0 }
  }
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

/** The chat cannot be assigned to that account: unknown, disabled, or without access to the bot. */
export class InvalidAssignee extends Schema.TaggedError<InvalidAssignee>()("InvalidAssignee", {
  assignee_id: Schema.Int,
  reason: Schema.String
}) {
  override get message() {
    return `assignee_id ${this.assignee_id} ${this.reason}`
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
