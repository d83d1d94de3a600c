import { Clock, Duration, Effect } from "effect"
import type { StorageError } from "../domain/Errors.js"
import { AuditStore } from "../stores/AuditStore.js"

/** How long audit entries are kept, and how often retention runs. */
export interface Options {
  readonly retention: Duration.DurationInput
  readonly sweepInterval: Duration.DurationInput
}

/** DESIGN.md section 10: entries are kept 365 days; retention runs every hour. */
export const defaults: Options = { retention: Duration.days(365), sweepInterval: Duration.hours(1) }

/** Entries one retention statement deletes. */
const chunk = 1000

/** Deletes, a chunk at a time, the entries older than `retention`; returns how many. */
export const sweep = (retention: Duration.DurationInput): Effect.Effect<number, StorageError, AuditStore> =>
  Effect.gen(function*() {
    const store = yield* AuditStore
    const age = Duration.toMillis(retention)
    if (!Number.isFinite(age)) return 0
    const before = new Date((yield* Clock.currentTimeMillis) - age).toISOString()
    let deleted = 0
    while (true) {
      const round = yield* store.pruneAudit(before, chunk)
      deleted += round
      if (round < chunk) break
      yield* Effect.yieldNow()
    }
    if (deleted > 0) yield* Effect.logDebug("pruned the audit log").pipe(Effect.annotateLogs({ deleted }))
    return deleted
  })

/** Sweeps now and then every `sweepInterval` for as long as it runs; a failed sweep is logged and retried next time. */
export const run = (options: Options = defaults): Effect.Effect<never, never, AuditStore> =>
  sweep(options.retention).pipe(
    Effect.catchAll((e) => Effect.logWarning("audit log retention failed", e.cause)),
    Effect.zipRight(Effect.sleep(options.sweepInterval)),
    Effect.forever
  )
