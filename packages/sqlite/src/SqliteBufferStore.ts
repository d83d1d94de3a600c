import type { BufferStore, LongPoll } from "@botrelay/core"
import { BufferQueries, type Tables } from "@botrelay/sql"
import { Effect } from "effect"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import { attempt, compileAll, type Connection } from "./SqliteConnection.js"

/** A page of a bot's buffer whose types are (or, with `not in`, are not) in a JSON array. */
const readBuffered = (operator: "in" | "not in") =>
(db: Kysely<Tables.Database>, botId: number, offset: number, types: string, limit: number) =>
  db.selectFrom("botrelay_long_poll_buffer")
    .select(["update_id", "payload"])
    .where("bot_id", "=", botId)
    .where("update_id", ">=", offset)
    .where("type", operator, sql<string>`(select value from json_each(${types}))`)
    .orderBy("update_id")
    .limit(limit)

const queries = compileAll({
  confirmBuffered: BufferQueries.confirmBuffered,
  keepNewestBuffered: BufferQueries.keepNewestBuffered,
  bufferedBefore: BufferQueries.bufferedBefore,
  oneBufferedBefore: BufferQueries.oneBufferedBefore,
  oneBufferedPast: BufferQueries.oneBufferedPast,
  readBufferedOnly: readBuffered("in"),
  readBufferedExcept: readBuffered("not in"),
  countBuffered: BufferQueries.countBuffered,
  bufferState: BufferQueries.bufferState,
  recordTrim: BufferQueries.recordTrim,
  setAllowedUpdates: BufferQueries.setAllowedUpdates
})

/** The `BufferStore` on SQLite: what forgets updates goes through the group commit. */
export const make = (c: Connection): BufferStore.BufferStoreService => {
  const hot = c.prepareAll(queries)

  const kept = (retention: LongPoll.BufferRetention) => Math.max(1, retention.max_updates)

  const trimBuffered = c.transaction((botId: number, retention: LongPoll.BufferRetention): number => {
    const dropped = hot.keepNewestBuffered.run(botId, botId, kept(retention) - 1) +
      hot.bufferedBefore.run(botId, retention.before)
    if (dropped > 0) hot.recordTrim.run(botId, dropped, retention.at)
    return dropped
  })

  /**
   * Whether the retention would forget any of the bot's updates. Read first, so that a trim with nothing to
   * forget (nearly every one: each poll trims) costs no write; one queued meanwhile is trimmed by the next.
   */
  const trimDue = (botId: number, retention: LongPoll.BufferRetention): boolean =>
    hot.oneBufferedPast.all(botId, kept(retention)).length > 0 ||
    hot.oneBufferedBefore.all(botId, retention.before).length > 0

  return {
    confirmBuffered: (botId, offset) =>
      c.groupCommit("confirmBuffered", () => hot.confirmBuffered.run(botId, offset)),

    keepNewestBuffered: (botId, count) =>
      c.groupCommit("keepNewestBuffered", () =>
        count < 1
          ? hot.confirmBuffered.run(botId, Number.MAX_SAFE_INTEGER)
          : hot.keepNewestBuffered.run(botId, botId, count - 1)),

    readBuffered: (botId, query) =>
      attempt("readBuffered", () =>
        "only" in query.types
          ? hot.readBufferedOnly.all(botId, query.offset, JSON.stringify(query.types.only), query.limit)
          : hot.readBufferedExcept.all(botId, query.offset, JSON.stringify(query.types.except), query.limit)),

    countBuffered: (botId) => attempt("countBuffered", () => hot.countBuffered.all(botId)[0]!.count),

    dropBuffered: (botId) =>
      c.groupCommit("dropBuffered", () => hot.confirmBuffered.run(botId, Number.MAX_SAFE_INTEGER)),

    trimBuffered: (botId, retention) =>
      Effect.flatMap(
        attempt("trimBuffered", () => trimDue(botId, retention)),
        (due) => due ? c.groupCommit("trimBuffered", () => trimBuffered(botId, retention)) : Effect.succeed(0)
      ),

    bufferState: (botId) =>
      attempt("bufferState", () => {
        const row = hot.bufferState.all(botId)[0]
        if (row === undefined) return { allowed_updates: [], trimmed: 0, last_trimmed_at: "" }
        const allowed = JSON.parse(row.allowed_updates) as Array<string>
        return { allowed_updates: allowed, trimmed: row.trimmed, last_trimmed_at: row.last_trimmed_at }
      }),

    setAllowedUpdates: (botId, types) =>
      attempt("setAllowedUpdates", () => {
        hot.setAllowedUpdates.run(botId, JSON.stringify(types))
      })
  }
}
