import type { Audit } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import type { AuditTable, Database } from "./Tables.js"

/** The entry a row of `botrelay_audit` holds; details that are not a JSON object read as `{}`. */
export const toAuditEntry = (r: Selectable<AuditTable>): Audit.AuditEntry => ({
  id: r.id,
  at: r.at,
  actor_type: r.actor_type as Audit.ActorType,
  actor_id: r.actor_id,
  actor_name: r.actor_name,
  ip: r.ip,
  action: r.action,
  target_type: r.target_type,
  target_id: r.target_id,
  bot_id: r.bot_id,
  chat_id: r.chat_id,
  outcome: r.outcome as Audit.Outcome,
  details: detailsOf(r.details)
})

const detailsOf = (text: string): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

/** Appends an entry; its id. `details` is the JSON text of the entry's details. */
export const appendAudit = (
  db: Kysely<Database>,
  at: string,
  actorType: string,
  actorId: number,
  actorName: string,
  ip: string,
  action: string,
  targetType: string,
  targetId: string,
  botId: number | null,
  chatId: number | null,
  outcome: string,
  details: string
) =>
  db.insertInto("botrelay_audit")
    .values({
      at,
      actor_type: actorType,
      actor_id: actorId,
      actor_name: actorName,
      ip,
      action,
      target_type: targetType,
      target_id: targetId,
      bot_id: botId,
      chat_id: chatId,
      outcome,
      details
    })
    .returning("id")

/**
 * The entries a query matches, newest first. Each filter with the id order has its index (actor, action,
 * bot), so a page reads only what it returns.
 */
export const listAudit = (db: Kysely<Database>, query: Audit.AuditQuery) =>
  db.selectFrom("botrelay_audit")
    .selectAll()
    .$if(query.actor_type !== undefined, (q) => q.where("actor_type", "=", query.actor_type!))
    .$if(query.actor_id !== undefined, (q) => q.where("actor_id", "=", query.actor_id!))
    .$if(query.action !== undefined, (q) => q.where("action", "=", query.action!))
    .$if(query.bot_id !== undefined, (q) => q.where("bot_id", "=", query.bot_id!))
    .$if(query.from !== undefined, (q) => q.where("at", ">=", query.from!))
    .$if(query.to !== undefined, (q) => q.where("at", "<", query.to!))
    .$if(query.before_id !== undefined, (q) => q.where("id", "<", query.before_id!))
    .orderBy("id", "desc")
    .limit(query.limit)

/** Deletes the oldest entries (by `at`, through its index) from before a time, at most `limit`. */
export const pruneAudit = (db: Kysely<Database>, before: string, limit: number) =>
  db.deleteFrom("botrelay_audit").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_audit")
      .select("id")
      .where("at", "<", before)
      .orderBy("at")
      .limit(limit))
