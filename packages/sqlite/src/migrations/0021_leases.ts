import type { Kysely, Migration } from "kysely"

/**
 * 0021: instances and leases, the same tables as PostgreSQL's, so the lease store passes the conformance suite
 * on both drivers (a server on SQLite is the only instance and takes none); the URL each webhook was
 * registered at.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_instances")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("started_at", "text", (c) => c.notNull())
      .addColumn("last_heartbeat_at", "text", (c) => c.notNull())
      .execute()
    await db.schema
      .createTable("botrelay_leases")
      .addColumn("bot_id", "integer", (c) => c.primaryKey().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("instance_id", "text", (c) => c.notNull())
      .addColumn("epoch", "integer", (c) => c.notNull())
      .addColumn("expires_at", "text", (c) => c.notNull())
      .addColumn("running", "integer", (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema.alterTable("botrelay_webhooks").addColumn("url", "text", (c) => c.notNull().defaultTo("")).execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_webhooks").dropColumn("url").execute()
    await db.schema.dropTable("botrelay_leases").ifExists().execute()
    await db.schema.dropTable("botrelay_instances").ifExists().execute()
  }
}
