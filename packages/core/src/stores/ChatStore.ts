import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { Chat, ChatCountRow, ChatInfo, ChatQuery, Conversation } from "../domain/Chat.js"
import type { StorageError } from "../domain/Errors.js"
import type { ChatFilter } from "../domain/Scope.js"
import type { Sighting } from "../domain/Sighting.js"

/**
 * The chats of the bots that keep history. Their counters (messages, unread, last message) follow the
 * message history by themselves, whatever writes it; what the history cannot tell (names, kinds, the
 * bot's membership, migrations, read marks) comes in sightings.
 */
export interface ChatStoreService {
  /**
   * Records sightings in one write, after any messages written with them: chats' kinds and names, people
   * and the chats they were seen in, departures, the bot's membership, read marks, and migrations to a
   * supergroup (the old chat's history, members, tags, read mark and counters move to the new id; the old
   * chat is then empty and unlisted; the new one takes its conversation state unless that is a new chat's),
   * and reopenings (a chat not open becomes open with no snooze, with a `chats.reopen` audit entry by
   * `system` in the same write). Recording the same sightings again changes nothing more.
   */
  readonly recordSightings: (sightings: ReadonlyArray<Sighting>) => Effect.Effect<void, StorageError>
  /** Chats of the query's bots, newest activity first; migrated-away chats are not listed. */
  readonly listChats: (query: ChatQuery) => Effect.Effect<ReadonlyArray<Chat>, StorageError>
  /** One chat; `None` when the bot has no such chat, or it moved to a supergroup. */
  readonly findChat: (botId: number, chatId: number) => Effect.Effect<Option.Option<Chat>, StorageError>
  /**
   * Moves the chat's read mark to `at` (Unix seconds): only incoming messages dated after it stay unread.
   * False when the bot has no such chat.
   */
  readonly markRead: (botId: number, chatId: number, at: number) => Effect.Effect<boolean, StorageError>
  /** Replaces the chat's names and member count (what getChat said); false when the bot has no such chat. */
  readonly updateChat: (
    botId: number,
    chatId: number,
    info: Omit<ChatInfo, "type"> & { readonly member_count: number }
  ) => Effect.Effect<boolean, StorageError>
  /**
   * Replaces a listed chat's conversation state with `after`, only while it is still `before`; false when
   * it is not (changed meanwhile, unknown or moved): read it again and retry. The kept counts follow.
   */
  readonly replaceConversation: (
    botId: number,
    chatId: number,
    before: Conversation,
    after: Conversation
  ) => Effect.Effect<boolean, StorageError>
  /**
   * The counts of the filter's listed chats per status and assignee (rows with none left out): whole bots'
   * from the kept counters, single chats' counted from those chats.
   */
  readonly chatCounts: (filter: ChatFilter) => Effect.Effect<ReadonlyArray<ChatCountRow>, StorageError>
  /**
   * Reopens at most `limit` snoozed chats whose `snoozed_until` is at or before `now` (Unix seconds), each
   * with a `chats.reopen` audit entry by `system` in the same write; the chats it reopened. A chat another
   * writer reopened first is left out, so instances sharing the store reopen each once.
   */
  readonly wakeSnoozed: (
    now: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<{ readonly bot_id: number; readonly chat_id: number }>, StorageError>
  /** The ids of the bots whose history is kept (manage_enabled), ascending. */
  readonly historyBotIds: Effect.Effect<ReadonlyArray<number>, StorageError>
  /**
   * Marks the chat unreachable since `since` for `reason` (Telegram's), or reachable again (`reason`
   * undefined); true when that changed the stored chat.
   */
  readonly setReachable: (
    botId: number,
    chatId: number,
    unreachable: { readonly since: number; readonly reason: string } | undefined
  ) => Effect.Effect<boolean, StorageError>
}

/** The chats; the host's driver provides it. */
export class ChatStore extends Context.Tag("@botrelay/core/ChatStore")<ChatStore, ChatStoreService>() {}
