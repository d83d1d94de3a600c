import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/** 0004: `dropped` on inbox updates, 1 when a drop route removed the update, so that a replay skips it (as SQLite's 0023). */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql`ALTER TABLE botrelay_inbox ADD COLUMN dropped integer NOT NULL DEFAULT 0`.execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`ALTER TABLE botrelay_inbox DROP COLUMN IF EXISTS dropped`.execute(db)
  }
}
