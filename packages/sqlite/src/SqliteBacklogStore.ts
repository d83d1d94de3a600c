import type { BacklogStore } from "@botrelay/core"
import { BacklogQueries } from "@botrelay/sql"
import { attempt, type Connection, db } from "./SqliteConnection.js"

/** The `BacklogStore` on SQLite. */
export const make = (c: Connection): BacklogStore.BacklogStoreService => ({
  read: (now) => attempt("backlog", () => BacklogQueries.toBacklog(c.all(BacklogQueries.backlog(db, now))))
})
