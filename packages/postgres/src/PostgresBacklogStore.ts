import type { BacklogStore } from "@botrelay/core"
import { BacklogQueries } from "@botrelay/sql"
import { all, type Connection } from "./PostgresConnection.js"

/** The `BacklogStore` on Postgres. */
export const make = (c: Connection): BacklogStore.BacklogStoreService => ({
  read: (now) => c.use("backlog", async (db) => BacklogQueries.toBacklog(await all(db, BacklogQueries.backlog(db, now))))
})
