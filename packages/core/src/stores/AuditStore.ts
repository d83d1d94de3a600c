import type { Effect } from "effect"
import { Context } from "effect"
import type { AuditEntry, AuditQuery, NewAuditEntry } from "../domain/Audit.js"
import type { StorageError } from "../domain/Errors.js"

/** The audit log: append-only; entries leave it only by age (`pruneAudit`). */
export interface AuditStoreService {
  /** Appends the entries in order, in one write; their ids, increasing, in the same order. Ids are never reused. */
  readonly appendAudit: (entries: ReadonlyArray<NewAuditEntry>) => Effect.Effect<ReadonlyArray<number>, StorageError>
  /** The entries the query matches, newest (highest id) first, at most `limit`. */
  readonly listAudit: (query: AuditQuery) => Effect.Effect<ReadonlyArray<AuditEntry>, StorageError>
  /** Deletes, oldest first, at most `limit` entries whose `at` is before `before` (ISO 8601); returns how many. */
  readonly pruneAudit: (before: string, limit: number) => Effect.Effect<number, StorageError>
}

/** The audit log; the host's driver provides it. */
export class AuditStore extends Context.Tag("@botrelay/core/AuditStore")<AuditStore, AuditStoreService>() {}
