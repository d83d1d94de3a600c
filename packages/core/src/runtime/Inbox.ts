import { Clock, Context, Effect, Layer } from "effect"
import type { LeaseLost, StorageError } from "../domain/Errors.js"
import { Events, Event } from "./Events.js"
import * as Metrics from "./Metrics.js"
import * as Pipeline from "./Pipeline.js"
import { BotStore } from "../stores/BotStore.js"
import { InboxStore } from "../stores/InboxStore.js"
import type { Fence } from "../stores/LeaseStore.js"
import { UpdateTracer } from "./UpdateTracer.js"

export type { BufferEntry, InboxUpdate, UpdateCompletion } from "../domain/Update.js"

/** An update as an ingress hands it over: its id and its JSON text exactly as Telegram sent it. */
export interface Received {
  readonly update_id: number
  readonly payload: string
}

/** Where every update enters, polled or posted to a webhook. */
export interface InboxService {
  /** The offset the bot's next getUpdates asks for: 0 until a batch was accepted. */
  readonly offset: (botId: number) => Effect.Effect<number, StorageError>
  /** How much of the bot's work is waiting: unprocessed updates plus pending deliveries. */
  readonly backlog: (botId: number) => Effect.Effect<number, StorageError>
  /**
   * Stores the updates the inbox does not hold yet together with the bot's next offset (0 keeps it:
   * webhooks have none), tells the runtime, and then records when the bot last received one (at most once
   * a second). Returns how many were new. Only after it succeeded may Telegram be told the updates
   * arrived. A poller's `fence` makes it refuse (`LeaseLost`) once another instance owns the bot. With
   * `completing`, updates of a bot with none waiting are completed in the transaction that stores them
   * (where the store can) instead of waiting for processing.
   */
  readonly accept: (
    botId: number,
    updates: ReadonlyArray<Received>,
    nextOffset: number,
    fence?: Fence,
    completing?: Pipeline.Completing
  ) => Effect.Effect<number, StorageError | LeaseLost>
}

/** Where every update enters, polled or posted to a webhook. */
export class Inbox extends Context.Tag("@botrelay/core/Inbox")<Inbox, InboxService>() {}

/** How often `last_update_at` is written at most, per bot. */
const statusInterval = 1000

/** Builds the entry on the stores, telling the `Events` bus. */
export const make: Effect.Effect<InboxService, never, InboxStore | BotStore | Events> = Effect.gen(function*() {
  const store = yield* InboxStore
  const bots = yield* BotStore
  const events = yield* Events
  const tracer = yield* UpdateTracer
  const statusWritten = new Map<number, number>()

  const touch = (botId: number, now: number, at: string) =>
    now - (statusWritten.get(botId) ?? -Infinity) < statusInterval
      ? Effect.void
      : Effect.suspend(() => {
        statusWritten.set(botId, now)
        return bots.updateBot(botId, { last_update_at: at }).pipe(
          Effect.catchAll((e) => Effect.logWarning("could not record the last update", e.cause))
        )
      })

  return Inbox.of({
    offset: store.ingressOffset,
    backlog: store.backlog,
    accept: (botId, updates, nextOffset, fence, completing) =>
      updates.length === 0 ? Effect.succeed(0) : Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const received_at = new Date(now).toISOString()
        const rows = updates.map((u) => ({ bot_id: botId, update_id: u.update_id, payload: u.payload, received_at }))
        const { added, completed } = completing === undefined || store.commitCompleting === undefined
          ? { added: yield* store.commitUpdates(botId, rows, nextOffset, fence), completed: undefined }
          : yield* store.commitCompleting(botId, rows, nextOffset, (inserted) => completing(inserted, now), fence)
        yield* Metrics.received(botId, added)
        if (tracer.enabled) {
          yield* tracer.received(botId, updates.map((u) => u.update_id), nextOffset === 0 ? "webhook" : "polling", now)
        }
        // processing settles the bot's poller when nothing was queued for its outbox
        if (completed === undefined || !(yield* Pipeline.completed(events, tracer, botId, completed, now))) {
          yield* events.publish(Event.UpdatesReceived({ bot_id: botId }))
        }
        // after telling the runtime: its write is a commit of its own, which the updates need not wait for
        yield* touch(botId, now, received_at)
        return added
      })
  })
})

/** The entry as a layer. */
export const layer: Layer.Layer<Inbox, never, InboxStore | BotStore | Events> = Layer.effect(Inbox, make)
