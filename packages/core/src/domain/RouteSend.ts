import { Schema } from "effect"

/**
 * What a route send does: `forward` and `copy` pass a message on by a route's target bot; `reply`
 * carries a reply in a target chat back by the source bot to the chat the routed message came from.
 */
export const SendKind = Schema.Literal("forward", "copy", "reply")
export type SendKind = typeof SendKind.Type

/** Where a route send stands: waiting (maybe for a retry), sent, or given up. */
export const SendStatus = Schema.Literal("pending", "sent", "dead")
export type SendStatus = typeof SendStatus.Type

/** One message a bot sends because of a route or the reverse path: the outbox entry, FIFO per sending bot. */
export const RouteSend = Schema.Struct({
  id: Schema.Int,
  /** The bot that sends. */
  bot_id: Schema.Int,
  kind: SendKind,
  /** The route that fired; for `reply`, the route of the mapping the reply travels back on. */
  route_id: Schema.Int,
  /** The bot that received the message, and the update it came in. */
  source_bot_id: Schema.Int,
  update_id: Schema.Int,
  /** The message passed on: where it is and its id. */
  from_chat_id: Schema.Int,
  message_id: Schema.Int,
  /** Where it goes. */
  chat_id: Schema.Int,
  /** The message the send replies to in `chat_id`; 0 for none. */
  reply_to_message_id: Schema.Int,
  /** How many route sends led to this one: always 1, since only messages people sent trigger routes. */
  hop: Schema.Int,
  /**
   * The update that brought the message, as Telegram sent it (JSON), read from the receiving bot's inbox;
   * "" once the inbox no longer keeps it (24 hours after it was processed).
   */
  payload: Schema.String,
  status: SendStatus,
  attempts: Schema.Int,
  next_attempt_at: Schema.String,
  last_error: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "RouteSend" })
export type RouteSend = typeof RouteSend.Type

/**
 * What processing an update adds to the send outbox: pending, due at `created_at`, no attempts. The payload
 * stays in the inbox.
 */
export type NewRouteSend = Omit<
  RouteSend,
  "id" | "payload" | "status" | "attempts" | "next_attempt_at" | "last_error" | "updated_at"
>

/** The result of one attempt at a send. */
export type SendOutcome =
  | { readonly status: "sent"; readonly at: string }
  | { readonly status: "pending"; readonly at: string; readonly next_attempt_at: string; readonly last_error: string }
  | { readonly status: "dead"; readonly at: string; readonly last_error: string }

/**
 * A message a route send produced and the message it came from. Replies to the produced message in
 * the target chat travel back along a `reversible` mapping; every mapping marks the produced message as
 * the service's own, so it never triggers routes.
 */
export interface RouteMapping {
  readonly id: number
  readonly route_id: number
  readonly source_bot_id: number
  readonly source_chat_id: number
  readonly source_message_id: number
  readonly target_bot_id: number
  readonly target_chat_id: number
  readonly target_message_id: number
  readonly hop: number
  readonly reversible: boolean
  readonly created_at: string
}

/** What a successful send records. */
export type NewRouteMapping = Omit<RouteMapping, "id">
