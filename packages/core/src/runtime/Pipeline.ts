import { Clock, Effect } from "effect"
import { type StoredBot, userIdOf } from "../domain/Bot.js"
import { captureOf } from "./Capture.js"
import type { NewDelivery } from "../domain/Delivery.js"
import type { StorageError } from "../domain/Errors.js"
import { isoCached } from "../internal/Time.js"
import type { Message } from "../domain/Message.js"
import { Event, Events, type EventsService, publishMessages } from "./Events.js"
import type { InboxUpdate, UpdateCompletion } from "../domain/Update.js"
import { typeOf } from "./LongPoll.js"
import type { Decision } from "./Routing.js"
import { InboxStore } from "../stores/InboxStore.js"
import type { Fence } from "../stores/LeaseStore.js"
import { UpdateTracer, type UpdateTracerService } from "./UpdateTracer.js"

/** The ISO string of a batch's time, made once for its updates. */
const isoAt = isoCached()

/** How many inbox updates one read takes and one transaction completes. */
const batchSize = 100

/**
 * What processing an update means for a bot: its messages and what it tells about chats and people when
 * the bot keeps history, a delivery of the original JSON when it forwards, the update in its long-poll
 * buffer when it long-polls.
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
      created_at: isoAt(now)
    }]
    : []
  const captured = payload === undefined || !bot.manage_enabled
    ? undefined
    : captureOf(bot.id, userIdOf(bot), payload, Math.floor(now / 1000))
  return {
    bot_id: bot.id,
    update_id: update.update_id,
    messages: captured?.messages ?? [],
    deliveries,
    sends: undefined,
    buffer: bot.long_poll_enabled
      ? { type: typeOf(payload), payload: update.payload, created_at: isoAt(now) }
      : undefined,
    sighting: captured?.sighting
  }
}

/** Route evaluation for a batch of a bot's updates: a decision for each, in order. */
export type Route = (
  bot: StoredBot,
  updates: ReadonlyArray<InboxUpdate>,
  now: number
) => Effect.Effect<ReadonlyArray<Decision>, StorageError>

/**
 * The update's completion with its route sends; a drop keeps it from the bot's backend and long-poll buffer.
 * Built field by field: object spread costs a microsecond here, per update.
 */
const routed = (completion: UpdateCompletion, decision: Decision): UpdateCompletion =>
  !decision.dropped && decision.sends.length === 0 ? completion : {
    bot_id: completion.bot_id,
    update_id: completion.update_id,
    messages: completion.messages,
    deliveries: decision.dropped ? [] : completion.deliveries,
    dropped: decision.dropped,
    sends: decision.sends,
    buffer: decision.dropped ? undefined : completion.buffer,
    sighting: completion.sighting
  }

/**
 * Tells the bus what the completions added to the bot's history: new messages, and edits (edit_date set);
 * after a move to a supergroup, that keys changed (their scopes follow the chat).
 */
const publishStored = (events: EventsService, botId: number, completions: ReadonlyArray<UpdateCompletion>) => {
  let stored: Array<Message> | undefined
  let edited: Array<Message> | undefined
  const migrated = completions.some((c) => (c.sighting?.migrations.length ?? 0) > 0)
  for (const completion of completions) {
    for (const message of completion.messages) {
      if (message.edit_date > 0) (edited ??= []).push(message)
      else (stored ??= []).push(message)
    }
  }
  const published = stored === undefined && edited === undefined
    ? Effect.void
    : publishMessages(events, botId, stored ?? [], edited)
  return migrated ? Effect.zipRight(published, events.publish(Event.KeysChanged())) : published
}

/** What draining a bot's inbox works with. */
export interface Drain {
  /** The bot as it is now; `undefined` once it is gone. */
  readonly current: () => StoredBot | undefined
  /** Evaluates routes; without it nothing is routed. */
  readonly route?: Route | undefined
  /** The lease each commit proves; none where no other instance can run the bot. */
  readonly fence?: Fence | undefined
}

/**
 * Tells the runtime what completing a batch of the bot's updates did: `OutboxQueued` for the bot when it
 * queued deliveries and for each bot a route send is queued for, `UpdatesBuffered` when it buffered updates,
 * the stored messages, and the update tracer. Succeeds with whether deliveries were queued.
 */
export const completed = (
  events: EventsService,
  tracer: UpdateTracerService,
  botId: number,
  completions: ReadonlyArray<UpdateCompletion>,
  now: number
) =>
  Effect.gen(function*() {
    if (tracer.enabled) yield* tracer.processed(botId, completions.map((c) => c.update_id), now)
    yield* publishStored(events, botId, completions)
    const queued = completions.some((c) => c.deliveries.length > 0)
    if (queued) yield* events.publish(Event.OutboxQueued({ bot_id: botId, kind: "delivery" }))
    const senders = new Set(completions.flatMap((c) => c.sends?.map((s) => s.bot_id) ?? []))
    for (const sender of senders) yield* events.publish(Event.OutboxQueued({ bot_id: sender, kind: "route_send" }))
    if (completions.some((c) => c.buffer !== undefined)) {
      yield* events.publish(Event.UpdatesBuffered({ bot_id: botId }))
    }
    return queued
  })

/** Completions for a batch of updates as they are committed; `undefined` leaves them for `drain`. */
export type Completing = (
  updates: ReadonlyArray<InboxUpdate>,
  now: number
) => ReadonlyArray<UpdateCompletion> | undefined

/**
 * Completes a bot's updates as they are committed while nothing routes them (route evaluation reads the
 * store, so routed updates wait for `drain`): no read of the inbox and no second transaction.
 */
export const completing = (current: () => StoredBot | undefined, routed: () => boolean): Completing =>
(updates, now) => {
  const bot = current()
  return bot === undefined || routed() ? undefined : updates.map((update) => completionOf(bot, update, now))
}

/**
 * Processes every pending update of the bot in update_id order until the inbox is empty, a batch per
 * transaction, telling the runtime after each (`completed`). Succeeds with whether deliveries were queued;
 * fails with `LeaseLost` when the fence no longer holds.
 */
export const drain = (botId: number, { current, fence, route }: Drain) =>
  Effect.gen(function*() {
    const inbox = yield* InboxStore
    const events = yield* Events
    const tracer = yield* UpdateTracer
    let queued = false
    while (true) {
      const pending = yield* inbox.pendingUpdates(botId, batchSize)
      const bot = current()
      if (pending.length === 0 || bot === undefined) return queued
      const now = yield* Clock.currentTimeMillis
      const decisions = route === undefined ? undefined : yield* route(bot, pending, now)
      const completions = pending.map((update, i) => {
        const completion = completionOf(bot, update, now)
        return decisions === undefined ? completion : routed(completion, decisions[i]!)
      })
      yield* inbox.completeUpdates(completions, fence)
      if (yield* completed(events, tracer, botId, completions, now)) queued = true
      if (pending.length < batchSize) return queued
      yield* Effect.yieldNow()
    }
  })
