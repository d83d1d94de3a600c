import { Context, Effect, Layer } from "effect"
import type { BotNotFound } from "../domain/Bot.js"
import type { HistoryDisabled } from "../domain/Chat.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import * as Scope from "../domain/Scope.js"
import { defaultRangeDays, maxRangeDays, type Stats } from "../domain/Stats.js"
import { nowSeconds } from "../internal/Time.js"
import { BotStore } from "../stores/BotStore.js"
import { ChatStore } from "../stores/ChatStore.js"
import { StatsStore } from "../stores/StatsStore.js"
import { filterFor } from "./Chats.js"

/** A request for stats: one bot or all in scope, from (inclusive) to (exclusive), Unix seconds. */
export interface StatsRequest {
  readonly bot_id?: number | undefined
  /** Default: 30 days before `to`. */
  readonly from?: number | undefined
  /** Default: now. */
  readonly to?: number | undefined
}

/** Figures of the bots' activity. */
export interface StatsService {
  /**
   * Stats of the bot, or of every bot in `scope` that keeps history, over the UTC hours (per_hour, totals)
   * and days (per_day, top_chats) the range touches; `active_chats_7d` counts chats with messages on the 7
   * UTC days up to the one `to` falls in.
   */
  readonly get: (
    request: StatsRequest,
    scope: Scope.ChatScope
  ) => Effect.Effect<Stats, BotNotFound | HistoryDisabled | InvalidInput | StorageError>
}

/** Figures of the bots' activity. */
export class Statistics extends Context.Tag("@botrelay/core/Statistics")<Statistics, StatsService>() {}

const hour = 3600
const day = 86400

/** `YYYY-MM-DD` of a UTC day (Unix seconds / 86400). */
export const dayName = (d: number): string => new Date(d * day * 1000).toISOString().slice(0, 10)

/** Builds the service on the stores the host provides. */
export const make: Effect.Effect<StatsService, never, BotStore | ChatStore | StatsStore> = Effect.gen(function*() {
  const botStore = yield* BotStore
  const chatStore = yield* ChatStore
  const stats = yield* StatsStore

  return Statistics.of({
    get: (request, scope) =>
      Effect.gen(function*() {
        const to = request.to ?? (yield* nowSeconds)
        const from = request.from ?? to - defaultRangeDays * day
        if (from >= to) return yield* Effect.fail(InvalidInput.field("from", "from must be before to"))
        if (to - from > maxRangeDays * day) {
          return yield* Effect.fail(InvalidInput.field("to", `the range from from to to must be at most ${maxRangeDays} days`))
        }
        const filter = yield* filterFor(botStore, chatStore, request.bot_id, scope)
        const botIds = filter.bot_ids
        const lastHour = Math.floor((to - 1) / hour)
        const firstDay = Math.floor(from / day)
        const lastDay = Math.floor((to - 1) / day)
        const [botHours, chatHours, top_chats, active_chats_7d, totals, deliveries] = yield* Effect.all([
          stats.hourCounts(botIds, Math.floor(from / hour), lastHour),
          stats.chatHourCounts(filter.chats, Math.floor(from / hour), lastHour),
          stats.topChats(botIds, firstDay, lastDay, 10, filter.chats),
          stats.activeChats(botIds, lastDay - 6, lastDay, filter.chats),
          stats.totals(botIds, filter.chats),
          stats.deliveries(botIds, new Date(from * 1000).toISOString(), new Date(to * 1000).toISOString())
        ])
        const hours = [...botHours, ...chatHours]
        const days = new Map<number, { in: number; out: number }>()
        for (let d = firstDay; d <= lastDay; d++) days.set(d, { in: 0, out: 0 })
        const perHour = Array.from({ length: 24 }, () => 0)
        let totalIn = 0
        let totalOut = 0
        for (const h of hours) {
          totalIn += h.in
          totalOut += h.out
          perHour[h.hour % 24]! += h.in + h.out
          const counts = days.get(Math.floor(h.hour / 24))
          if (counts !== undefined) {
            counts.in += h.in
            counts.out += h.out
          }
        }
        return {
          totals: { in: totalIn, out: totalOut, chats: totals.chats, people: totals.people, active_chats_7d },
          per_day: [...days].map(([d, counts]) => ({ day: dayName(d), in: counts.in, out: counts.out })),
          per_hour: perHour,
          top_chats,
          deliveries
        }
      }).pipe(Effect.withSpan("Stats.get"))
  })
})

/** The service on the stores the host provides. */
export const layer: Layer.Layer<Statistics, never, BotStore | ChatStore | StatsStore> = Layer.effect(
  Statistics,
  make
)
