import type { BufferStore } from "@botrelay/core"
import { BufferQueries, type Tables } from "@botrelay/sql"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import { all, type Connection, run } from "./PostgresConnection.js"

/** A page of a bot's buffer whose types are (or, with `except`, are not) among some. */
const readBuffered = (
  db: Kysely<Tables.Database>,
  botId: number,
  offset: number,
  types: ReadonlyArray<string>,
  except: boolean,
  limit: number
) =>
  db.selectFrom("botrelay_long_poll_buffer")
    .select(["update_id", "payload"])
    .where("bot_id", "=", botId)
    .where("update_id", ">=", offset)
    .where(except ? sql<boolean>`not (type = any(${[...types]}::text[]))` : sql<boolean>`type = any(${[...types]}::text[])`)
    .orderBy("update_id")
    .limit(limit)

/** The `BufferStore` on Postgres. */
export const make = (c: Connection): BufferStore.BufferStoreService => ({
  confirmBuffered: (botId, offset) => c.use("confirmBuffered", (db) => run(db, BufferQueries.confirmBuffered(db, botId, offset))),

  keepNewestBuffered: (botId, count) =>
    c.use("keepNewestBuffered", (db) =>
      run(
        db,
        count < 1
          ? BufferQueries.confirmBuffered(db, botId, Number.MAX_SAFE_INTEGER)
          : BufferQueries.keepNewestBuffered(db, botId, botId, count - 1)
      )),

  readBuffered: (botId, query) =>
    c.use("readBuffered", (db) =>
      all(
        db,
        "only" in query.types
          ? readBuffered(db, botId, query.offset, query.types.only, false, query.limit)
          : readBuffered(db, botId, query.offset, query.types.except, true, query.limit)
      )),

  countBuffered: (botId) => c.use("countBuffered", async (db) => (await all(db, BufferQueries.countBuffered(db, botId)))[0]!.count),

  dropBuffered: (botId) =>
    c.use("dropBuffered", (db) => run(db, BufferQueries.confirmBuffered(db, botId, Number.MAX_SAFE_INTEGER))),

  trimBuffered: (botId, retention) =>
    c.transaction("trimBuffered", async (db) => {
      const dropped = (await run(db, BufferQueries.keepNewestBuffered(db, botId, botId, Math.max(0, retention.max_updates - 1)))) +
        (await run(db, BufferQueries.bufferedBefore(db, botId, retention.before)))
      if (dropped > 0) await run(db, BufferQueries.recordTrim(db, botId, dropped, retention.at))
      return dropped
    }),

  bufferState: (botId) =>
    c.use("bufferState", async (db) => {
      const [row] = await all(db, BufferQueries.bufferState(db, botId))
      if (row === undefined) return { allowed_updates: [], trimmed: 0, last_trimmed_at: "" }
      const allowed = JSON.parse(row.allowed_updates) as Array<string>
      return { allowed_updates: allowed, trimmed: row.trimmed, last_trimmed_at: row.last_trimmed_at }
    }),

  setAllowedUpdates: (botId, types) =>
    c.use("setAllowedUpdates", async (db) => {
      await run(db, BufferQueries.setAllowedUpdates(db, botId, JSON.stringify(types)))
    })
})
