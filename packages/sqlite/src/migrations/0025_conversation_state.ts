import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/** Adds one to the count of a chat's (bot, status, assignee), creating it; `row` is NEW or OLD. */
const countIn = (row: string) =>
  `INSERT INTO botrelay_chat_counts (bot_id, status, assignee_id, chats)
        VALUES (${row}.bot_id, ${row}.status, ${row}.assignee_id, 1)
        ON CONFLICT (bot_id, status, assignee_id) DO UPDATE SET chats = chats + 1;`

/** Takes one from the count of a chat's (bot, status, assignee); `row` is NEW or OLD. */
const countOut = (row: string) =>
  `UPDATE botrelay_chat_counts SET chats = chats - 1
        WHERE bot_id = ${row}.bot_id AND status = ${row}.status AND assignee_id = ${row}.assignee_id;`

/**
 * 0025: the conversation state of a chat (status, priority, assignee, snooze) and the counts of listed
 * chats per bot, status and assignee. Triggers keep the counts in the transaction of every change:
 * a chat created, its status or assignee changed, moved to a supergroup (unlisted), or deleted.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("botrelay_chats").addColumn("status", "text", (c) => c.notNull().defaultTo("open")).execute()
    await db.schema.alterTable("botrelay_chats").addColumn("priority", "text", (c) => c.notNull().defaultTo("none")).execute()
    await db.schema.alterTable("botrelay_chats").addColumn("assignee_id", "integer", (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema.alterTable("botrelay_chats").addColumn("snoozed_until", "integer", (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema
      .createIndex("botrelay_chats_snoozed")
      .on("botrelay_chats")
      .column("snoozed_until")
      .where(sql.ref("status"), "=", "snoozed")
      .execute()
    await db.schema
      .createTable("botrelay_chat_counts")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("assignee_id", "integer", (c) => c.notNull())
      .addColumn("chats", "integer", (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint("botrelay_chat_counts_pk", ["bot_id", "status", "assignee_id"])
      .modifyEnd(sql`without rowid`)
      .execute()
    await sql.raw(`INSERT INTO botrelay_chat_counts (bot_id, status, assignee_id, chats)
      SELECT bot_id, status, assignee_id, count(*) FROM botrelay_chats WHERE migrated_to_chat_id = 0
      GROUP BY bot_id, status, assignee_id`).execute(db)
    await sql.raw(`CREATE TRIGGER botrelay_chats_counted_insert AFTER INSERT ON botrelay_chats
      WHEN NEW.migrated_to_chat_id = 0 BEGIN
      ${countIn("NEW")}
    END`).execute(db)
    await sql.raw(`CREATE TRIGGER botrelay_chats_counted_update AFTER UPDATE OF status, assignee_id, migrated_to_chat_id
      ON botrelay_chats
      WHEN OLD.status <> NEW.status OR OLD.assignee_id <> NEW.assignee_id
        OR (OLD.migrated_to_chat_id = 0) <> (NEW.migrated_to_chat_id = 0) BEGIN
      UPDATE botrelay_chat_counts SET chats = chats - 1
        WHERE bot_id = OLD.bot_id AND status = OLD.status AND assignee_id = OLD.assignee_id AND OLD.migrated_to_chat_id = 0;
      INSERT INTO botrelay_chat_counts (bot_id, status, assignee_id, chats)
        SELECT NEW.bot_id, NEW.status, NEW.assignee_id, 1 WHERE NEW.migrated_to_chat_id = 0
        ON CONFLICT (bot_id, status, assignee_id) DO UPDATE SET chats = chats + 1;
    END`).execute(db)
    await sql.raw(`CREATE TRIGGER botrelay_chats_counted_delete AFTER DELETE ON botrelay_chats
      WHEN OLD.migrated_to_chat_id = 0 BEGIN
      ${countOut("OLD")}
    END`).execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`DROP TRIGGER IF EXISTS botrelay_chats_counted_insert`.execute(db)
    await sql`DROP TRIGGER IF EXISTS botrelay_chats_counted_update`.execute(db)
    await sql`DROP TRIGGER IF EXISTS botrelay_chats_counted_delete`.execute(db)
    await db.schema.dropTable("botrelay_chat_counts").ifExists().execute()
    await db.schema.dropIndex("botrelay_chats_snoozed").ifExists().execute()
    for (const column of ["snoozed_until", "assignee_id", "priority", "status"]) {
      await db.schema.alterTable("botrelay_chats").dropColumn(column).execute()
    }
  }
}
