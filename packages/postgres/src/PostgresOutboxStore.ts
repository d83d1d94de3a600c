import type { OutboxStore } from "@botrelay/core"
import { Columns, MappingQueries, OutboxQueries } from "@botrelay/sql"
import { Option } from "effect"
import * as Batches from "./Batches.js"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** The `OutboxStore` on Postgres. */
export const make = (c: Connection): OutboxStore.OutboxStoreService => ({
  nextDeliveries: (botId, limit) =>
    c.use("nextDeliveries", async (db) =>
      (await all(db, OutboxQueries.nextDeliveries(db, botId, limit))).map(OutboxQueries.toDelivery)),

  recordAttempts: (attempts) =>
    c.transaction("recordAttempts", async (db) => {
      const delivered: Array<{ id: number; at: string }> = []
      for (const [id, outcome] of attempts) {
        switch (outcome.status) {
          case "delivered":
            delivered.push({ id, at: outcome.at })
            break
          case "pending":
            await run(db, OutboxQueries.retryLater("botrelay_deliveries")(db, outcome.next_attempt_at, outcome.last_error, outcome.at, id))
            break
          case "dead":
            await run(db, OutboxQueries.dead("botrelay_deliveries")(db, outcome.last_error, outcome.at, id))
            break
        }
      }
      for (const chunk of Batches.chunks(delivered)) await Batches.delivered(db, chunk)
    }),

  listDeliveries: (filter) =>
    c.use("listDeliveries", async (db) =>
      (await all(db, OutboxQueries.listDeliveries(db, filter))).map(OutboxQueries.toDelivery)),

  retryDelivery: (id, at) =>
    c.use("retryDelivery", async (db) => first(await all(db, OutboxQueries.retryDelivery(db, id, at)), OutboxQueries.toDelivery)),

  getDelivery: (id) =>
    c.use("getDelivery", async (db) => first(await all(db, OutboxQueries.getDelivery(db, id)), OutboxQueries.toDelivery)),

  discardDelivery: (id, at) =>
    c.use("discardDelivery", async (db) => first(await all(db, OutboxQueries.discardDelivery(db, id, at)), OutboxQueries.toDelivery)),

  retryDead: (botId, at) =>
    c.use("retryDead", async (db) => (await all(db, OutboxQueries.retryDead(db, botId, at))).map(OutboxQueries.toDelivery)),

  discardDead: (botId, at) =>
    c.use("discardDead", async (db) => (await all(db, OutboxQueries.discardDead(db, botId, at))).map(OutboxQueries.toDelivery)),

  replayUpdates: (replay) =>
    c.transaction("replayUpdates", async (db) => {
      const held = await all(db, OutboxQueries.replayCandidates(db, replay.bot_id, replay.range, replay.max + 1))
      if (held.length > replay.max) return Option.none()
      const deliveries = held.filter((u) => Number(u.replayable) === 1).map((u) => ({
        bot_id: replay.bot_id,
        update_id: u.update_id,
        url: replay.url,
        payload: u.payload,
        created_at: replay.at
      }))
      for (const chunk of Batches.chunks(deliveries)) await run(db, Batches.queueDeliveries(db, chunk))
      return Option.some({ queued: deliveries.length, held: held.length })
    }),

  retargetDeliveries: (botId, url, at) =>
    c.use("retargetDeliveries", (db) => run(db, OutboxQueries.retargetDeliveries(db, botId, url, at))),

  nextSends: (botId, limit) =>
    c.use("nextSends", async (db) => (await all(db, OutboxQueries.nextSends(db, botId, limit))).map(OutboxQueries.toRouteSend)),

  recordSend: (id, outcome, mappings) =>
    c.transaction("recordSend", async (db) => {
      let changed: number
      switch (outcome.status) {
        case "sent":
          changed = await run(db, OutboxQueries.sent(db, outcome.at, id))
          break
        case "pending":
          changed = await run(
            db,
            OutboxQueries.retryLater("botrelay_route_sends")(db, outcome.next_attempt_at, outcome.last_error, outcome.at, id)
          )
          break
        case "dead":
          changed = await run(db, OutboxQueries.dead("botrelay_route_sends")(db, outcome.last_error, outcome.at, id))
          break
      }
      if (changed === 0) return
      for (const m of mappings) {
        await run(
          db,
          MappingQueries.insertMapping(
            db,
            m.route_id,
            m.source_bot_id,
            m.source_chat_id,
            m.source_message_id,
            m.target_bot_id,
            m.target_chat_id,
            m.target_message_id,
            m.hop,
            Columns.bit(m.reversible),
            m.created_at
          )
        )
      }
    }),

  listSends: (filter) =>
    c.use("listSends", async (db) => (await all(db, OutboxQueries.listSends(db, filter))).map(OutboxQueries.toRouteSend))
})
