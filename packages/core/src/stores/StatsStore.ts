import type { Effect } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { ChatFilter } from "../domain/Scope.js"
import type { DeliveryFigures, HourCount, TopChat } from "../domain/Stats.js"

/**
 * Figures of the bots' activity, from counters kept as messages are written and from indexes, never from
 * a scan of the history. Hours are Unix seconds / 3600, days Unix seconds / 86400, both ranges inclusive.
 */
export interface StatsStoreService {
  /** Messages in and out of each hour of the range that has any, summed over the bots, by hour. */
  readonly hourCounts: (
    botIds: ReadonlyArray<number>,
    fromHour: number,
    toHour: number
  ) => Effect.Effect<ReadonlyArray<HourCount>, StorageError>
  /**
   * Messages in and out of each hour of the range that has any, summed over single chats (a chat-level
   * scope), by hour: counted from those chats' messages, as the hour counters are per bot.
   */
  readonly chatHourCounts: (
    chats: ChatFilter["chats"],
    fromHour: number,
    toHour: number
  ) => Effect.Effect<ReadonlyArray<HourCount>, StorageError>
  /** The chats of the bots and `chats` with the most messages (in and out) over the days, most first, at most `limit`. */
  readonly topChats: (
    botIds: ReadonlyArray<number>,
    fromDay: number,
    toDay: number,
    limit: number,
    chats?: ChatFilter["chats"]
  ) => Effect.Effect<ReadonlyArray<TopChat>, StorageError>
  /** How many chats of the bots and `chats` had a message on any of the days. */
  readonly activeChats: (
    botIds: ReadonlyArray<number>,
    fromDay: number,
    toDay: number,
    chats?: ChatFilter["chats"]
  ) => Effect.Effect<number, StorageError>
  /** How many chats (migrated-away ones left out) and distinct people the bots and `chats` have. */
  readonly totals: (
    botIds: ReadonlyArray<number>,
    chats?: ChatFilter["chats"]
  ) => Effect.Effect<{ readonly chats: number; readonly people: number }, StorageError>
  /** Deliveries queued from `from` (inclusive) to `to` (exclusive), ISO 8601 times. */
  readonly deliveries: (
    botIds: ReadonlyArray<number>,
    from: string,
    to: string
  ) => Effect.Effect<DeliveryFigures, StorageError>
}

/** The stats; the host's driver provides it. */
export class StatsStore extends Context.Tag("@botrelay/core/StatsStore")<StatsStore, StatsStoreService>() {}
