import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0026: the team's private notes in chats, indexed for search at once by triggers in `botrelay_notes_fts`
 * (an external-content FTS5 index of their text, tokenized as the messages' index of 0015); and the canned
 * replies the team shares, their code unique ignoring case.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_notes")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("bot_id", "integer", (c) => c.notNull())
      .addColumn("chat_id", "integer", (c) => c.notNull())
      .addColumn("author_id", "integer", (c) => c.notNull())
      .addColumn("author_name", "text", (c) => c.notNull())
      .addColumn("text", "text", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .addColumn("updated_at", "integer", (c) => c.notNull())
      .execute()
    await sql`CREATE INDEX botrelay_notes_chat ON botrelay_notes (bot_id, chat_id, created_at, id)`.execute(db)
    await sql.raw(
      `CREATE VIRTUAL TABLE botrelay_notes_fts USING fts5(text, content='botrelay_notes', content_rowid='id', ` +
        `tokenize='unicode61 remove_diacritics 2')`
    ).execute(db)
    const index = (row: string) => `INSERT INTO botrelay_notes_fts (rowid, text) VALUES (${row}.id, ${row}.text);`
    const unindex = (row: string) =>
      `INSERT INTO botrelay_notes_fts (botrelay_notes_fts, rowid, text) VALUES ('delete', ${row}.id, ${row}.text);`
    await sql.raw(`CREATE TRIGGER botrelay_notes_fts_insert AFTER INSERT ON botrelay_notes BEGIN ${index("new")} END`)
      .execute(db)
    await sql.raw(`CREATE TRIGGER botrelay_notes_fts_delete AFTER DELETE ON botrelay_notes BEGIN ${unindex("old")} END`)
      .execute(db)
    await sql.raw(
      `CREATE TRIGGER botrelay_notes_fts_update AFTER UPDATE ON botrelay_notes WHEN old.text IS NOT new.text ` +
        `BEGIN ${unindex("old")} ${index("new")} END`
    ).execute(db)
    await db.schema
      .createTable("botrelay_canned_replies")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("code", "text", (c) => c.notNull())
      .addColumn("text", "text", (c) => c.notNull())
      .addColumn("bot_ids", "text", (c) => c.notNull())
      .addColumn("created_at", "integer", (c) => c.notNull())
      .addColumn("updated_at", "integer", (c) => c.notNull())
      .execute()
    await sql`CREATE UNIQUE INDEX botrelay_canned_replies_code ON botrelay_canned_replies (lower(code))`.execute(db)
  },
  async down(db: Kysely<any>) {
    for (const trigger of ["insert", "delete", "update"]) {
      await sql.raw(`DROP TRIGGER IF EXISTS botrelay_notes_fts_${trigger}`).execute(db)
    }
    await sql`DROP TABLE IF EXISTS botrelay_notes_fts`.execute(db)
    await sql`DROP TABLE IF EXISTS botrelay_notes`.execute(db)
    await sql`DROP TABLE IF EXISTS botrelay_canned_replies`.execute(db)
  }
}
