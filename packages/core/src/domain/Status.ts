import { Schema } from "effect"

/** What an instance id may be: 1 to 64 characters of `A-Z a-z 0-9 . _ -`. */
export const instanceIdPattern = /^[A-Za-z0-9._-]{1,64}$/

/** An instance's id, as `BOTRELAY_INSTANCE_ID` sets it and `X-Botrelay-Instance` carries it. */
export const InstanceId = Schema.String.pipe(
  Schema.pattern(instanceIdPattern, {
    message: () => "the instance id must be 1 to 64 characters of A-Z a-z 0-9 . _ -"
  })
).annotations({ identifier: "InstanceId" })

/** The outbox kinds metrics and the status tell apart: backend deliveries, route sends, bridge deliveries. */
export const OutboxKind = Schema.Literal("backend", "route", "bridge")
export type OutboxKind = typeof OutboxKind.Type

/** Who owns a bot's ingress, pipeline and outbox, and until when. */
export const Lease = Schema.Struct({
  instance_id: Schema.String,
  /** Grows each time the lease changes hands; commits of an older epoch are refused. */
  epoch: Schema.Int,
  expires_at: Schema.String
}).annotations({ identifier: "Lease" })
export type Lease = typeof Lease.Type

/** A live instance. */
export const InstanceStatus = Schema.Struct({
  id: Schema.String,
  /** The Botrelay version it runs. */
  version: Schema.String,
  started_at: Schema.String,
  last_heartbeat_at: Schema.String,
  /** How many bots' leases this instance holds. */
  leases: Schema.Int
}).annotations({ identifier: "InstanceStatus" })
export type InstanceStatus = typeof InstanceStatus.Type

/** How a bot takes its updates: polling, a webhook, or none (it only sends). */
export const Mode = Schema.Literal("polling", "webhook", "send-only")
export type Mode = typeof Mode.Type

/**
 * A polling bot's ingress: seconds since its last getUpdates returned (`null` where this instance does not
 * poll it), and when its last update came ("" for never).
 */
export const PollingIngress = Schema.Struct({
  lag_s: Schema.NullOr(Schema.Number),
  last_update_at: Schema.String
}).annotations({ identifier: "PollingIngress" })

/** A webhook bot's ingress as Telegram's getWebhookInfo tells it (cached briefly); 0 and "" for none. */
export const WebhookIngress = Schema.Struct({
  pending_update_count: Schema.Int,
  last_error_message: Schema.String,
  /** Unix seconds. */
  last_error_date: Schema.Int
}).annotations({ identifier: "WebhookIngress" })

/** What waits in a bot's outbox, over its kinds. */
export const OutboxStatus = Schema.Struct({
  depth: Schema.Int,
  /** Seconds the oldest waiting job has waited; 0 when none waits. */
  oldest_pending_age_s: Schema.Number,
  dead: Schema.Int
}).annotations({ identifier: "OutboxStatus" })

/**
 * What reads a bot's updates and how far it is: the backend (position: the last update delivered; lag:
 * deliveries waiting), long-poll clients (position: the last update confirmed; lag: updates buffered), routes
 * (position: the last update sent on; lag: sends waiting). `id`: the bot's id, or the route's.
 */
export const Consumer = Schema.Struct({
  kind: Schema.Literal("backend", "long_poll", "route"),
  id: Schema.Int,
  position: Schema.Int,
  lag: Schema.Int
}).annotations({ identifier: "Consumer" })
export type Consumer = typeof Consumer.Type

/** A bot: how it takes updates, its lease, its ingress, its outbox and its consumers. */
export const BotStatus = Schema.Struct({
  bot_id: Schema.Int,
  mode: Mode,
  lease: Schema.NullOr(Lease),
  /** `null` for a send-only or disabled bot. */
  ingress: Schema.NullOr(Schema.Union(PollingIngress, WebhookIngress)),
  outbox: OutboxStatus,
  consumers: Schema.Array(Consumer)
}).annotations({ identifier: "BotStatus" })
export type BotStatus = typeof BotStatus.Type

/** `GET /api/status`: the instance that answers, the live instances, and each bot. */
export const Status = Schema.Struct({
  self: Schema.String,
  instances: Schema.Array(InstanceStatus),
  bots: Schema.Array(BotStatus)
}).annotations({ identifier: "Status" })
export type Status = typeof Status.Type
