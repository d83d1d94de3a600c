import type { IdempotencyStore } from "@botrelay/core"
import { IdempotencyQueries } from "@botrelay/sql"
import { Option } from "effect"
import { all, type Connection, run } from "./PostgresConnection.js"

/** The `IdempotencyStore` on Postgres: the key's row is the lock, so instances sharing the database see one claim. */
export const make = (c: Connection): IdempotencyStore.IdempotencyStoreService => ({
  claim: (caller, key, request, now, expiredBefore) =>
    c.transaction("claimIdempotencyKey", async (db) => {
      if ((await all(db, IdempotencyQueries.insertClaim(db, caller, key, request, now))).length > 0) return Option.none()
      if ((await all(db, IdempotencyQueries.replaceExpired(db, request, now, caller, key, expiredBefore))).length > 0) {
        return Option.none()
      }
      return Option.fromNullable((await all(db, IdempotencyQueries.findClaim(db, caller, key)))[0])
    }),
  complete: (caller, key, status, body) =>
    c.use("completeIdempotencyKey", async (db) => {
      await run(db, IdempotencyQueries.complete(db, status, body, caller, key))
    }),
  release: (caller, key) =>
    c.use("releaseIdempotencyKey", async (db) => {
      await run(db, IdempotencyQueries.release(db, caller, key))
    }),
  sweep: (before) => c.use("sweepIdempotencyKeys", (db) => run(db, IdempotencyQueries.sweep(db, before)))
})
