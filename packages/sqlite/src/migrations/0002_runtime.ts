import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/** 0002: the runtime: the inbox, ingress offsets and the outbox of deliveries. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_inbox")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("update_id", "integer", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("received_at", "text", (c) => c.notNull())
      .addColumn("processed", "integer", (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint("botrelay_inbox_pk", ["bot_id", "update_id"])
      .execute()
    await db.schema
      .createIndex("botrelay_inbox_pending")
      .on("botrelay_inbox")
      .columns(["bot_id", "update_id"])
      .where(sql.ref("processed"), "=", 0)
      .execute()

    await db.schema
      .createTable("botrelay_ingress")
      .addColumn("bot_id", "integer", (c) => c.primaryKey().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("offset", "integer", (c) => c.notNull().defaultTo(0))
      .execute()

    await db.schema
      .createTable("botrelay_deliveries")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("update_id", "integer", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("next_attempt_at", "text", (c) => c.notNull())
      .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .execute()
    await db.schema
      .createIndex("botrelay_deliveries_bot_status")
      .on("botrelay_deliveries")
      .columns(["bot_id", "status", "id"])
      .execute()
    await db.schema
      .createIndex("botrelay_deliveries_bot")
      .on("botrelay_deliveries")
      .columns(["bot_id", "id"])
      .execute()
    await db.schema
      .createIndex("botrelay_deliveries_status")
      .on("botrelay_deliveries")
      .columns(["status", "id"])
      .execute()
  },
  async down(db: Kysely<any>) {
    for (const table of ["botrelay_deliveries", "botrelay_ingress", "botrelay_inbox"]) {
      await db.schema.dropTable(table).ifExists().execute()
    }
  }
}
