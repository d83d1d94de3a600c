import type { Kysely, Migration } from "kysely"

/** 0025: the version each instance runs, as its heartbeats tell (shown by `GET /api/status`). */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_instances").addColumn("version", "text", (c) => c.notNull().defaultTo("")).execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_instances").dropColumn("version").execute()
  }
}
