import { Clock, Effect } from "effect"
import type { StoredBot } from "./Bot.js"
import { messagesOf } from "./Capture.js"
import type { NewDelivery } from "./Delivery.js"
import type { InboxUpdate, UpdateCompletion } from "./Inbox.js"
import { typeOf } from "./LongPoll.js"
import { Storage } from "./Storage.js"

/** How many inbox updates one read takes and one transaction completes. */
const batchSize = 100

/**
 * What processing an update means for a bot: its messages when the bot keeps history, a delivery
 * of the original JSON when it forwards, the update in its long-poll buffer when it long-polls.
 */
export const completionOf = (bot: StoredBot, update: InboxUpdate, now: number): UpdateCompletion => {
  let payload: unknown = undefined
  if (bot.manage_enabled || bot.long_poll_enabled) {
    try {
      payload = JSON.parse(update.payload)
    } catch {
      payload = undefined
    }
  }
  const deliveries: Array<NewDelivery> = bot.proxy_enabled && bot.backend_url !== ""
    ? [{
      bot_id: bot.id,
      update_id: update.update_id,
      url: bot.backend_url,
      payload: update.payload,
      created_at: new Date(now).toISOString()
    }]
    : []
  const completion: UpdateCompletion = {
    bot_id: bot.id,
    update_id: update.update_id,
    messages: payload === undefined || !bot.manage_enabled ? [] : messagesOf(bot.id, payload, Math.floor(now / 1000)),
    deliveries
  }
  if (!bot.long_poll_enabled) return completion
  const created_at = new Date(now).toISOString()
  return { ...completion, buffer: { type: typeOf(payload), payload: update.payload, created_at } }
}

/**
 * Processes every pending update of the bot in update_id order until the inbox is empty, a batch
 * per transaction; `queued` is called after batches that added deliveries, `buffered` after batches
 * that added to the long-poll buffer. `current` is the bot as it is now, `undefined` once it is gone.
 */
export const drain = (
  botId: number,
  current: () => StoredBot | undefined,
  queued: Effect.Effect<void>,
  buffered: Effect.Effect<void> = Effect.void
) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    while (true) {
      const pending = yield* storage.pendingUpdates(botId, batchSize)
      const bot = current()
      if (pending.length === 0 || bot === undefined) return
      const now = yield* Clock.currentTimeMillis
      const completions = pending.map((update) => completionOf(bot, update, now))
      yield* storage.completeUpdates(completions)
      if (completions.some((c) => c.deliveries.length > 0)) yield* queued
      if (completions.some((c) => c.buffer !== undefined)) yield* buffered
      if (pending.length < batchSize) return
      yield* Effect.yieldNow()
    }
  })
