import { Errors, type LeaseStore } from "@botrelay/core"
import { LeaseQueries, type Tables } from "@botrelay/sql"
import { Array as Arr } from "effect"
import type { Kysely } from "kysely"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** The `LeaseStore` on Postgres. */
export const make = (c: Connection): LeaseStore.LeaseStoreService => ({
  heartbeat: (instance, at) =>
    c.use("heartbeat", async (db) => void (await run(db, LeaseQueries.heartbeat(db, instance.id, instance.started_at, instance.version, at)))),

  leave: (instanceId) =>
    c.transaction("leave", async (db) => {
      await run(db, LeaseQueries.releaseAll(db, instanceId))
      await run(db, LeaseQueries.forgetInstance(db, instanceId))
    }),

  instances: (since) => c.use("instances", (db) => all(db, LeaseQueries.instances(db, since))),

  leases: c.use("leases", async (db) => (await all(db, LeaseQueries.leases(db))).map(LeaseQueries.toLease)),

  acquire: (botId, instanceId, now, until) =>
    c.use(
      "acquire",
      async (db) => first(await all(db, LeaseQueries.acquire(db, botId, instanceId, now, until)), LeaseQueries.toLease)
    ),

  renew: (fences, until) =>
    c.use("renew", async (db) => {
      const renewed: Array<number> = []
      for (const chunk of Arr.chunksOf(fences, LeaseQueries.chunkSize)) {
        for (const row of await all(db, LeaseQueries.renew(db, chunk, until))) renewed.push(row.bot_id)
      }
      return renewed
    }),

  release: (fences) =>
    c.use("release", async (db) => {
      for (const chunk of Arr.chunksOf(fences, LeaseQueries.chunkSize)) await run(db, LeaseQueries.release(db, chunk))
    }),

  setRunning: (fence, running) =>
    c.use("setRunning", async (db) => void (await run(db, LeaseQueries.setRunning(db, fence, running))))
})

/**
 * Throws `LeaseLost` unless the fence holds. Inside a transaction: the lease row stays share-locked until it
 * ends, so a takeover waits for the fenced write, and a write after a takeover sees the new epoch.
 */
export const checkFence = async (db: Kysely<Tables.Database>, fence: LeaseQueries.FenceColumns | undefined) => {
  if (fence !== undefined && (await all(db, LeaseQueries.fenceHolds(db, fence).forShare())).length === 0) {
    throw new Errors.LeaseLost({ bot_id: fence.bot_id })
  }
}
