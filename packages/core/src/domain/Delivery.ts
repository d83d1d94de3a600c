import { Schema } from "effect"

/**
 * Where a delivery stands: waiting (maybe for a retry), done, given up after `BOTRELAY_DELIVERY_MAX_AGE`
 * (dead), or dead and then given up by an operator (discarded: never sent, kept like delivered ones).
 */
export const DeliveryStatus = Schema.Literal("pending", "delivered", "dead", "discarded")
export type DeliveryStatus = typeof DeliveryStatus.Type

/** One update on its way to a bot's backend: the outbox entry, FIFO per bot. */
export const Delivery = Schema.Struct({
  id: Schema.Int,
  bot_id: Schema.Int,
  update_id: Schema.Int,
  url: Schema.String,
  payload: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  next_attempt_at: Schema.String,
  last_error: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Delivery" })
export type Delivery = typeof Delivery.Type

/** What processing an update adds to the outbox. */
export type NewDelivery = Pick<Delivery, "bot_id" | "update_id" | "url" | "payload" | "created_at">

/** The result of one attempt at a delivery. */
export type DeliveryOutcome =
  | { readonly status: "delivered"; readonly at: string }
  | { readonly status: "pending"; readonly at: string; readonly next_attempt_at: string; readonly last_error: string }
  | { readonly status: "dead"; readonly at: string; readonly last_error: string }

/** The most updates one replay re-queues. */
export const maxReplay = 10_000

/** Which stored updates of a bot a replay re-queues: an inclusive update_id range, or receive times `[from, to)`. */
export type ReplayRange =
  | { readonly _tag: "UpdateIds"; readonly from: number; readonly to: number }
  | { readonly _tag: "Received"; readonly from: string; readonly to: string }

/** What a replay did: deliveries queued, and updates of the range it could not replay. */
export const Replayed = Schema.Struct({ queued: Schema.Int, missing: Schema.Int }).annotations({ identifier: "Replayed" })
export type Replayed = typeof Replayed.Type

/** How many dead deliveries of a bot a retry put back in line. */
export const Retried = Schema.Struct({ retried: Schema.Int }).annotations({ identifier: "Retried" })
export type Retried = typeof Retried.Type

/** How many dead deliveries of a bot a discard gave up. */
export const Discarded = Schema.Struct({ discarded: Schema.Int }).annotations({ identifier: "Discarded" })
export type Discarded = typeof Discarded.Type

const UnixSeconds = Schema.Int.pipe(Schema.nonNegative())
const UpdateId = Schema.Int.pipe(Schema.nonNegative())

/** `POST /api/deliveries/replay`: a bot and either an inclusive update_id range or a receive-time range (Unix s). */
export const ReplayRequest = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  from_update_id: Schema.optionalWith(UpdateId, { exact: true }),
  to_update_id: Schema.optionalWith(UpdateId, { exact: true }),
  from: Schema.optionalWith(UnixSeconds, { exact: true }),
  to: Schema.optionalWith(UnixSeconds, { exact: true })
}).annotations({ identifier: "ReplayRequest" })
export type ReplayRequest = typeof ReplayRequest.Type
