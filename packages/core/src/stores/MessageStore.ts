import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { Message, MessageQuery } from "../domain/Message.js"
import type { DeliveryState } from "../domain/Outgoing.js"

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
  /**
   * Numbers an outgoing message (`local_id`) and stores it `queued` (id 0: kept under `placeholderId`), counted
   * like any new message, with `request` kept for a resend. Returns it as stored.
   */
  readonly queueMessage: (message: Message, request: string) => Effect.Effect<Message, StorageError>
  /**
   * Sets the delivery of the message with this `local_id`; a `message_id` gives it Telegram's id (unless the
   * chat already holds one with it) and `date` its date, making it its chat's last message as it is then.
   * Returns it as stored; `None` when no message has that `local_id`.
   */
  readonly setDelivery: (localId: number, change: DeliveryChange) => Effect.Effect<Option.Option<Message>, StorageError>
  /** The message sent through the API with this `local_id`, and its request. */
  readonly findOutgoing: (localId: number) => Effect.Effect<Option.Option<OutgoingMessage>, StorageError>
}

/**
 * What became of an outgoing message: its state, Telegram's reason, when, and Telegram's id and date (0 when
 * none: kept as they are).
 */
export interface DeliveryChange {
  readonly delivery: DeliveryState
  readonly delivery_error: string
  readonly delivery_at: number
  readonly message_id: number
  readonly date: number
}

/** A message sent through the API, with the request kept for it ("" for uploads). */
export interface OutgoingMessage {
  readonly message: Message
  readonly request: string
}

/** The message history; the host's driver provides it. */
export class MessageStore extends Context.Tag("@botrelay/core/MessageStore")<MessageStore, MessageStoreService>() {}
