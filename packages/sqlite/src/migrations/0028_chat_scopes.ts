import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0028: chat-level scopes. Each bot link of a key or account holds its chats (a JSON array, empty: every
 * chat) and abilities (a JSON array); existing links keep every chat with the default abilities.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    for (const table of ["botrelay_api_key_bots", "botrelay_account_bots"]) {
      await db.schema.alterTable(table).addColumn("chat_ids", "text", (c) => c.notNull().defaultTo("[]")).execute()
      await db.schema.alterTable(table).addColumn(
        "abilities",
        "text",
        (c) => c.notNull().defaultTo(sql.lit(`["read","reply","moderate"]`))
      ).execute()
    }
  },
  async down(db: Kysely<any>) {
    for (const table of ["botrelay_api_key_bots", "botrelay_account_bots"]) {
      await db.schema.alterTable(table).dropColumn("abilities").execute()
      await db.schema.alterTable(table).dropColumn("chat_ids").execute()
    }
  }
}
