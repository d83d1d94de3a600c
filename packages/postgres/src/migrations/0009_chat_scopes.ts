import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0009: chat-level scopes (as SQLite's 0028). Each bot link of a key or account holds its chats (a JSON
 * array, empty: every chat) and abilities (a JSON array); existing links keep every chat with the default
 * abilities.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    for (const table of ["botrelay_api_key_bots", "botrelay_account_bots"]) {
      await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN chat_ids text COLLATE "C" NOT NULL DEFAULT '[]'`.execute(db)
      await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN abilities text COLLATE "C" NOT NULL DEFAULT '["read","reply","moderate"]'`
        .execute(db)
    }
  },
  async down(db: Kysely<any>) {
    for (const table of ["botrelay_api_key_bots", "botrelay_account_bots"]) {
      await sql`ALTER TABLE ${sql.table(table)} DROP COLUMN IF EXISTS abilities`.execute(db)
      await sql`ALTER TABLE ${sql.table(table)} DROP COLUMN IF EXISTS chat_ids`.execute(db)
    }
  }
}
