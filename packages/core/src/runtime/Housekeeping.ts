import { Clock, Duration, Effect } from "effect"
import { LongPoll } from "./LongPoll.js"
import { BotStore } from "../stores/BotStore.js"
import { BridgeStore } from "../stores/BridgeStore.js"
import { MappingStore } from "../stores/MappingStore.js"
import { IdempotencyStore } from "../stores/IdempotencyStore.js"
import { InboxStore } from "../stores/InboxStore.js"
import { retention as keyRetention } from "../domain/IdempotencyKey.js"

/** How long finished work is kept, and how often housekeeping runs. */
export interface Options {
  /** Processed updates, delivered deliveries (to backends and bridges) and sent route sends older than this are deleted. */
  readonly retention: Duration.DurationInput
  readonly interval: Duration.DurationInput
  /** Route mappings older than this are deleted: replies to their messages no longer travel back. */
  readonly mappingTtl: Duration.DurationInput
}

/** Defaults: keep finished work a day (as long as Telegram keeps updates) and mappings 30 days, look every hour. */
export const defaults: Options = {
  retention: Duration.hours(24),
  interval: Duration.hours(1),
  mappingTtl: Duration.days(30)
}

/** Rows deleted per statement, so a large backlog of old rows never holds the process for long. */
const chunk = 1000

/**
 * One round: deletes processed inbox updates, delivered deliveries (to backends and bridges) and sent route sends older than the
 * retention and route mappings older than their TTL (in chunks, yielding between them), then trims the
 * long-poll buffers of bots with long polling by age, and deletes `Idempotency-Key`s past their 24 hours. Pending and dead deliveries and sends and unprocessed
 * updates are never touched.
 */
export const sweep = (options: Options = defaults) =>
  Effect.gen(function*() {
    const botStore = yield* BotStore
    const mappingStore = yield* MappingStore
    const inbox = yield* InboxStore
    const bridges = yield* BridgeStore
    const longPoll = yield* LongPoll
    const now = yield* Clock.currentTimeMillis
    const before = new Date(now - Duration.toMillis(options.retention)).toISOString()
    let updates = 0
    let deliveries = 0
    let sends = 0
    while (true) {
      const round = yield* inbox.pruneFinished(before, chunk)
      updates += round.updates
      deliveries += round.deliveries
      sends += round.sends
      if (round.updates < chunk && round.deliveries < chunk && round.sends < chunk) break
      yield* Effect.yieldNow()
    }
    while (true) {
      const round = yield* bridges.pruneBridgeDeliveries(before, chunk)
      deliveries += round
      if (round < chunk) break
      yield* Effect.yieldNow()
    }
    const expired = new Date(now - Duration.toMillis(options.mappingTtl)).toISOString()
    let mappings = 0
    while (true) {
      const round = yield* mappingStore.pruneMappings(expired, chunk)
      mappings += round
      if (round < chunk) break
      yield* Effect.yieldNow()
    }
    for (const bot of yield* botStore.listBots) {
      if (bot.long_poll_enabled) yield* longPoll.trim(bot.id)
    }
    const keys = yield* (yield* IdempotencyStore).sweep(Math.floor((now - Duration.toMillis(keyRetention)) / 1000))
    if (updates > 0 || deliveries > 0 || sends > 0 || mappings > 0 || keys > 0) {
      yield* Effect.logDebug("deleted finished work").pipe(
        Effect.annotateLogs({ updates, deliveries, sends, mappings, idempotency_keys: keys })
      )
    }
  })

/** Sweeps now and then every `interval` for as long as it runs; a failed sweep is logged and retried next time. */
export const run = (options: Options = defaults) =>
  sweep(options).pipe(
    Effect.catchAll((e) => Effect.logWarning("housekeeping failed", e.cause)),
    Effect.zipRight(Effect.sleep(options.interval)),
    Effect.forever
  )
