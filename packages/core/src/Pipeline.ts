import { Clock, Effect, Option } from "effect"
import { messagesOf } from "./Capture.js"
import type { NewDelivery } from "./Delivery.js"
import type { InboxUpdate } from "./Inbox.js"
import { Storage } from "./Storage.js"
import { nowIso } from "./Time.js"

/** How many inbox updates one read takes. */
const batchSize = 100

/**
 * Processes one update of a bot, once: captures its messages when the bot keeps history, queues
 * it for the backend when the bot forwards, and marks it processed, all in one transaction.
 * Returns whether a delivery was queued.
 */
export const processUpdate = (update: InboxUpdate) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const found = yield* storage.findBot(update.bot_id)
    if (Option.isNone(found)) return false
    const bot = found.value
    const now = yield* Clock.currentTimeMillis
    const created_at = yield* nowIso
    let payload: unknown = undefined
    try {
      payload = JSON.parse(update.payload)
    } catch {
      yield* Effect.logWarning("an update in the inbox is not JSON").pipe(
        Effect.annotateLogs({ bot_id: update.bot_id, update_id: update.update_id })
      )
    }
    const messages = bot.manage_enabled && payload !== undefined
      ? messagesOf(bot.id, payload, Math.floor(now / 1000))
      : []
    const deliveries: Array<NewDelivery> = bot.proxy_enabled && bot.backend_url !== ""
      ? [{ bot_id: bot.id, update_id: update.update_id, url: bot.backend_url, payload: update.payload, created_at }]
      : []
    yield* storage.completeUpdate({ bot_id: bot.id, update_id: update.update_id, messages, deliveries })
    return deliveries.length > 0
  })

/**
 * Processes every pending update of the bot, in update_id order, until the inbox is empty;
 * `queued` is called after updates that added deliveries.
 */
export const drain = (botId: number, queued: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    while (true) {
      const pending = yield* storage.pendingUpdates(botId, batchSize)
      if (pending.length === 0) return
      let delivered = false
      for (const update of pending) delivered = (yield* processUpdate(update)) || delivered
      if (delivered) yield* queued
    }
  })
