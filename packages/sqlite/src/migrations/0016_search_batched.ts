import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"
import { scopeWordsOf0015, triggersOf0015 } from "./0015_search.js"

/** Whether a message's rowid is within the search index's reach (0016). */
const indexedOf0016 = (row: string) => `${row}.rowid <= (SELECT indexed_upto FROM botrelay_search_state WHERE id = 1)`

/**
 * 0016: the search index is written in batches. Messages are indexed in rowid order by the store (before
 * each search, and in the background), up to `botrelay_search_state.indexed_upto`; the triggers keep only
 * what is within that reach in step (a rowid SQLite reuses below it is indexed at once). Indexing a
 * thousand messages in one statement costs a tenth of indexing each as it is written.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql`CREATE TABLE botrelay_search_state (id INTEGER PRIMARY KEY CHECK (id = 1), indexed_upto INTEGER NOT NULL)`
      .execute(db)
    await sql`INSERT INTO botrelay_search_state (id, indexed_upto)
      VALUES (1, COALESCE((SELECT max(rowid) FROM botrelay_messages), 0))`.execute(db)
    for (const trigger of ["insert", "delete", "update"]) {
      await sql.raw(`DROP TRIGGER botrelay_messages_fts_${trigger}`).execute(db)
    }
    const index = (row: string) =>
      `INSERT INTO botrelay_messages_fts (rowid, text, scope) ` +
      `SELECT ${row}.rowid, ${row}.text, ${scopeWordsOf0015(row)} WHERE ${indexedOf0016(row)};`
    const unindex = (row: string) =>
      `INSERT INTO botrelay_messages_fts (botrelay_messages_fts, rowid, text, scope) ` +
      `SELECT 'delete', ${row}.rowid, ${row}.text, ${scopeWordsOf0015(row)} WHERE ${indexedOf0016(row)};`
    await sql.raw(
      `CREATE TRIGGER botrelay_messages_fts_insert AFTER INSERT ON botrelay_messages WHEN ${indexedOf0016("new")} ` +
        `BEGIN ${index("new")} END`
    ).execute(db)
    await sql.raw(
      `CREATE TRIGGER botrelay_messages_fts_delete AFTER DELETE ON botrelay_messages WHEN ${indexedOf0016("old")} ` +
        `BEGIN ${unindex("old")} END`
    ).execute(db)
    await sql.raw(
      `CREATE TRIGGER botrelay_messages_fts_update AFTER UPDATE ON botrelay_messages ` +
        `WHEN old.rowid IS NOT new.rowid OR old.text IS NOT new.text OR old.bot_id IS NOT new.bot_id ` +
        `OR old.chat_id IS NOT new.chat_id OR old.user_id IS NOT new.user_id ` +
        `BEGIN ${unindex("old")} ${index("new")} END`
    ).execute(db)
  },
  async down(db: Kysely<any>) {
    for (const trigger of ["insert", "delete", "update"]) {
      await sql.raw(`DROP TRIGGER botrelay_messages_fts_${trigger}`).execute(db)
    }
    await sql`DROP TABLE botrelay_search_state`.execute(db)
    await triggersOf0015(db)
    await sql`INSERT INTO botrelay_messages_fts (botrelay_messages_fts) VALUES ('rebuild')`.execute(db)
  }
}
