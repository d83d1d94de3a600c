import type { IdempotencyStore } from "@botrelay/core"
import { IdempotencyQueries } from "@botrelay/sql"
import { Option } from "effect"
import { attempt, type Connection, db } from "./SqliteConnection.js"

/** The `IdempotencyStore` on SQLite: a claim is one write, so it cannot race another. */
export const make = (c: Connection): IdempotencyStore.IdempotencyStoreService => ({
  claim: (caller, key, request, now, expiredBefore) =>
    c.groupCommit("claimIdempotencyKey", () => {
      if (c.all(IdempotencyQueries.insertClaim(db, caller, key, request, now)).length > 0) return Option.none()
      if (c.all(IdempotencyQueries.replaceExpired(db, request, now, caller, key, expiredBefore)).length > 0) {
        return Option.none()
      }
      return Option.fromNullable(c.all(IdempotencyQueries.findClaim(db, caller, key))[0])
    }),
  complete: (caller, key, status, body) =>
    attempt("completeIdempotencyKey", () => {
      c.run(IdempotencyQueries.complete(db, status, body, caller, key))
    }),
  release: (caller, key) =>
    attempt("releaseIdempotencyKey", () => {
      c.run(IdempotencyQueries.release(db, caller, key))
    }),
  sweep: (before) => attempt("sweepIdempotencyKeys", () => c.run(IdempotencyQueries.sweep(db, before)))
})
