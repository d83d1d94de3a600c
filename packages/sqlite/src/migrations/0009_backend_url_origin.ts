import type { Kysely, Migration } from "kysely"

/** 0009: who last set a bot's backend_url. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("botrelay_bots")
      .addColumn("backend_url_origin", "text", (c) => c.notNull().defaultTo("api"))
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_bots").dropColumn("backend_url_origin").execute()
  }
}
