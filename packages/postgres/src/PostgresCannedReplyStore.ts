import { CannedReply } from "@botrelay/core"
import type { CannedReplyStore } from "@botrelay/core"
import { CannedReplyQueries } from "@botrelay/sql"
import { Effect } from "effect"
import { all, type Connection, first, isUniqueViolation, run } from "./PostgresConnection.js"

const codeIndex = "botrelay_canned_replies_code"

/** The `CannedReplyStore` on Postgres. */
export const make = (c: Connection): CannedReplyStore.CannedReplyStoreService => ({
  listCannedReplies: c.use(
    "listCannedReplies",
    async (db) => (await all(db, CannedReplyQueries.listCannedReplies(db))).map(CannedReplyQueries.toCannedReply)
  ),
  findCannedReply: (id) =>
    c.use("findCannedReply", async (db) => first(await all(db, CannedReplyQueries.findCannedReply(db, id)), CannedReplyQueries.toCannedReply)),
  findByCode: (code) =>
    c.use("findByCode", async (db) => first(await all(db, CannedReplyQueries.findByCode(db, code)), CannedReplyQueries.toCannedReply)),
  insertCannedReply: (input) =>
    c.use("insertCannedReply", async (db) =>
      CannedReplyQueries.toCannedReply((await all(db, CannedReplyQueries.insertCannedReply(db, input)))[0]!)).pipe(
        Effect.catchIf((e) => isUniqueViolation(e.cause, codeIndex), () =>
          Effect.fail(new CannedReply.DuplicateCode({ code: input.code })))
      ),
  updateCannedReply: (id, input) =>
    c.use("updateCannedReply", async (db) =>
      first(await all(db, CannedReplyQueries.updateCannedReply(db, id, input)), CannedReplyQueries.toCannedReply)).pipe(
        Effect.catchIf((e) => isUniqueViolation(e.cause, codeIndex), () =>
          Effect.fail(new CannedReply.DuplicateCode({ code: input.code })))
      ),
  deleteCannedReply: (id) => c.use("deleteCannedReply", async (db) => (await run(db, CannedReplyQueries.deleteCannedReply(db, id))) > 0)
})
