import type { Audit, AuditStore } from "@botrelay/core"
import { AuditQueries } from "@botrelay/sql"
import { attempt, compileAll, type Connection, db } from "./SqliteConnection.js"

const queries = compileAll({
  appendAudit: AuditQueries.appendAudit,
  pruneAudit: AuditQueries.pruneAudit
})

/** The `AuditStore` on SQLite: appends and prunes go through the group commit. */
export const make = (c: Connection): AuditStore.AuditStoreService => {
  const hot = c.prepareAll(queries)

  const append = (entries: ReadonlyArray<Audit.NewAuditEntry>): ReadonlyArray<number> =>
    entries.map((e) =>
      hot.appendAudit.all(
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
      )[0]!.id
    )

  return {
    appendAudit: (entries) =>
      entries.length === 0 ? attempt("appendAudit", () => []) : c.groupCommit("appendAudit", () => append(entries)),

    listAudit: (query) =>
      attempt("listAudit", () => c.all(AuditQueries.listAudit(db, query)).map(AuditQueries.toAuditEntry)),

    pruneAudit: (before, limit) => c.groupCommit("pruneAudit", () => hot.pruneAudit.run(before, limit))
  }
}
