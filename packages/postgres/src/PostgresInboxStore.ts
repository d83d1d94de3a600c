import type { InboxStore, Message, Sighting } from "@botrelay/core"
import { BufferQueries, InboxQueries, LeaseQueries, OutboxQueries, type Tables } from "@botrelay/sql"
import { Option } from "effect"
import type { Kysely } from "kysely"
import { sql } from "kysely"
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
      for (const update of updates) {
        added += await run(db, InboxQueries.insertUpdate(db, botId, update.update_id, update.payload, update.received_at))
      }
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

  pendingUpdates: (botId, limit) =>
    c.use("pendingUpdates", async (db) =>
      (await all(db, InboxQueries.pendingUpdates(db, botId, limit))).map(InboxQueries.toInboxUpdate)),

  completeUpdates: (completions, fence) =>
    LeaseQueries.surfaceLeaseLost(c.transaction("completeUpdates", async (db) => {
      await checkFence(db, fence)
      const messages: Array<Message.Message> = []
      let sightings: Array<Sighting.Sighting> | undefined
      for (const completion of completions) {
        if ((await run(db, InboxQueries.markProcessed(db, completion.bot_id, completion.update_id))) === 0) continue
        for (const message of completion.messages) messages.push(message)
        if (completion.sighting !== undefined) (sightings ??= []).push(completion.sighting)
        for (const d of completion.deliveries) {
          await run(
            db,
            OutboxQueries.queueDelivery(db, d.bot_id, d.update_id, d.url, d.payload, d.created_at, d.created_at, d.created_at)
          )
        }
        for (const r of completion.sends ?? []) {
          await run(
            db,
            OutboxQueries.queueSend(
              db,
              r.bot_id,
              r.kind,
              r.route_id,
              r.source_bot_id,
              r.update_id,
              r.from_chat_id,
              r.message_id,
              r.chat_id,
              r.reply_to_message_id,
              r.hop,
              r.created_at,
              r.created_at,
              r.created_at
            )
          )
        }
        const b = completion.buffer
        if (b !== undefined) {
          await run(db, BufferQueries.insertBuffered(db, completion.bot_id, completion.update_id, b.type, b.payload, b.created_at))
        }
      }
      await saveMessages(db, messages)
      if (sightings !== undefined) await writeSightings(db, sightings)
    })),

  backlog: (botId) => c.use("backlog", async (db) => (await all(db, InboxQueries.backlog(db, botId, botId)))[0]!.backlog),

  pruneFinished: (before, limit) =>
    c.transaction("pruneFinished", async (db) => ({
      updates: await run(db, pruneUpdates(db, before, limit)),
      deliveries: await run(db, OutboxQueries.pruneDeliveries(db, before, limit)),
      sends: await run(db, OutboxQueries.pruneSends(db, before, limit))
    })),

  botsWithWork: c.use("botsWithWork", async (db) => (await all(db, InboxQueries.botsWithWork(db))).map((r) => r.bot_id))
})
