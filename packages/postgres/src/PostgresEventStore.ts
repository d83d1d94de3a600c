import type { EventStore } from "@botrelay/core"
import { BridgeQueries, EventQueries } from "@botrelay/sql"
import { Effect } from "effect"
import { sql } from "kysely"
import * as Batches from "./Batches.js"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/**
 * The `EventStore` on Postgres: ids are handed out a batch at a time from `botrelay_event_state`, under its row lock,
 * and a batch's entries are written in one statement, with the bridge deliveries they queue in the same transaction.
 */
export const make = (c: Connection): EventStore.EventStoreService => ({
  appendEvents: (entries) =>
    entries.length === 0 ? Effect.succeed([]) : c.transaction("appendEvents", async (db) => {
      const [state] = await all(
        db,
        db.updateTable("botrelay_event_state")
          .set((eb) => ({ last_id: eb("last_id", "+", entries.length) }))
          .where("id", "=", sql.lit(1))
          .returning("last_id")
      )
      const start = state!.last_id - entries.length + 1
      const rows = entries.map((e, i) => ({ id: start + i, bot_id: e.bot_id, chat_id: e.chat_id, type: e.type, data: e.data, created_at: e.created_at }))
      for (const chunk of Batches.chunks(rows)) await run(db, db.insertInto("botrelay_events").values([...chunk]))
      const bridges = await all(db, BridgeQueries.enabledBridges(db))
      if (bridges.length > 0) {
        const candidates = BridgeQueries.botsOf(rows)
        const bots = candidates.length === 0 ? [] : await all(db, BridgeQueries.existingBots(db, candidates))
        const queued = BridgeQueries.deliveriesOf(bridges, rows, new Set(bots.map((r) => r.id)))
        for (const chunk of Batches.chunks(queued)) await run(db, BridgeQueries.insertDeliveries(db, chunk))
      }
      return entries.map((_, i) => start + i)
    }),

  readEvents: (query) =>
    c.use("readEvents", async (db) => (await all(db, EventQueries.readEvents(db, query))).map(EventQueries.toLogEntry)),

  oldestEventId: c.use("oldestEventId", async (db) => first(await all(db, EventQueries.oldestEventId(db)), (r) => r.id)),

  newestEvent: c.use("newestEvent", async (db) => first(await all(db, EventQueries.newestEvent(db)), EventQueries.toLogEntry)),

  pruneEvents: (before, keep, limit) =>
    c.transaction("pruneEvents", async (db) => {
      const newest = (await all(db, EventQueries.newestEvent(db)))[0]?.id
      if (newest === undefined) return 0
      const since = (await all(db, EventQueries.firstEventSince(db, before)))[0]?.id
      const upTo = Math.min(newest - Math.max(0, keep), since === undefined ? newest : since - 1)
      return upTo <= 0 ? 0 : run(db, EventQueries.pruneEvents(db, upTo, before, limit))
    })
})
