import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { Message, MessageQuery } from "../domain/Message.js"

/** The message history of the bots. */
export interface MessageStoreService {
  /** Inserts or replaces the message with the same (bot_id, chat_id, id). */
  readonly saveMessage: (message: Message) => Effect.Effect<void, StorageError>
  /**
   * `saveMessage` for each message in order, in one write. A message that cannot be saved (its bot was
   * deleted meanwhile) does not keep the others from being saved; the effect then fails.
   */
  readonly saveMessages: (messages: ReadonlyArray<Message>) => Effect.Effect<void, StorageError>
  /** One chat's messages, newest first (date desc, then id desc). */
  readonly listMessages: (query: MessageQuery) => Effect.Effect<ReadonlyArray<Message>, StorageError>
  /** The stored message with this (bot_id, chat_id, id); `None` when the history does not hold it. */
  readonly findMessage: (botId: number, chatId: number, id: number) => Effect.Effect<Option.Option<Message>, StorageError>
  /** Whether the bot's history holds a message, in any chat, carrying the file with this `file_id`. */
  readonly hasFile: (botId: number, fileId: string) => Effect.Effect<boolean, StorageError>
  /** The chats of the bot whose stored messages hold the file. */
  readonly chatsWithFile: (botId: number, fileId: string) => Effect.Effect<ReadonlyArray<number>, StorageError>
  /** Marks the bot's stored messages of the chat with these ids deleted; returns how many it holds. */
  readonly markMessagesDeleted: (
    botId: number,
    chatId: number,
    ids: ReadonlyArray<number>
  ) => Effect.Effect<number, StorageError>
}

/** The message history; the host's driver provides it. */
export class MessageStore extends Context.Tag("@botrelay/core/MessageStore")<MessageStore, MessageStoreService>() {}
