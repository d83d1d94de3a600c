import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { LogEntry, LogQuery, NewLogEntry } from "../domain/LiveEvent.js"

/** The durable event log that live event streams replay from. */
export interface EventStoreService {
  /** Appends the entries in order, in one write; their ids, increasing, in the same order. */
  readonly appendEvents: (entries: ReadonlyArray<NewLogEntry>) => Effect.Effect<ReadonlyArray<number>, StorageError>
  /**
   * Entries with ids above `after`, in id order, at most `limit`: those of the bots and chat the query
   * names, and every entry of bot 0 (the log's own markers) whatever it names.
   */
  readonly readEvents: (query: LogQuery) => Effect.Effect<ReadonlyArray<LogEntry>, StorageError>
  /** The id of the oldest entry kept; `None` when the log is empty. */
  readonly oldestEventId: Effect.Effect<Option.Option<number>, StorageError>
  /** The newest entry; `None` when the log is empty. */
  readonly newestEvent: Effect.Effect<Option.Option<LogEntry>, StorageError>
  /**
   * Deletes, oldest first, at most `limit` entries that were appended before `before` (ISO 8601) and are
   * not among the newest `keep`; returns how many.
   */
  readonly pruneEvents: (before: string, keep: number, limit: number) => Effect.Effect<number, StorageError>
}

/** The durable event log; the host's driver provides it. */
export class EventStore extends Context.Tag("@botrelay/core/EventStore")<EventStore, EventStoreService>() {}
