import type { Delivery, RouteSend } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import type { Database, DeliveriesTable, RouteSendsTable } from "./Tables.js"

/** The status of queued work, as a literal so that it is not a parameter of the compiled queries. */
export const pending = sql.lit<"pending">("pending")

/** The outbox's queues: deliveries to backends, route sends, and bridge deliveries. */
export type Queue = "botrelay_deliveries" | "botrelay_route_sends" | "botrelay_bridge_deliveries"

/** The delivery a row of `botrelay_deliveries` holds. */
export const toDelivery = (r: Selectable<DeliveriesTable>): Delivery.Delivery => ({
  id: r.id,
  bot_id: r.bot_id,
  update_id: r.update_id,
  url: r.url,
  payload: r.payload ?? "",
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at
})

/** The route send a row of `sendsWithPayload` holds. */
export const toRouteSend = (
  r: Selectable<RouteSendsTable> & { readonly payload: string | null }
): RouteSend.RouteSend => ({
  id: r.id,
  bot_id: r.bot_id,
  kind: r.kind,
  route_id: r.route_id,
  source_bot_id: r.source_bot_id,
  update_id: r.update_id,
  from_chat_id: r.from_chat_id,
  message_id: r.message_id,
  chat_id: r.chat_id,
  reply_to_message_id: r.reply_to_message_id,
  hop: r.hop,
  payload: r.payload ?? "",
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at
})

export const queueDelivery = (
  db: Kysely<Database>,
  botId: number,
  updateId: number,
  url: string,
  payload: string,
  nextAttemptAt: string,
  createdAt: string,
  updatedAt: string
) =>
  db.insertInto("botrelay_deliveries").values({
    bot_id: botId,
    update_id: updateId,
    url,
    payload,
    status: pending,
    attempts: sql.lit(0),
    next_attempt_at: nextAttemptAt,
    last_error: sql.lit(""),
    created_at: createdAt,
    updated_at: updatedAt
  })

export const nextDeliveries = (db: Kysely<Database>, botId: number, limit: number) =>
  db.selectFrom("botrelay_deliveries")
    .selectAll()
    .where("bot_id", "=", botId)
    .where("status", "=", pending)
    .orderBy("id")
    .limit(limit)

export const delivered = (db: Kysely<Database>, at: string, id: number) =>
  db.updateTable("botrelay_deliveries")
    .set({ status: sql.lit<"delivered">("delivered"), updated_at: at })
    .where("id", "=", id)

/** A failed attempt at queued work that is tried again later. */
export const retryLater = (queue: Queue) =>
(db: Kysely<Database>, nextAttemptAt: string, lastError: string, at: string, id: number) =>
  db.updateTable(queue).set((eb) => ({
    status: pending,
    attempts: eb("attempts", "+", eb.lit(1)),
    next_attempt_at: nextAttemptAt,
    last_error: lastError,
    updated_at: at
  })).where("id", "=", id)

/** A failed attempt at queued work that is not tried again. */
export const dead = (queue: Queue) => (db: Kysely<Database>, lastError: string, at: string, id: number) =>
  db.updateTable(queue).set((eb) => ({
    status: sql.lit<"dead">("dead"),
    attempts: eb("attempts", "+", eb.lit(1)),
    last_error: lastError,
    updated_at: at
  })).where("id", "=", id)

/** Deliveries newest first, optionally of one bot and one status. */
export const listDeliveries = (
  db: Kysely<Database>,
  filter: { readonly bot_id?: number; readonly status?: Delivery.DeliveryStatus; readonly limit: number }
) => {
  let query = db.selectFrom("botrelay_deliveries").selectAll().orderBy("id", "desc").limit(filter.limit)
  if (filter.bot_id !== undefined) query = query.where("bot_id", "=", filter.bot_id)
  if (filter.status !== undefined) query = query.where("status", "=", sql.lit(filter.status))
  return query
}

export const retryDelivery = (db: Kysely<Database>, id: number, at: string) =>
  db.updateTable("botrelay_deliveries")
    .set({ status: "pending", attempts: 0, next_attempt_at: at, updated_at: at })
    .where("id", "=", id)
    .where("status", "=", "dead")
    .returningAll()

export const getDelivery = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_deliveries").selectAll().where("id", "=", id)

export const discardDelivery = (db: Kysely<Database>, id: number, at: string) =>
  db.updateTable("botrelay_deliveries")
    .set({ status: sql.lit<"discarded">("discarded"), updated_at: at })
    .where("id", "=", id)
    .where("status", "=", sql.lit("dead"))
    .returningAll()

/** Puts every dead delivery of a bot back in line, due at `at` with attempts 0. */
export const retryDead = (db: Kysely<Database>, botId: number, at: string) =>
  db.updateTable("botrelay_deliveries")
    .set({ status: pending, attempts: sql.lit(0), next_attempt_at: at, updated_at: at })
    .where("bot_id", "=", botId)
    .where("status", "=", sql.lit("dead"))
    .returningAll()

