import { CannedReply, Errors } from "@botrelay/core"
import type { CannedReplyStore } from "@botrelay/core"
import { CannedReplyQueries } from "@botrelay/sql"
import { Effect } from "effect"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

const isCodeConflict = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "SQLITE_CONSTRAINT_UNIQUE"

/** Runs a write; a second reply with the code becomes `DuplicateCode`. */
const writing = <A>(operation: string, code: string, f: () => A) =>
  Effect.try({
    try: f,
    catch: (cause) =>
      isCodeConflict(cause) ? new CannedReply.DuplicateCode({ code }) : new Errors.StorageError({ operation, cause })
  })

/** The `CannedReplyStore` on SQLite. */
export const make = (c: Connection): CannedReplyStore.CannedReplyStoreService => ({
  listCannedReplies: attempt(
    "listCannedReplies",
    () => c.all(CannedReplyQueries.listCannedReplies(db)).map(CannedReplyQueries.toCannedReply)
  ),
  findCannedReply: (id) =>
    attempt("findCannedReply", () => first(c.all(CannedReplyQueries.findCannedReply(db, id)), CannedReplyQueries.toCannedReply)),
  findByCode: (code) =>
    attempt("findByCode", () => first(c.all(CannedReplyQueries.findByCode(db, code)), CannedReplyQueries.toCannedReply)),
  insertCannedReply: (input) =>
    writing(
      "insertCannedReply",
      input.code,
      () => CannedReplyQueries.toCannedReply(c.all(CannedReplyQueries.insertCannedReply(db, input))[0]!)
    ),
  updateCannedReply: (id, input) =>
    writing(
      "updateCannedReply",
      input.code,
      () => first(c.all(CannedReplyQueries.updateCannedReply(db, id, input)), CannedReplyQueries.toCannedReply)
    ),
  deleteCannedReply: (id) => attempt("deleteCannedReply", () => c.run(CannedReplyQueries.deleteCannedReply(db, id)) > 0)
})

