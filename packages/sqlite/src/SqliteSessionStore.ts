import type { SessionStore } from "@botrelay/core"
import { SessionQueries } from "@botrelay/sql"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `SessionStore` on SQLite: `botrelay_sessions`, whose rows go with their account. */
export const make = (c: Connection): SessionStore.SessionStoreService => ({
  createSession: (session) =>
    attempt("createSession", () => {
      c.run(SessionQueries.createSession(db, session))
    }),

  findSession: (idHash) => attempt("findSession", () => first(c.all(SessionQueries.findSession(db, idHash)), (row) => row)),

  touchSession: (idHash, at) =>
    attempt("touchSession", () => {
      c.run(SessionQueries.touchSession(db, idHash, at))
    }),

  deleteSession: (idHash) =>
    attempt("deleteSession", () => {
      c.run(SessionQueries.deleteSession(db, idHash))
    }),

  deleteAccountSessions: (accountId, exceptIdHash) =>
    attempt("deleteAccountSessions", () => c.run(SessionQueries.deleteAccountSessions(db, accountId, exceptIdHash))),

  pruneSessions: (idleBefore, createdBefore) =>
    attempt("pruneSessions", () => c.run(SessionQueries.pruneSessions(db, idleBefore, createdBefore)))
})
