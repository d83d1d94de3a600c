import { Clock, Context, Effect, Either, Layer } from "effect"
import {
  type Actor,
  type ActorType,
  auditCursor,
  type AuditPage,
  decodeAuditCursor,
  defaultPageSize,
  instant,
  maxPageSize,
  type NewAuditEntry,
  safeDetails
} from "../domain/Audit.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import { AuditStore } from "../stores/AuditStore.js"

/** What a caller records: an entry without its time, which the log stamps. */
export type AuditRecord = Omit<NewAuditEntry, "at">

/** A request for a page of the audit log; every filter given must match. */
export interface AuditRequest {
  readonly actor_type?: ActorType | undefined
  readonly actor_id?: number | undefined
  readonly action?: string | undefined
  readonly bot_id?: number | undefined
  /** ISO 8601 date-times with a zone: entries at or after `from` and before `to`. */
  readonly from?: string | undefined
  readonly to?: string | undefined
  /** 1..200; 50 when omitted. */
  readonly limit?: number | undefined
  /** `next_cursor` of the previous page. */
  readonly cursor?: string | undefined
}

/** The audit log: who did what, when, and how it ended. */
export interface AuditLogService {
  /**
   * Appends an entry stamped with the current time, its details without secrets. Never fails: an entry
   * that cannot be stored is logged as a warning (without its details) and dropped.
   */
  readonly record: (entry: AuditRecord) => Effect.Effect<void>
  /** A page of the entries the request matches, newest first. */
  readonly list: (request: AuditRequest) => Effect.Effect<AuditPage, InvalidInput | StorageError>
}

/** The audit log of an instance. */
export class AuditLog extends Context.Tag("@botrelay/core/AuditLog")<AuditLog, AuditLogService>() {}

/** Retention of the log: the supervisor runs it (`run`) with the instance's options. */
export { defaults, type Options, run, sweep } from "../runtime/AuditRetention.js"

const invalidTime = (field: string) =>
  InvalidInput.field(field, `${field} must be an ISO 8601 date-time with a zone, such as 2025-01-31T12:00:00Z`)

/** `from` or `to` as entries' `at` is written; a failure naming the field when it is not a date-time. */
const timeOf = (field: "from" | "to", text: string | undefined): Effect.Effect<string | undefined, InvalidInput> => {
  if (text === undefined) return Effect.succeed(undefined)
  const at = instant(text)
  return at === undefined ? Effect.fail(invalidTime(field)) : Effect.succeed(at)
}

/**
 * Builds the service on the store. `record` appends each entry directly, without a queue of its own: the
 * SQLite store's group commit already shares one commit among the writes of an event-loop turn, so a
 * record costs its caller one shared commit, and an entry is durable before the answer it belongs to
 * leaves (a queue would lose its last entries in a crash and need draining at shutdown).
 */
export const make: Effect.Effect<AuditLogService, never, AuditStore> = Effect.gen(function*() {
  const store = yield* AuditStore

  const record = (entry: AuditRecord): Effect.Effect<void> =>
    Effect.gen(function*() {
      const at = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* store.appendAudit([{ ...entry, at, details: safeDetails(entry.details) }])
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("could not record an audit entry", cause).pipe(
          Effect.annotateLogs({ action: entry.action, outcome: entry.outcome })
        )
      )
    )

  const list = (request: AuditRequest): Effect.Effect<AuditPage, InvalidInput | StorageError> =>
    Effect.gen(function*() {
      const limit = request.limit ?? defaultPageSize
      if (!Number.isInteger(limit) || limit < 1 || limit > maxPageSize) {
        return yield* Effect.fail(InvalidInput.field("limit", `limit must be an integer from 1 to ${maxPageSize}`))
      }
      const before = request.cursor === undefined ? undefined : decodeAuditCursor(request.cursor)
      if (before !== undefined && Either.isLeft(before)) {
        return yield* Effect.fail(InvalidInput.field("cursor", before.left))
      }
      const found = yield* store.listAudit({
        actor_type: request.actor_type,
        actor_id: request.actor_id,
        action: request.action,
        bot_id: request.bot_id,
        from: yield* timeOf("from", request.from),
        to: yield* timeOf("to", request.to),
        before_id: before?.right,
        limit: limit + 1
      })
      const items = found.slice(0, limit)
      return { items, next_cursor: found.length > limit ? auditCursor(items[items.length - 1]!) : null }
    }).pipe(Effect.withSpan("AuditLog.list"))

  return AuditLog.of({ record, list })
})

/** The audit log as a layer, on the host's store. */
export const layer: Layer.Layer<AuditLog, never, AuditStore> = Layer.effect(AuditLog, make)

/** The command line, as an actor. */
export const cli: Actor = { type: "cli", id: 0, name: "cli" }

/** Botrelay itself (start-up, housekeeping), as an actor. */
export const system: Actor = { type: "system", id: 0, name: "system" }

/** Records a change an actor made outside any request (no address, no bot or chat). */
export const recordDone = (
  actor: Actor,
  action: string,
  target: { readonly target_type: string; readonly target_id: string | number; readonly details?: Record<string, unknown> }
): Effect.Effect<void, never, AuditLog> =>
  Effect.flatMap(AuditLog, (log) =>
    log.record({
      actor_type: actor.type,
      actor_id: actor.id,
      actor_name: actor.name,
      ip: "",
      action,
      target_type: target.target_type,
      target_id: String(target.target_id),
      bot_id: null,
      chat_id: null,
      outcome: "ok",
      details: target.details ?? {}
    }))
