import type { AuditStore } from "@botrelay/core"
import { AuditQueries } from "@botrelay/sql"
import { all, type Connection, run } from "./PostgresConnection.js"

/** The `AuditStore` on Postgres. */
export const make = (c: Connection): AuditStore.AuditStoreService => ({
  appendAudit: (entries) =>
    c.transaction("appendAudit", async (db) => {
      const ids: Array<number> = []
      for (const e of entries) {
        const [row] = await all(
          db,
          AuditQueries.appendAudit(
            db,
            e.at,
            e.actor_type,
            e.actor_id,
            e.actor_name,
            e.ip,
            e.action,
            e.target_type,
            e.target_id,
            e.bot_id,
            e.chat_id,
            e.outcome,
            JSON.stringify(e.details)
          )
        )
        ids.push(row!.id)
      }
      return ids
    }),

  listAudit: (query) =>
    c.use("listAudit", async (db) => (await all(db, AuditQueries.listAudit(db, query))).map(AuditQueries.toAuditEntry)),

  pruneAudit: (before, limit) => c.use("pruneAudit", (db) => run(db, AuditQueries.pruneAudit(db, before, limit)))
})
