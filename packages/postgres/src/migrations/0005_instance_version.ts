import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/** 0006: the version each instance runs, as its heartbeats tell (shown by `GET /api/status`; as SQLite's 0025). */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql`ALTER TABLE botrelay_instances ADD COLUMN version text COLLATE "C" NOT NULL DEFAULT ''`.execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`ALTER TABLE botrelay_instances DROP COLUMN IF EXISTS version`.execute(db)
  }
}
