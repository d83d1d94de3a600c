import type { RouteSend } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import type { Database, RouteMappingsTable } from "./Tables.js"

/** The mapping a row of `botrelay_route_mappings` holds. */
export const toRouteMapping = (r: Selectable<RouteMappingsTable>): RouteSend.RouteMapping => ({
  id: r.id,
  route_id: r.route_id,
  source_bot_id: r.source_bot_id,
  source_chat_id: r.source_chat_id,
  source_message_id: r.source_message_id,
  target_bot_id: r.target_bot_id,
  target_chat_id: r.target_chat_id,
  target_message_id: r.target_message_id,
  hop: r.hop,
  reversible: r.reversible === 1,
  created_at: r.created_at
})

export const insertMapping = (
  db: Kysely<Database>,
  routeId: number,
  sourceBotId: number,
  sourceChatId: number,
  sourceMessageId: number,
  targetBotId: number,
  targetChatId: number,
  targetMessageId: number,
  hop: number,
  reversible: number,
  createdAt: string
) =>
  db.insertInto("botrelay_route_mappings").values({
    route_id: routeId,
    source_bot_id: sourceBotId,
    source_chat_id: sourceChatId,
    source_message_id: sourceMessageId,
    target_bot_id: targetBotId,
    target_chat_id: targetChatId,
    target_message_id: targetMessageId,
    hop,
    reversible,
    created_at: createdAt
  })

export const findReverse = (db: Kysely<Database>, botId: number, chatId: number, messageId: number, since: string) =>
  db.selectFrom("botrelay_route_mappings")
    .selectAll()
    .where("target_bot_id", "=", botId)
    .where("target_chat_id", "=", chatId)
    .where("target_message_id", "=", messageId)
    .where("reversible", "=", sql.lit(1))
    .where("created_at", ">=", since)
    .orderBy("id", "desc")
    .limit(sql.lit(1))

export const findProduced = (db: Kysely<Database>, chatId: number, messageId: number) =>
  db.selectFrom("botrelay_route_mappings")
    .selectAll()
    .where("target_chat_id", "=", chatId)
    .where("target_message_id", "=", messageId)
    .orderBy("id", "desc")
    .limit(sql.lit(1))

/** The oldest mappings created before a time. */
export const pruneMappings = (db: Kysely<Database>, before: string, limit: number) =>
  db.deleteFrom("botrelay_route_mappings").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_route_mappings")
      .select("id")
      .where("created_at", "<", before)
      .orderBy("created_at")
      .orderBy("id")
      .limit(limit))
