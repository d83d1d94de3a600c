import type { Kysely, Migration } from "kysely"

/**
 * 0013: the event log live event streams replay from: ids never reused (AUTOINCREMENT), an index for
 * replays of some bots by id, and one for retention by age.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_events")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("bot_id", "integer", (c) => c.notNull())
      .addColumn("chat_id", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute()
    await db.schema.createIndex("botrelay_events_bot").on("botrelay_events").columns(["bot_id", "id"]).execute()
    await db.schema.createIndex("botrelay_events_created").on("botrelay_events").column("created_at").execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("botrelay_events").ifExists().execute()
  }
}
