import type { Delivery, RouteSend } from "@botrelay/core"
import { InboxQueries, OutboxQueries, type Tables } from "@botrelay/sql"
import type { Kysely } from "kysely"
import { sql } from "kysely"

/**
 * The hot paths' writes as one statement per batch instead of one per row: each statement is a round trip to the
 * server, so a transaction of a hundred single-row statements costs a hundred round trips.
 */

/** Rows per statement: far below PostgreSQL's 65,535 parameters at the widest row here (16 columns). */
export const rowsPerStatement = 1_000

/** `items` in slices of at most `size`. */
export const chunks = <A>(items: ReadonlyArray<A>, size = rowsPerStatement): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** Adds updates of a bot unless the inbox holds them (as `InboxQueries.insertUpdate`, many rows). */
export const insertUpdates = (
  db: Kysely<Tables.Database>,
  botId: number,
  updates: ReadonlyArray<{ readonly update_id: number; readonly payload: string; readonly received_at: string }>
) =>
  db.insertInto("botrelay_inbox")
    .values(updates.map((u) => ({
      bot_id: botId,
      update_id: u.update_id,
      payload: u.payload,
      received_at: u.received_at,
      processed: InboxQueries.unprocessed
    })))
    .onConflict((oc) => oc.columns(["bot_id", "update_id"]).doNothing())

/** Marks a bot's updates processed (as `InboxQueries.markProcessed`, many ids); the ids that were not yet. */
export const markProcessed = (db: Kysely<Tables.Database>, botId: number, updateIds: ReadonlyArray<number>) =>
  db.updateTable("botrelay_inbox")
    .set({ processed: sql.lit(1) })
    .where("bot_id", "=", botId)
    .where(sql<boolean>`update_id = any(${updateIds}::bigint[])`)
    .where("processed", "=", InboxQueries.unprocessed)
    .returning("update_id")

/** Marks a bot's updates dropped by a route (as `InboxQueries.markDropped`, many ids). */
export const markDropped = (db: Kysely<Tables.Database>, botId: number, updateIds: ReadonlyArray<number>) =>
  db.updateTable("botrelay_inbox")
    .set({ dropped: sql.lit(1) })
    .where("bot_id", "=", botId)
    .where(sql<boolean>`update_id = any(${updateIds}::bigint[])`)

/** Queues deliveries (as `OutboxQueries.queueDelivery`, many rows, ids in their order). */
export const queueDeliveries = (
  db: Kysely<Tables.Database>,
  deliveries: ReadonlyArray<Delivery.NewDelivery>
) =>
  db.insertInto("botrelay_deliveries").values(deliveries.map((d) => ({
    bot_id: d.bot_id,
    update_id: d.update_id,
    url: d.url,
    payload: d.payload,
    status: OutboxQueries.pending,
    attempts: sql.lit(0),
    next_attempt_at: d.created_at,
    last_error: sql.lit(""),
    created_at: d.created_at,
    updated_at: d.created_at
  })))

/** Queues route sends (as `OutboxQueries.queueSend`, many rows, ids in their order). */
export const queueSends = (
  db: Kysely<Tables.Database>,
  sends: ReadonlyArray<RouteSend.NewRouteSend>
) =>
  db.insertInto("botrelay_route_sends").values(sends.map((r) => ({
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
    status: OutboxQueries.pending,
    attempts: sql.lit(0),
    next_attempt_at: r.created_at,
    last_error: sql.lit(""),
    created_at: r.created_at,
    updated_at: r.created_at
  })))

/** A long-poll buffer row of a completed update. */
export interface Buffered {
  readonly bot_id: number
  readonly update_id: number
  readonly type: string
  readonly payload: string
  readonly created_at: string
}

/** Buffers updates for long polls unless buffered (as `BufferQueries.insertBuffered`, many rows). */
export const insertBuffered = (db: Kysely<Tables.Database>, rows: ReadonlyArray<Buffered>) =>
  db.insertInto("botrelay_long_poll_buffer")
    .values(rows.map((b) => ({ ...b })))
    .onConflict((oc) => oc.columns(["bot_id", "update_id"]).doNothing())

/** Deliveries delivered, each at its own time (as `OutboxQueries.delivered`, many rows); how many changed. */
export const delivered = async (
  db: Kysely<Tables.Database>,
  outcomes: ReadonlyArray<{ readonly id: number; readonly at: string }>
): Promise<number> => {
  const result = await sql`update botrelay_deliveries as d set status = 'delivered', updated_at = v.at
    from unnest(${outcomes.map((o) => o.id)}::bigint[], ${outcomes.map((o) => o.at)}::text[]) as v(id, at)
    where d.id = v.id`.execute(db)
  return Number(result.numAffectedRows ?? 0n)
}
