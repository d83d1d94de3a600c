import { Schema } from "effect"

/** Where a delivery stands: waiting (maybe for a retry), done, or given up after 24 h. */
export const DeliveryStatus = Schema.Literal("pending", "delivered", "dead")
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
