import type { Inbox } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import { pending } from "./OutboxQueries.js"
import type { Database, InboxTable } from "./Tables.js"

/** A literal, not a bound parameter, so that the database can use the partial index on unprocessed updates. */
export const unprocessed = sql.lit(0)

/** The update a row of `botrelay_inbox` holds. */
export const toInboxUpdate = (r: Omit<Selectable<InboxTable>, "processed" | "dropped">): Inbox.InboxUpdate => ({
  bot_id: r.bot_id,
  update_id: r.update_id,
  payload: r.payload,
  received_at: r.received_at
})

export const ingressOffset = (db: Kysely<Database>, botId: number) =>
  db.selectFrom("botrelay_ingress").select("offset").where("bot_id", "=", botId)

/** Adds an update unless the inbox holds it, unprocessed or (0 or 1) already processed. */
const inserting = (processed: 0 | 1) =>
(
  db: Kysely<Database>,
  botId: number,
  updateId: number,
  payload: string,
  receivedAt: string
) =>
  db.insertInto("botrelay_inbox")
    .values({ bot_id: botId, update_id: updateId, payload, received_at: receivedAt, processed: sql.lit(processed) })
    .onConflict((oc) => oc.columns(["bot_id", "update_id"]).doNothing())

/** Adds an update unless the inbox holds it. */
export const insertUpdate = inserting(0)

/** Adds an update, already processed, unless the inbox holds it: completed in the transaction that stores it. */
export const insertProcessed = inserting(1)

/** A row when the bot has an unprocessed update. */
export const anyPending = (db: Kysely<Database>, botId: number) =>
  db.selectFrom("botrelay_inbox")
    .select(sql.lit(1).as("pending"))
    .where("bot_id", "=", botId)
    .where("processed", "=", unprocessed)
    .limit(sql.lit(1))

/** Raises the bot's ingress offset, never lowers it. */
export const raiseOffset = (db: Kysely<Database>, botId: number, offset: number) =>
  db.insertInto("botrelay_ingress").values({ bot_id: botId, offset }).onConflict((oc) =>
    oc.column("bot_id").doUpdateSet((eb) => ({
      offset: eb.case().when(eb.ref("excluded.offset"), ">", eb.ref("botrelay_ingress.offset"))
        .then(eb.ref("excluded.offset"))
        .else(eb.ref("botrelay_ingress.offset"))
        .end()
    }))
  )

export const pendingUpdates = (db: Kysely<Database>, botId: number, limit: number) =>
  db.selectFrom("botrelay_inbox")
    .select(["bot_id", "update_id", "payload", "received_at"])
    .where("bot_id", "=", botId)
    .where("processed", "=", unprocessed)
    .orderBy("update_id")
    .limit(limit)

export const markProcessed = (db: Kysely<Database>, botId: number, updateId: number) =>
  db.updateTable("botrelay_inbox")
    .set({ processed: sql.lit(1) })
    .where("bot_id", "=", botId)
    .where("update_id", "=", updateId)
    .where("processed", "=", unprocessed)

/** Records that a drop route removed the update, so that replays skip it. */
export const markDropped = (db: Kysely<Database>, botId: number, updateId: number) =>
  db.updateTable("botrelay_inbox")
    .set({ dropped: sql.lit(1) })
    .where("bot_id", "=", botId)
    .where("update_id", "=", updateId)

/** The bot's unprocessed updates, counted on an index. */
export const unprocessedCount = (db: Kysely<Database>, botId: number) =>
  db.selectFrom("botrelay_inbox")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("bot_id", "=", botId)
    .where("processed", "=", unprocessed)

/** Unprocessed updates plus pending deliveries, both counted on an index. */
export const backlog = (db: Kysely<Database>, inboxBotId: number, deliveriesBotId: number) =>
  db.selectNoFrom((eb) =>
    eb(
      unprocessedCount(db, inboxBotId),
      "+",
      eb.selectFrom("botrelay_deliveries")
        .select((eb) => eb.fn.countAll<number>().as("count"))
        .where("bot_id", "=", deliveriesBotId)
        .where("status", "=", pending)
    ).$notNull().as("backlog")
  )

/** Ids of bots with unprocessed updates, pending deliveries or pending route sends. */
export const botsWithWork = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_inbox").select("bot_id").where("processed", "=", unprocessed)
    .union(db.selectFrom("botrelay_deliveries").select("bot_id").where("status", "=", "pending"))
    .union(db.selectFrom("botrelay_route_sends").select("bot_id").where("status", "=", "pending"))
    .orderBy("bot_id")

export const webhookSecret = (db: Kysely<Database>, botId: number) =>
  db.selectFrom("botrelay_webhooks").select("secret").where("bot_id", "=", botId)

export const setWebhookSecret = (db: Kysely<Database>, botId: number, secret: string) =>
  db.insertInto("botrelay_webhooks").values({ bot_id: botId, secret }).onConflict((oc) =>
    oc.column("bot_id").doUpdateSet({ secret, url: sql.lit("") })
  )

export const webhookUrl = (db: Kysely<Database>, botId: number) =>
  db.selectFrom("botrelay_webhooks").select("url").where("bot_id", "=", botId)

export const setWebhookUrl = (db: Kysely<Database>, botId: number, url: string) =>
  db.updateTable("botrelay_webhooks").set({ url }).where("bot_id", "=", botId)

export const clearWebhookSecret = (db: Kysely<Database>, botId: number) =>
  db.deleteFrom("botrelay_webhooks").where("bot_id", "=", botId)
