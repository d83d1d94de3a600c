import type { Effect } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { BufferedUpdate, BufferQuery, BufferRetention, BufferState } from "../domain/Update.js"

/** The long-poll buffer: the updates a bot's `/tgapi` getUpdates serves. */
export interface BufferStoreService {
  /** Forgets the bot's buffered updates whose update_id is below `offset`; returns how many. */
  readonly confirmBuffered: (botId: number, offset: number) => Effect.Effect<number, StorageError>
  /** Forgets all but the bot's `count` newest buffered updates; returns how many were forgotten. */
  readonly keepNewestBuffered: (botId: number, count: number) => Effect.Effect<number, StorageError>
  /** The bot's buffered updates from update_id `offset` up whose type `types` lets through, by update_id. */
  readonly readBuffered: (
    botId: number,
    query: BufferQuery
  ) => Effect.Effect<ReadonlyArray<BufferedUpdate>, StorageError>
  /** How many updates the bot's buffer holds. */
  readonly countBuffered: (botId: number) => Effect.Effect<number, StorageError>
  /** Forgets every buffered update of the bot; returns how many. Not counted as trimmed. */
  readonly dropBuffered: (botId: number) => Effect.Effect<number, StorageError>
  /**
   * In one transaction: forgets the bot's oldest buffered updates beyond `max_updates` and those buffered
   * before `before`; when any were, adds their number to the bot's trimmed count and records `at` as the
   * last trim. Returns how many.
   */
  readonly trimBuffered: (botId: number, retention: BufferRetention) => Effect.Effect<number, StorageError>
  /** The bot's remembered allowed_updates and trims; `[]`, 0 and "" for a bot never polled or trimmed. */
  readonly bufferState: (botId: number) => Effect.Effect<BufferState, StorageError>
  /** Remembers the allowed_updates of the bot's getUpdates. */
  readonly setAllowedUpdates: (botId: number, types: ReadonlyArray<string>) => Effect.Effect<void, StorageError>
}

/** The long-poll buffer; the host's driver provides it. */
export class BufferStore extends Context.Tag("@botrelay/core/BufferStore")<BufferStore, BufferStoreService>() {}
