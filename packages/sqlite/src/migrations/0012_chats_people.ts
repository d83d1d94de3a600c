import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/** The chat type a chat id implies (see `Chat.typeOfId`), in SQL. */
const typeOfId = (id: string) =>
  `CASE WHEN ${id} > 0 THEN 'private' WHEN ${id} <= -1000000000000 THEN 'supergroup' ELSE 'group' END`

/** The trigger that counted each stored message into its chat and the hourly and daily counts (0012 to 0016). */
export const chatInsertTriggerOf0012 = `CREATE TRIGGER botrelay_messages_chat_insert AFTER INSERT ON botrelay_messages BEGIN
      INSERT INTO botrelay_chats (bot_id, chat_id, type, message_count, unread_count, last_message_id, last_message_at)
        VALUES (NEW.bot_id, NEW.chat_id, ${typeOfId("NEW.chat_id")}, NEW.deleted = 0, NEW.deleted = 0 AND NEW.direction = 'in',
          NEW.id, NEW.date)
        ON CONFLICT (bot_id, chat_id) DO UPDATE SET
          message_count = message_count + excluded.message_count,
          unread_count = unread_count + (excluded.unread_count AND NEW.date > read_at),
          last_message_id = CASE WHEN NEW.date >= last_message_at THEN NEW.id ELSE last_message_id END,
          last_message_at = CASE WHEN NEW.date >= last_message_at THEN NEW.date ELSE last_message_at END;
      INSERT INTO botrelay_message_hours (bot_id, hour, in_count, out_count)
        VALUES (NEW.bot_id, NEW.date / 3600, NEW.direction = 'in', NEW.direction = 'out')
        ON CONFLICT (bot_id, hour) DO UPDATE SET
          in_count = in_count + excluded.in_count, out_count = out_count + excluded.out_count;
      INSERT INTO botrelay_chat_days (bot_id, day, chat_id, messages) VALUES (NEW.bot_id, NEW.date / 86400, NEW.chat_id, 1)
        ON CONFLICT (bot_id, day, chat_id) DO UPDATE SET messages = messages + 1;
    END`

