import type { Kysely, Migration } from "kysely"

/**
 * 0020: the audit log. Ids are never reused (AUTOINCREMENT); no foreign keys, so entries outlive the bots,
 * keys and accounts they name. An index per filter with the id order (newest first pages), and one on
 * `at` for retention.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_audit")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("at", "text", (c) => c.notNull())
      .addColumn("actor_type", "text", (c) => c.notNull())
      .addColumn("actor_id", "integer", (c) => c.notNull())
      .addColumn("actor_name", "text", (c) => c.notNull())
      .addColumn("ip", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("action", "text", (c) => c.notNull())
      .addColumn("target_type", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("target_id", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("bot_id", "integer")
      .addColumn("chat_id", "integer")
      .addColumn("outcome", "text", (c) => c.notNull())
      .addColumn("details", "text", (c) => c.notNull().defaultTo("{}"))
      .execute()
    await db.schema.createIndex("botrelay_audit_actor").on("botrelay_audit").columns(["actor_type", "actor_id", "id"])
      .execute()
    await db.schema.createIndex("botrelay_audit_action").on("botrelay_audit").columns(["action", "id"]).execute()
    await db.schema.createIndex("botrelay_audit_bot").on("botrelay_audit").columns(["bot_id", "id"]).execute()
    await db.schema.createIndex("botrelay_audit_at").on("botrelay_audit").column("at").execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("botrelay_audit").ifExists().execute()
  }
}
