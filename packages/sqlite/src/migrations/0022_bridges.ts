import type { Kysely, Migration } from "kysely"

/**
 * 0022: each bot's signing secret (encrypted, "" for none); bridges, and their outbox of event deliveries,
 * queued in the transaction that appends the event to the log.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("botrelay_bots")
      .addColumn("signing_secret", "text", (c) => c.notNull().defaultTo(""))
      .execute()
    await db.schema
      .createTable("botrelay_bridges")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("format", "text", (c) => c.notNull())
      .addColumn("events", "text", (c) => c.notNull())
      .addColumn("bot_ids", "text", (c) => c.notNull())
      .addColumn("enabled", "integer", (c) => c.notNull())
      .addColumn("signing_secret", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute()
    await db.schema
      .createTable("botrelay_bridge_deliveries")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("bridge_id", "integer", (c) => c.notNull().references("botrelay_bridges.id").onDelete("cascade"))
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("event_id", "integer", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "text", (c) => c.notNull())
      .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex("botrelay_bridge_deliveries_bot_status")
      .on("botrelay_bridge_deliveries")
      .columns(["bot_id", "status", "id"])
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("botrelay_bridge_deliveries").ifExists().execute()
    await db.schema.dropTable("botrelay_bridges").ifExists().execute()
    await db.schema.alterTable("botrelay_bots").dropColumn("signing_secret").execute()
  }
}
