import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Audit } from "@botrelay/core"
import { Schema } from "effect"

/** `schema`, its every failure told by `message`. */
const told = <S extends Schema.Schema.Any>(schema: S, message: string) =>
  schema.annotations({ message: () => ({ message, override: true }) })

const Integer = (field: string, min: number) =>
  told(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(min, Number.MAX_SAFE_INTEGER)),
    `${field} must be ${min === 0 ? "a non-negative" : "a positive"} integer`
  )

const DateTime = (field: string) =>
  told(
    Schema.String.pipe(Schema.filter((text) => Audit.instant(text) !== undefined)),
    `${field} must be an ISO 8601 date-time with a zone, such as 2025-01-31T12:00:00Z`
  )

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * Query of `GET /api/audit`: filters (each must match), a time range (`from` inclusive, `to` exclusive) and
 * a page (`limit`, `cursor` from the previous page's `next_cursor`).
 */
export const AuditQuery = Schema.Struct({
  actor_type: optional(told(Audit.ActorType, "actor_type must be account, key, cli or system")),
  actor_id: optional(Integer("actor_id", 0)),
  action: optional(told(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)),
    "action must be 1 to 100 characters, such as bots.add"
  )),
  bot_id: optional(Integer("bot_id", 1)),
  from: optional(DateTime("from")),
  to: optional(DateTime("to")),
  cursor: optional(told(
    Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
    "cursor must be a next_cursor this endpoint returned"
  )),
  limit: Schema.optionalWith(
    told(
      Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, Audit.maxPageSize)),
      `limit must be an integer from 1 to ${Audit.maxPageSize}`
    ),
    { default: () => Audit.defaultPageSize }
  )
})

/**
 * The audit log, newest first, for admins. The API adds its authorization middleware (`Api.ts`), which this
 * module cannot import without a cycle.
 */
export class AuditGroup extends HttpApiGroup.make("audit")
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(AuditQuery).addSuccess(Audit.AuditPage))
  .prefix("/audit")
{}
