import type { Kysely, Migration } from "kysely"

/** 0003: the secrets of registered webhooks. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_webhooks")
      .addColumn("bot_id", "integer", (c) => c.primaryKey().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("secret", "text", (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("botrelay_webhooks").ifExists().execute()
  }
}