/**
 * 0012: chats, people and the counters of stats. Triggers on `botrelay_messages` keep each chat's
 * counters and last message, and the hourly and daily counts, whatever writes the history (an edit is an
 * upsert's update, which counts nothing again); the rest comes from sightings. Chats and counts are built
 * from the history already stored, read up to their last message.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_chats")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("chat_id", "integer", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("username", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("first_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("last_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("search", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("last_message_id", "integer")
      .addColumn("last_message_at", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("read_at", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("unread_count", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("message_count", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("member_count", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("state", "text", (c) => c.notNull().defaultTo("member"))
      .addColumn("migrated_to_chat_id", "integer", (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint("botrelay_chats_pk", ["bot_id", "chat_id"])
      .execute()
    await db.schema
      .createIndex("botrelay_chats_activity")
      .on("botrelay_chats")
      .columns(["last_message_at desc", "bot_id desc", "chat_id desc"])
      .where(sql.ref("migrated_to_chat_id"), "=", 0)
      .execute()
    await db.schema
      .createIndex("botrelay_chats_bot_activity")
      .on("botrelay_chats")
      .columns(["bot_id", "last_message_at desc", "chat_id desc"])
      .where(sql.ref("migrated_to_chat_id"), "=", 0)
      .execute()

    await db.schema
      .createTable("botrelay_people")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("user_id", "integer", (c) => c.notNull())
      .addColumn("username", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("first_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("last_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("language_code", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("is_bot", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("first_seen_at", "integer", (c) => c.notNull())
      .addColumn("last_seen_at", "integer", (c) => c.notNull())
      .addColumn("search", "text", (c) => c.notNull().defaultTo(""))
      .addPrimaryKeyConstraint("botrelay_people_pk", ["bot_id", "user_id"])
      .execute()
    await db.schema.createIndex("botrelay_people_user").on("botrelay_people").column("user_id").execute()
    await db.schema
      .createIndex("botrelay_people_seen")
      .on("botrelay_people")
      .columns(["bot_id", "last_seen_at desc", "user_id desc"])
      .execute()

    await db.schema
      .createTable("botrelay_chat_members")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("chat_id", "integer", (c) => c.notNull())
      .addColumn("user_id", "integer", (c) => c.notNull())
      .addColumn("last_seen_at", "integer", (c) => c.notNull())
      .addPrimaryKeyConstraint("botrelay_chat_members_pk", ["bot_id", "chat_id", "user_id"])
      .modifyEnd(sql`without rowid`)
      .execute()
    await db.schema
      .createIndex("botrelay_chat_members_user")
      .on("botrelay_chat_members")
      .columns(["bot_id", "user_id"])
      .execute()

    await db.schema.createIndex("botrelay_tags_user").on("botrelay_tags").column("user_id").execute()

    await db.schema
      .createTable("botrelay_message_hours")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("hour", "integer", (c) => c.notNull())
      .addColumn("in_count", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("out_count", "integer", (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint("botrelay_message_hours_pk", ["bot_id", "hour"])
      .modifyEnd(sql`without rowid`)
      .execute()
    await db.schema
      .createTable("botrelay_chat_days")
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addColumn("day", "integer", (c) => c.notNull())
      .addColumn("chat_id", "integer", (c) => c.notNull())
      .addColumn("messages", "integer", (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint("botrelay_chat_days_pk", ["bot_id", "day", "chat_id"])
      .modifyEnd(sql`without rowid`)
      .execute()

    await sql.raw(chatInsertTriggerOf0012).execute(db)
    await sql.raw(`CREATE TRIGGER botrelay_messages_chat_deleted AFTER UPDATE OF deleted ON botrelay_messages
      WHEN OLD.deleted <> NEW.deleted BEGIN
      UPDATE botrelay_chats SET
        message_count = message_count + OLD.deleted - NEW.deleted,
        unread_count = unread_count + CASE WHEN NEW.direction = 'in' AND NEW.date > read_at
          THEN OLD.deleted - NEW.deleted ELSE 0 END
        WHERE bot_id = NEW.bot_id AND chat_id = NEW.chat_id;
    END`).execute(db)

    await sql.raw(`INSERT INTO botrelay_chats (bot_id, chat_id, type, message_count, last_message_at, read_at)
      SELECT bot_id, chat_id, ${typeOfId("chat_id")}, sum(deleted = 0), max(date), max(date)
      FROM botrelay_messages GROUP BY bot_id, chat_id`).execute(db)
    await sql.raw(`UPDATE botrelay_chats SET last_message_id = (SELECT m.id FROM botrelay_messages m
      WHERE m.bot_id = botrelay_chats.bot_id AND m.chat_id = botrelay_chats.chat_id ORDER BY m.date DESC, m.id DESC LIMIT 1)`)
      .execute(db)
    await sql.raw(`INSERT INTO botrelay_message_hours (bot_id, hour, in_count, out_count)
      SELECT bot_id, date / 3600, sum(direction = 'in'), sum(direction = 'out') FROM botrelay_messages
      GROUP BY bot_id, date / 3600`).execute(db)
    await sql.raw(`INSERT INTO botrelay_chat_days (bot_id, day, chat_id, messages)
      SELECT bot_id, date / 86400, chat_id, count(*) FROM botrelay_messages GROUP BY bot_id, date / 86400, chat_id`)
      .execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`DROP TRIGGER IF EXISTS botrelay_messages_chat_insert`.execute(db)
    await sql`DROP TRIGGER IF EXISTS botrelay_messages_chat_deleted`.execute(db)
    await db.schema.dropIndex("botrelay_tags_user").ifExists().execute()
    for (
      const table of [
        "botrelay_chat_days",
        "botrelay_message_hours",
        "botrelay_chat_members",
        "botrelay_people",
        "botrelay_chats"
      ]
    ) {
      await db.schema.dropTable(table).ifExists().execute()
    }
  }
}
