import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * The words 0015 indexes beside a message's text, so that a search scoped to bots, a chat or a sender
 * intersects posting lists instead of reading every match: `b<bot_id> c<chat_id> u<user_id>`, a negative id
 * written `n<digits>` (the tokenizer splits at `-`). `row` is `new`, `old` or a table.
 */
export const scopeWordsOf0015 = (row: string) =>
  `'b' || ${row}.bot_id` +
  ` || ' c' || (CASE WHEN ${row}.chat_id < 0 THEN 'n' || -${row}.chat_id ELSE ${row}.chat_id END)` +
  ` || ' u' || (CASE WHEN ${row}.user_id < 0 THEN 'n' || -${row}.user_id ELSE ${row}.user_id END)`

/** The triggers of 0015: every insert, delete and update of the text, bot, chat or sender, indexed at once. */
export const triggersOf0015 = async (db: Kysely<any>) => {
  const index = (row: string) =>
    `INSERT INTO botrelay_messages_fts (rowid, text, scope) VALUES (${row}.rowid, ${row}.text, ${scopeWordsOf0015(row)});`
  const unindex = (row: string) =>
    `INSERT INTO botrelay_messages_fts (botrelay_messages_fts, rowid, text, scope) ` +
    `VALUES ('delete', ${row}.rowid, ${row}.text, ${scopeWordsOf0015(row)});`
  await sql.raw(
    `CREATE TRIGGER botrelay_messages_fts_insert AFTER INSERT ON botrelay_messages BEGIN ${index("new")} END`
  ).execute(db)
  await sql.raw(
    `CREATE TRIGGER botrelay_messages_fts_delete AFTER DELETE ON botrelay_messages BEGIN ${unindex("old")} END`
  ).execute(db)
  await sql.raw(
    `CREATE TRIGGER botrelay_messages_fts_update AFTER UPDATE ON botrelay_messages ` +
      `WHEN old.rowid IS NOT new.rowid OR old.text IS NOT new.text OR old.bot_id IS NOT new.bot_id ` +
      `OR old.chat_id IS NOT new.chat_id OR old.user_id IS NOT new.user_id ` +
      `BEGIN ${unindex("old")} ${index("new")} END`
  ).execute(db)
}

/**
 * 0015: full-text search. `botrelay_messages_fts` is an external-content FTS5 index (tokenizer `unicode61
 * remove_diacritics 2`) of every message's `text` and its scope words (`scopeWordsOf0015`), read through the
 * view `botrelay_messages_search` (the messages' rowid as `message_rowid`, `text`, `scope`), so the messages
 * table itself keeps its columns. Triggers keep it in step: insert, delete (a bot's deletion included) and any
 * update of the text, bot, chat or sender (a group's move to a supergroup rewrites chat_id in place). Deleted
 * messages stay indexed; searches skip them. Existing messages are indexed here ('rebuild'). A later
 * migration that rebuilds `botrelay_messages` must recreate the triggers and rebuild the index.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql.raw(
      `CREATE VIEW botrelay_messages_search AS SELECT m.rowid AS message_rowid, m.text AS text, ` +
        `${scopeWordsOf0015("m")} AS scope FROM botrelay_messages AS m`
    ).execute(db)
    await sql.raw(
      `CREATE VIRTUAL TABLE botrelay_messages_fts USING fts5(text, scope, content='botrelay_messages_search', ` +
        `content_rowid='message_rowid', tokenize='unicode61 remove_diacritics 2')`
    ).execute(db)
    await triggersOf0015(db)
    await sql`INSERT INTO botrelay_messages_fts (botrelay_messages_fts) VALUES ('rebuild')`.execute(db)
  },
  async down(db: Kysely<any>) {
    for (const trigger of ["insert", "delete", "update"]) {
      await sql.raw(`DROP TRIGGER IF EXISTS botrelay_messages_fts_${trigger}`).execute(db)
    }
    await sql`DROP TABLE IF EXISTS botrelay_messages_fts`.execute(db)
    await sql`DROP VIEW IF EXISTS botrelay_messages_search`.execute(db)
  }
}
