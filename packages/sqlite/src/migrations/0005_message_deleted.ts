import type { Kysely, Migration } from "kysely"

/** 0005: messages keep a deleted flag. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("botrelay_messages")
      .addColumn("deleted", "integer", (c) => c.notNull().defaultTo(0))
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_messages").dropColumn("deleted").execute()
  }
}
