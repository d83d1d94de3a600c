import type { SessionStore } from "@botrelay/core"
import { SessionQueries } from "@botrelay/sql"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** The `SessionStore` on Postgres: `botrelay_sessions`, whose rows go with their account. */
export const make = (c: Connection): SessionStore.SessionStoreService => ({
  createSession: (session) =>
    c.use("createSession", async (db) => {
      await run(db, SessionQueries.createSession(db, session))
    }),

  findSession: (idHash) =>
    c.use("findSession", async (db) => first(await all(db, SessionQueries.findSession(db, idHash)), (row) => row)),

  touchSession: (idHash, at) =>
    c.use("touchSession", async (db) => {
      await run(db, SessionQueries.touchSession(db, idHash, at))
    }),

  deleteSession: (idHash) =>
    c.use("deleteSession", async (db) => {
      await run(db, SessionQueries.deleteSession(db, idHash))
    }),

  deleteAccountSessions: (accountId, exceptIdHash) =>
    c.use("deleteAccountSessions", (db) => run(db, SessionQueries.deleteAccountSessions(db, accountId, exceptIdHash))),

  pruneSessions: (idleBefore, createdBefore) =>
    c.use("pruneSessions", (db) => run(db, SessionQueries.pruneSessions(db, idleBefore, createdBefore)))
})
