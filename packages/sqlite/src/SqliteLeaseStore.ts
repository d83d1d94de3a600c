import { Errors, type LeaseStore } from "@botrelay/core"
import { LeaseQueries } from "@botrelay/sql"
import { Array as Arr, Option } from "effect"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `LeaseStore` on SQLite (for the conformance suite and tests of several instances in one process). */
export const make = (c: Connection): LeaseStore.LeaseStoreService => ({
  heartbeat: (instance, at) =>
    attempt("heartbeat", () => void c.run(LeaseQueries.heartbeat(db, instance.id, instance.started_at, instance.version, at))),

  leave: (instanceId) =>
    attempt("leave", () =>
      c.transaction(() => {
        c.run(LeaseQueries.releaseAll(db, instanceId))
        c.run(LeaseQueries.forgetInstance(db, instanceId))
      })()),

  instances: (since) => attempt("instances", () => c.all(LeaseQueries.instances(db, since))),

  leases: attempt("leases", () => c.all(LeaseQueries.leases(db)).map(LeaseQueries.toLease)),

  acquire: (botId, instanceId, now, until) =>
    attempt("acquire", () => first(c.all(LeaseQueries.acquire(db, botId, instanceId, now, until)), LeaseQueries.toLease)),

  renew: (fences, until) =>
    attempt("renew", () =>
      Arr.chunksOf(fences, LeaseQueries.chunkSize).flatMap((chunk) =>
        c.all(LeaseQueries.renew(db, chunk, until)).map((r) => r.bot_id)
      )),

  release: (fences) =>
    attempt("release", () => {
      for (const chunk of Arr.chunksOf(fences, LeaseQueries.chunkSize)) c.run(LeaseQueries.release(db, chunk))
    }),

  setRunning: (fence, running) => attempt("setRunning", () => void c.run(LeaseQueries.setRunning(db, fence, running)))
})

/** Throws `LeaseLost` unless the fence holds (inside a transaction, so the write that follows is fenced). */
export const checkFence = (c: Connection, fence: LeaseQueries.FenceColumns | undefined): void => {
  if (fence !== undefined && Option.isNone(first(c.all(LeaseQueries.fenceHolds(db, fence)), (r) => r.epoch))) {
    throw new Errors.LeaseLost({ bot_id: fence.bot_id })
  }
}
