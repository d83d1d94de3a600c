import type { Kysely, Migration } from "kysely"

/**
 * 0023: `dropped` on inbox updates, 1 when a drop route removed the update, so that a replay skips it. A
 * delivery may also be `discarded` (status is free text: no change needed).
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_inbox").addColumn("dropped", "integer", (c) => c.notNull().defaultTo(0)).execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_inbox").dropColumn("dropped").execute()
  }
}
