import type { Kysely, Migration } from "kysely"

/** 0007: the outbox of route sends and the route mappings. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_route_sends")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("route_id", "integer", (c) => c.notNull())
      .addColumn("source_bot_id", "integer", (c) => c.notNull())
      .addColumn("update_id", "integer", (c) => c.notNull())
      .addColumn("from_chat_id", "integer", (c) => c.notNull())
      .addColumn("message_id", "integer", (c) => c.notNull())
      .addColumn("chat_id", "integer", (c) => c.notNull())
      .addColumn("reply_to_message_id", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("hop", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "text", (c) => c.notNull())
      .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex("botrelay_route_sends_bot_status")
      .on("botrelay_route_sends")
      .columns(["bot_id", "status", "id"])
      .execute()

    await db.schema
      .createTable("botrelay_route_mappings")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("route_id", "integer", (c) => c.notNull())
      .addColumn("source_bot_id", "integer", (c) => c.notNull())
      .addColumn("source_chat_id", "integer", (c) => c.notNull())
      .addColumn("source_message_id", "integer", (c) => c.notNull())
      .addColumn("target_bot_id", "integer", (c) => c.notNull())
      .addColumn("target_chat_id", "integer", (c) => c.notNull())
      .addColumn("target_message_id", "integer", (c) => c.notNull())
      .addColumn("hop", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("reversible", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex("botrelay_route_mappings_target")
      .on("botrelay_route_mappings")
      .columns(["target_bot_id", "target_chat_id", "target_message_id"])
      .execute()
    await db.schema
      .createIndex("botrelay_route_mappings_target_message")
      .on("botrelay_route_mappings")
      .columns(["target_chat_id", "target_message_id"])
      .execute()
    await db.schema
      .createIndex("botrelay_route_mappings_created")
      .on("botrelay_route_mappings")
      .column("created_at")
      .execute()
  },
  async down(db: Kysely<any>) {
    for (const table of ["botrelay_route_mappings", "botrelay_route_sends"]) {
      await db.schema.dropTable(table).ifExists().execute()
    }
  }
}
