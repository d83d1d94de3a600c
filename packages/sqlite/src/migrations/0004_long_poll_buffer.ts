import type { Kysely, Migration } from "kysely"

/** 0004: the long-poll buffer and its state. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_long_poll_buffer")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("update_id", "integer", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("botrelay_long_poll_buffer_pk", ["bot_id", "update_id"])
      .execute()
    await db.schema
      .createIndex("botrelay_long_poll_buffer_age")
      .on("botrelay_long_poll_buffer")
      .columns(["bot_id", "created_at"])
      .execute()

    await db.schema
      .createTable("botrelay_long_poll_state")
      .addColumn("bot_id", "integer", (c) => c.primaryKey().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("allowed_updates", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("trimmed", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("last_trimmed_at", "text", (c) => c.notNull().defaultTo(""))
      .execute()
  },
  async down(db: Kysely<any>) {
    for (const table of ["botrelay_long_poll_state", "botrelay_long_poll_buffer"]) {
      await db.schema.dropTable(table).ifExists().execute()
    }
  }
}
