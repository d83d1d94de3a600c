import { Schema } from "effect"

/** What an instance id may be: 1 to 64 characters of `A-Z a-z 0-9 . _ -`. */
export const instanceIdPattern = /^[A-Za-z0-9._-]{1,64}$/

/** An instance's id, as `BOTRELAY_INSTANCE_ID` sets it and `X-Botrelay-Instance` carries it. */
export const InstanceId = Schema.String.pipe(
  Schema.pattern(instanceIdPattern, {
    message: () => "the instance id must be 1 to 64 characters of A-Z a-z 0-9 . _ -"
  })
).annotations({ identifier: "InstanceId" })

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
  started_at: Schema.String,
  last_heartbeat_at: Schema.String,
  /** How many bots this instance runs. */
  leases: Schema.Int
}).annotations({ identifier: "InstanceStatus" })
export type InstanceStatus = typeof InstanceStatus.Type

/** A bot and its lease; `null` where there are no leases (SQLite: one instance runs every bot). */
export const BotLease = Schema.Struct({
  bot_id: Schema.Int,
  lease: Schema.NullOr(Lease)
}).annotations({ identifier: "BotLease" })
export type BotLease = typeof BotLease.Type

/** `GET /api/status`: the instance that answers, the live instances, and each bot's lease. */
export const Status = Schema.Struct({
  self: Schema.String,
  instances: Schema.Array(InstanceStatus),
  bots: Schema.Array(BotLease)
}).annotations({ identifier: "Status" })
export type Status = typeof Status.Type
