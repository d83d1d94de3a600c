import type { Kysely, Migration } from "kysely"

/** 0006: settings changed through the API. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_settings")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("botrelay_settings").ifExists().execute()
  }
}
