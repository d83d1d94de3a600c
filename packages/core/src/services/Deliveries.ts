import { Context, Effect, Layer, Option, Schema } from "effect"
import { BotNotFound } from "../domain/Bot.js"
import {
  type Delivery,
  type DeliveryStatus,
  maxReplay,
  type Replayed,
  type ReplayRange,
  type ReplayRequest
} from "../domain/Delivery.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import { Event, Events } from "../runtime/Events.js"
import { BotStore } from "../stores/BotStore.js"
import { InboxStore } from "../stores/InboxStore.js"
import { OutboxStore } from "../stores/OutboxStore.js"
import { nowIso } from "../internal/Time.js"

/** No dead delivery has this id. */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()("DeliveryNotFound", { id: Schema.Int }) {
  override get message() {
    return `no dead delivery ${this.id}`
  }
}

/** The outbox as operators see it: what is waiting, delivered, dead or discarded; retries, discards and replays. */
export interface DeliveriesService {
  /** Deliveries newest first, optionally of one bot and one status. */
  readonly list: (filter: {
    readonly bot_id?: number
    readonly status?: DeliveryStatus
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /** The delivery with this id, whatever its status; `DeliveryNotFound` when there is none. */
  readonly get: (id: number) => Effect.Effect<Delivery, DeliveryNotFound | StorageError>
  /** How much of the bot's work is waiting: updates not yet processed plus deliveries not yet made. */
  readonly backlog: (botId: number) => Effect.Effect<number, StorageError>
  /** Retries a dead delivery now, behind nothing: its bot's outbox is FIFO again from it. */
  readonly retry: (id: number) => Effect.Effect<Delivery, DeliveryNotFound | StorageError>
  /** Retries every dead delivery of the bot now; how many. */
  readonly retryDead: (botId: number) => Effect.Effect<number, StorageError>
  /** Gives up on a dead delivery: it stays, `discarded`, and is never sent. */
  readonly discard: (id: number) => Effect.Effect<Delivery, DeliveryNotFound | StorageError>
  /** Gives up every dead delivery of the bot; how many. */
  readonly discardDead: (botId: number) => Effect.Effect<number, StorageError>
  /**
   * Appends the bot's stored updates of the range (processed, not dropped by a route) to its outbox as new
   * deliveries to its current backend URL, in update_id order, behind what is pending. `missing` counts the
   * update_ids of the range not queued (update_id range), or the stored updates received in it not queued (time).
   */
  readonly replay: (request: ReplayRequest) => Effect.Effect<Replayed, InvalidInput | BotNotFound | StorageError>
}

/** The outbox as operators see it. */
export class Deliveries extends Context.Tag("@botrelay/core/Deliveries")<Deliveries, DeliveriesService>() {}

/** The range a replay request names, or the reason it names none. */
export const rangeOf = (request: ReplayRequest): ReplayRange | InvalidInput => {
  const byIds = request.from_update_id !== undefined || request.to_update_id !== undefined
  const byTime = request.from !== undefined || request.to !== undefined
  if (byIds === byTime) {
    return InvalidInput.field("", "give either from_update_id and to_update_id, or from and to")
  }
  if (byIds) {
    const { from_update_id: from, to_update_id: to } = request
    if (from === undefined) return InvalidInput.field("from_update_id", "from_update_id is missing")
    if (to === undefined) return InvalidInput.field("to_update_id", "to_update_id is missing")
    if (to < from) return InvalidInput.field("to_update_id", "to_update_id is before from_update_id")
    if (to - from + 1 > maxReplay) {
      return InvalidInput.field("to_update_id", `a replay takes at most ${maxReplay} updates`)
    }
    return { _tag: "UpdateIds", from, to }
  }
  const { from, to } = request
  if (from === undefined) return InvalidInput.field("from", "from is missing")
  if (to === undefined) return InvalidInput.field("to", "to is missing")
  if (to < from) return InvalidInput.field("to", "to is before from")
  if (to === from) return InvalidInput.field("to", "the range is empty: to must be after from")
  return {
    _tag: "Received",
    from: new Date(from * 1000).toISOString(),
    to: new Date(to * 1000).toISOString()
  }
}

/** Builds the service on the stores, telling the `Events` bus. */
export const make: Effect.Effect<DeliveriesService, never, OutboxStore | InboxStore | BotStore | Events> = Effect.gen(
  function*() {
    const outbox = yield* OutboxStore
    const inbox = yield* InboxStore
    const bots = yield* BotStore
    const events = yield* Events
    const queued = (botId: number) => events.publish(Event.OutboxQueued({ bot_id: botId, kind: "delivery" }))
    const changed = (deliveries: ReadonlyArray<Delivery>) =>
      Effect.forEach(deliveries, (delivery) => events.publish(Event.DeliveryChanged({ delivery })), { discard: true })
    const found = (id: number) =>
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new DeliveryNotFound({ id })),
        onSome: (delivery: Delivery) => Effect.succeed(delivery)
      }))
    return Deliveries.of({
      list: outbox.listDeliveries,
      get: (id) => outbox.getDelivery(id).pipe(found(id)),
      backlog: inbox.backlog,
      retry: (id) =>
        Effect.flatMap(nowIso, (at) => outbox.retryDelivery(id, at)).pipe(
          found(id),
          Effect.tap((delivery) => Effect.zipRight(changed([delivery]), queued(delivery.bot_id))),
          Effect.withSpan("Deliveries.retry", { attributes: { id } })
        ),
      retryDead: (botId) =>
        Effect.flatMap(nowIso, (at) => outbox.retryDead(botId, at)).pipe(
          Effect.tap((retried) => retried.length === 0 ? Effect.void : Effect.zipRight(changed(retried), queued(botId))),
          Effect.map((retried) => retried.length),
          Effect.withSpan("Deliveries.retryDead", { attributes: { bot_id: botId } })
        ),
      discard: (id) =>
        Effect.flatMap(nowIso, (at) => outbox.discardDelivery(id, at)).pipe(
          found(id),
          Effect.tap((delivery) => changed([delivery])),
          Effect.withSpan("Deliveries.discard", { attributes: { id } })
        ),
      discardDead: (botId) =>
        Effect.flatMap(nowIso, (at) => outbox.discardDead(botId, at)).pipe(
          Effect.tap(changed),
          Effect.map((discarded) => discarded.length),
          Effect.withSpan("Deliveries.discardDead", { attributes: { bot_id: botId } })
        ),
      replay: (request) =>
        Effect.gen(function*() {
          const range = rangeOf(request)
          if (range instanceof InvalidInput) return yield* Effect.fail(range)
          const bot = yield* bots.findBot(request.bot_id).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.fail(new BotNotFound({ id: request.bot_id })),
              onSome: Effect.succeed
            }))
          )
          if (bot.backend_url === "") {
            return yield* Effect.fail(InvalidInput.field("bot_id", `bot ${bot.id} has no backend_url to replay to`))
          }
          const at = yield* nowIso
          const result = yield* outbox.replayUpdates({ bot_id: bot.id, range, url: bot.backend_url, at, max: maxReplay })
          if (Option.isNone(result)) {
            return yield* Effect.fail(
              InvalidInput.field("to", `more than ${maxReplay} updates were received in the range; replay a shorter one`)
            )
          }
          const { held, queued: n } = result.value
          if (n > 0) yield* queued(bot.id)
          const missing = range._tag === "UpdateIds" ? range.to - range.from + 1 - n : held - n
          return { queued: n, missing }
        }).pipe(Effect.withSpan("Deliveries.replay", { attributes: { bot_id: request.bot_id } }))
    })
  }
)

/** The service on the stores and the `Events` bus. */
export const layer: Layer.Layer<Deliveries, never, OutboxStore | InboxStore | BotStore | Events> = Layer.effect(
  Deliveries,
  make
)
