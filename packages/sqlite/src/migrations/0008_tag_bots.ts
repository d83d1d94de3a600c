import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/** 0008: tags belong to a bot. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_tags_by_bot")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("bot_id", "integer", (c) => c.notNull())
      .addColumn("chat_id", "integer", (c) => c.notNull())
      .addColumn("user_id", "integer", (c) => c.notNull())
      .addColumn("username", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("tag", "text", (c) => c.notNull())
      .addColumn("color", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("botrelay_tags_by_bot_unique", ["bot_id", "chat_id", "user_id", "tag"])
      .execute()
    await sql`INSERT INTO botrelay_tags_by_bot (id, bot_id, chat_id, user_id, username, tag, color, created_at)
      SELECT t.id,
        COALESCE((SELECT MIN(m.bot_id) FROM botrelay_messages m WHERE m.chat_id = t.chat_id), 0),
        t.chat_id, t.user_id, t.username, t.tag, t.color, t.created_at
      FROM botrelay_tags t`.execute(db)
    await db.schema.dropTable("botrelay_tags").execute()
    await db.schema.alterTable("botrelay_tags_by_bot").renameTo("botrelay_tags").execute()
    await db.schema
      .createIndex("botrelay_tags_chat_user")
      .on("botrelay_tags")
      .columns(["chat_id", "user_id"])
      .execute()
  },
  async down() {
    throw new Error("0008_tag_bots cannot be undone: tags of several bots in one chat would collide")
  }
}
