import type { Delivery, InboxStore, Message, RouteSend, Sighting } from "@botrelay/core"
import { InboxQueries, LeaseQueries, OutboxQueries, type Tables } from "@botrelay/sql"
import { Option } from "effect"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import * as Batches from "./Batches.js"
import { all, type Connection, run } from "./PostgresConnection.js"
import { writeSightings } from "./PostgresChatStore.js"
import { checkFence } from "./PostgresLeaseStore.js"
import { saveMessages } from "./PostgresMessageStore.js"

/** The oldest processed inbox rows received before a time, oldest first. */
const pruneUpdates = (db: Kysely<Tables.Database>, before: string, limit: number) =>
  db.deleteFrom("botrelay_inbox").where(
    sql<boolean>`(bot_id, update_id) in (${
      db.selectFrom("botrelay_inbox")
        .select(["bot_id", "update_id"])
        .where("processed", "=", sql.lit(1))
        .where("received_at", "<", before)
        .orderBy("received_at")
        .limit(limit)
    })`
  )

/** The `InboxStore` on Postgres. */
export const make = (c: Connection): InboxStore.InboxStoreService => ({
  ingressOffset: (botId) =>
    c.use("ingressOffset", async (db) => (await all(db, InboxQueries.ingressOffset(db, botId)))[0]?.offset ?? 0),

  commitUpdates: (botId, updates, nextOffset, fence) =>
    LeaseQueries.surfaceLeaseLost(c.transaction("commitUpdates", async (db) => {
      await checkFence(db, fence)
      let added = 0
      for (const chunk of Batches.chunks(updates)) added += await run(db, Batches.insertUpdates(db, botId, chunk))
      await run(db, InboxQueries.raiseOffset(db, botId, nextOffset))
      return added
    })),

  webhookSecret: (botId) =>
    c.use("webhookSecret", async (db) =>
      Option.map(
        Option.fromNullable((await all(db, InboxQueries.webhookSecret(db, botId)))[0]?.secret),
        (secret) => c.cipher.decrypt("webhook_secret", secret)
      )),

  setWebhookSecret: (botId, secret) =>
    c.use("setWebhookSecret", async (db) => {
      await run(
        db,
        secret === undefined
          ? InboxQueries.clearWebhookSecret(db, botId)
          : InboxQueries.setWebhookSecret(db, botId, c.cipher.encrypt("webhook_secret", secret))
      )
    }),

  webhookUrl: (botId) =>
    c.use("webhookUrl", async (db) => (await all(db, InboxQueries.webhookUrl(db, botId)))[0]?.url ?? ""),

  setWebhookUrl: (botId, url) =>
    c.use("setWebhookUrl", async (db) => void (await run(db, InboxQueries.setWebhookUrl(db, botId, url)))),

  pendingUpdates: (botId, limit) =>
    c.use("pendingUpdates", async (db) =>
      (await all(db, InboxQueries.pendingUpdates(db, botId, limit))).map(InboxQueries.toInboxUpdate)),

  completeUpdates: (completions, fence) =>
    LeaseQueries.surfaceLeaseLost(c.transaction("completeUpdates", async (db) => {
      await checkFence(db, fence)
      const byBot = new Map<number, Set<number>>()
      for (const { bot_id, update_id } of completions) {
        let ids = byBot.get(bot_id)
        if (ids === undefined) byBot.set(bot_id, ids = new Set())
        ids.add(update_id)
      }
      const fresh = new Set<string>()
      for (const [botId, ids] of byBot) {
        for (const chunk of Batches.chunks([...ids])) {
          for (const row of await all(db, Batches.markProcessed(db, botId, chunk))) fresh.add(`${botId}:${row.update_id}`)
        }
      }
      const messages: Array<Message.Message> = []
      const deliveries: Array<Delivery.NewDelivery> = []
      const sends: Array<RouteSend.NewRouteSend> = []
      const buffered: Array<Batches.Buffered> = []
      const dropped = new Map<number, Array<number>>()
      let sightings: Array<Sighting.Sighting> | undefined
      for (const completion of completions) {
        // An update processed already (or listed twice) writes nothing more.
        if (!fresh.delete(`${completion.bot_id}:${completion.update_id}`)) continue
        if (completion.dropped === true) {
          const ids = dropped.get(completion.bot_id)
          if (ids === undefined) dropped.set(completion.bot_id, [completion.update_id])
          else ids.push(completion.update_id)
        }
        for (const message of completion.messages) messages.push(message)
        if (completion.sighting !== undefined) (sightings ??= []).push(completion.sighting)
        for (const d of completion.deliveries) deliveries.push(d)
        for (const r of completion.sends ?? []) sends.push(r)
        const b = completion.buffer
        if (b !== undefined) buffered.push({ bot_id: completion.bot_id, update_id: completion.update_id, ...b })
      }
      for (const [botId, ids] of dropped) {
        for (const chunk of Batches.chunks(ids)) await run(db, Batches.markDropped(db, botId, chunk))
      }
      for (const chunk of Batches.chunks(deliveries)) await run(db, Batches.queueDeliveries(db, chunk))
      for (const chunk of Batches.chunks(sends)) await run(db, Batches.queueSends(db, chunk))
      for (const chunk of Batches.chunks(buffered)) await run(db, Batches.insertBuffered(db, chunk))
      await saveMessages(db, messages)
      if (sightings !== undefined) await writeSightings(db, sightings)
    })),

  backlog: (botId) => c.use("backlog", async (db) => (await all(db, InboxQueries.backlog(db, botId, botId)))[0]!.backlog),

  pruneFinished: (before, limit) =>
    c.transaction("pruneFinished", async (db) => {
      const updates = await run(db, pruneUpdates(db, before, limit))
      const delivered = await run(db, OutboxQueries.pruneDeliveries(db, "delivered", before, limit))
      const discarded = await run(db, OutboxQueries.pruneDeliveries(db, "discarded", before, limit - delivered))
      return {
        updates,
        deliveries: delivered + discarded,
        sends: await run(db, OutboxQueries.pruneSends(db, before, limit))
      }
    }),

  botsWithWork: c.use("botsWithWork", async (db) => (await all(db, InboxQueries.botsWithWork(db))).map((r) => r.bot_id))
})
