import { Context, Effect, Layer, Option, Schema } from "effect"
import type { Delivery, DeliveryStatus } from "../domain/Delivery.js"
import type { StorageError } from "../domain/Errors.js"
import { Event, Events } from "../runtime/Events.js"
import { InboxStore } from "../stores/InboxStore.js"
import { OutboxStore } from "../stores/OutboxStore.js"
import { nowIso } from "../internal/Time.js"

/** No dead delivery has this id. */
export class DeliveryNotFound extends Schema.TaggedError<DeliveryNotFound>()("DeliveryNotFound", { id: Schema.Int }) {
  override get message() {
    return `no dead delivery ${this.id}`
  }
}

/** The outbox as operators see it: what is waiting, delivered or dead; putting dead ones back in line, or giving them up. */
export interface DeliveriesService {
  /** Deliveries newest first, optionally of one bot and one status. */
  readonly list: (filter: {
    readonly bot_id?: number
    readonly status?: DeliveryStatus
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /** How much of the bot's work is waiting: updates not yet processed plus deliveries not yet made. */
  readonly backlog: (botId: number) => Effect.Effect<number, StorageError>
  /** Retries a dead delivery now, behind nothing: its bot's outbox is FIFO again from it. */
  readonly retry: (id: number) => Effect.Effect<Delivery, DeliveryNotFound | StorageError>
  /** Gives up on a dead delivery: it is removed and never sent. */
  readonly discard: (id: number) => Effect.Effect<Delivery, DeliveryNotFound | StorageError>
}

/** The outbox as operators see it. */
export class Deliveries extends Context.Tag("@botrelay/core/Deliveries")<Deliveries, DeliveriesService>() {}

/** Builds the service on the stores, telling the `Events` bus. */
export const make: Effect.Effect<DeliveriesService, never, OutboxStore | InboxStore | Events> = Effect.gen(function*() {
  const outbox = yield* OutboxStore
  const inbox = yield* InboxStore
  const events = yield* Events
  return Deliveries.of({
    list: outbox.listDeliveries,
    backlog: inbox.backlog,
    retry: (id) =>
      Effect.flatMap(nowIso, (at) => outbox.retryDelivery(id, at)).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new DeliveryNotFound({ id })),
          onSome: (delivery) =>
            events.publish(Event.DeliveryChanged({ delivery })).pipe(
              Effect.zipRight(events.publish(Event.OutboxQueued({ bot_id: delivery.bot_id, kind: "delivery" }))),
              Effect.as(delivery)
            )
        })),
        Effect.withSpan("Deliveries.retry", { attributes: { id } })
      ),
    discard: (id) =>
      outbox.discardDelivery(id).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new DeliveryNotFound({ id })),
          onSome: Effect.succeed
        })),
        Effect.withSpan("Deliveries.discard", { attributes: { id } })
      )
  })
})

/** The service on the stores and the `Events` bus. */
export const layer: Layer.Layer<Deliveries, never, OutboxStore | InboxStore | Events> = Layer.effect(Deliveries, make)