/** Gives up every dead delivery of a bot. */
export const discardDead = (db: Kysely<Database>, botId: number, at: string) =>
  db.updateTable("botrelay_deliveries")
    .set({ status: sql.lit<"discarded">("discarded"), updated_at: at })
    .where("bot_id", "=", botId)
    .where("status", "=", sql.lit("dead"))
    .returningAll()

/** The stored updates of a bot in a replay's range, by update_id, at most `limit`; `replayable` 1 for processed ones no route dropped. */
export const replayCandidates = (db: Kysely<Database>, botId: number, range: Delivery.ReplayRange, limit: number) => {
  let query = db.selectFrom("botrelay_inbox")
    .select(["update_id", "payload"])
    .select((eb) =>
      eb.case().when(eb.and([eb("processed", "=", sql.lit(1)), eb("dropped", "=", sql.lit(0))])).then(sql.lit(1)).else(
        sql.lit(0)
      ).end().as("replayable")
    )
    .where("bot_id", "=", botId)
    .orderBy("update_id")
    .limit(limit)
  query = range._tag === "UpdateIds"
    ? query.where("update_id", ">=", range.from).where("update_id", "<=", range.to)
    : query.where("received_at", ">=", range.from).where("received_at", "<", range.to)
  return query
}

export const retargetDeliveries = (db: Kysely<Database>, botId: number, url: string, at: string) =>
  db.updateTable("botrelay_deliveries")
    .set({ url, attempts: 0, next_attempt_at: at, updated_at: at })
    .where("bot_id", "=", botId)
    .where("status", "=", pending)

/** The oldest deliveries of a finished status (delivered or discarded) last updated before a time. */
export const pruneDeliveries = (
  db: Kysely<Database>,
  status: "delivered" | "discarded",
  before: string,
  limit: number
) =>
  db.deleteFrom("botrelay_deliveries").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_deliveries")
      .select("id")
      .where("status", "=", status)
      .where("updated_at", "<", before)
      .orderBy("id")
      .limit(limit))

export const queueSend = (
  db: Kysely<Database>,
  botId: number,
  kind: RouteSend.SendKind,
  routeId: number,
  sourceBotId: number,
  updateId: number,
  fromChatId: number,
  messageId: number,
  chatId: number,
  replyToMessageId: number,
  hop: number,
  nextAttemptAt: string,
  createdAt: string,
  updatedAt: string
) =>
  db.insertInto("botrelay_route_sends").values({
    bot_id: botId,
    kind,
    route_id: routeId,
    source_bot_id: sourceBotId,
    update_id: updateId,
    from_chat_id: fromChatId,
    message_id: messageId,
    chat_id: chatId,
    reply_to_message_id: replyToMessageId,
    hop,
    status: pending,
    attempts: sql.lit(0),
    next_attempt_at: nextAttemptAt,
    last_error: sql.lit(""),
    created_at: createdAt,
    updated_at: updatedAt
  })

/** Route sends with the payload of their update, while the inbox keeps it. */
export const sendsWithPayload = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_route_sends as s")
    .leftJoin("botrelay_inbox as i", (join) =>
      join.onRef("i.bot_id", "=", "s.source_bot_id").onRef("i.update_id", "=", "s.update_id"))
    .selectAll("s")
    .select("i.payload")

export const nextSends = (db: Kysely<Database>, botId: number, limit: number) =>
  sendsWithPayload(db)
    .where("s.bot_id", "=", botId)
    .where("s.status", "=", pending)
    .orderBy("s.id")
    .limit(limit)

export const sent = (db: Kysely<Database>, at: string, id: number) =>
  db.updateTable("botrelay_route_sends").set((eb) => ({
    status: sql.lit<"sent">("sent"),
    attempts: eb("attempts", "+", eb.lit(1)),
    last_error: sql.lit(""),
    updated_at: at
  })).where("id", "=", id)

/** Route sends newest first, optionally of one sending bot and one status. */
export const listSends = (
  db: Kysely<Database>,
  filter: { readonly bot_id?: number; readonly status?: RouteSend.SendStatus; readonly limit: number }
) => {
  let query = sendsWithPayload(db).orderBy("s.id", "desc").limit(filter.limit)
  if (filter.bot_id !== undefined) query = query.where("s.bot_id", "=", filter.bot_id)
  if (filter.status !== undefined) query = query.where("s.status", "=", filter.status)
  return query
}

/** The oldest sent route sends last updated before a time. */
export const pruneSends = (db: Kysely<Database>, before: string, limit: number) =>
  db.deleteFrom("botrelay_route_sends").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_route_sends")
      .select("id")
      .where("status", "=", sql.lit("sent"))
      .where("updated_at", "<", before)
      .orderBy("updated_at")
      .orderBy("id")
      .limit(limit))
