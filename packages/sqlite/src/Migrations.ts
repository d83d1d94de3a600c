import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"
import { type Cipher, checkPlaintext } from "./SecretKey.js"

/** The table in which Kysely's `Migrator` records applied migrations. */
export const migrationTableName = "botrelay_migrations"

/** The table Kysely's `Migrator` uses as its lock. */
export const migrationLockTableName = "botrelay_migrations_lock"

/** The settings 0008 encrypts (frozen: later secret settings are written encrypted from the start). */
const secretSettingsOf0008 = ["llm.api_key"]

/**
 * 0008: bot tokens, bots' `secret_token`, webhook secrets and the LLM key are encrypted with the
 * secret key; tokens get a keyed hash (`token_hash`, unique) for lookups; `botrelay_secret_key` keeps
 * an encrypted check value that tells whether a key is this database's key.
 */
const encryptedSecrets = (cipher: Cipher): Migration => ({
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("botrelay_bots")
      .addColumn("token_hash", "text", (c) => c.notNull().defaultTo(""))
      .execute()
    const bots = await db.selectFrom("botrelay_bots").select(["id", "token", "secret_token"]).execute()
    for (const bot of bots) {
      await db.updateTable("botrelay_bots").set({
        token: cipher.encrypt("token", bot.token),
        token_hash: cipher.tokenHash(bot.token),
        secret_token: cipher.encrypt("secret_token", bot.secret_token)
      }).where("id", "=", bot.id).execute()
    }
    await db.schema
      .createIndex("botrelay_bots_token_hash")
      .on("botrelay_bots")
      .column("token_hash")
      .unique()
      .execute()
    const hooks = await db.selectFrom("botrelay_webhooks").select(["bot_id", "secret"]).execute()
    for (const hook of hooks) {
      await db.updateTable("botrelay_webhooks").set({ secret: cipher.encrypt("webhook_secret", hook.secret) })
        .where("bot_id", "=", hook.bot_id).execute()
    }
    const settings = await db.selectFrom("botrelay_settings").select(["name", "value"])
      .where("name", "in", secretSettingsOf0008).execute()
    for (const setting of settings) {
      await db.updateTable("botrelay_settings").set({ value: cipher.encrypt("setting", setting.value) })
        .where("name", "=", setting.name).execute()
    }
    await db.schema
      .createTable("botrelay_secret_key")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("check_value", "text", (c) => c.notNull())
      .execute()
    await db.insertInto("botrelay_secret_key")
      .values({ id: 1, check_value: cipher.encrypt("check", checkPlaintext) })
      .execute()
  },
  async down(db: Kysely<any>) {
    const bots = await db.selectFrom("botrelay_bots").select(["id", "token", "secret_token"]).execute()
    for (const bot of bots) {
      await db.updateTable("botrelay_bots").set({
        token: cipher.decrypt("token", bot.token),
        secret_token: cipher.decrypt("secret_token", bot.secret_token)
      }).where("id", "=", bot.id).execute()
    }
    const hooks = await db.selectFrom("botrelay_webhooks").select(["bot_id", "secret"]).execute()
    for (const hook of hooks) {
      await db.updateTable("botrelay_webhooks").set({ secret: cipher.decrypt("webhook_secret", hook.secret) })
        .where("bot_id", "=", hook.bot_id).execute()
    }
    const settings = await db.selectFrom("botrelay_settings").select(["name", "value"])
      .where("name", "in", secretSettingsOf0008).execute()
    for (const setting of settings) {
      await db.updateTable("botrelay_settings").set({ value: cipher.decrypt("setting", setting.value) })
        .where("name", "=", setting.name).execute()
    }
    await db.schema.dropIndex("botrelay_bots_token_hash").ifExists().execute()
    await db.schema.alterTable("botrelay_bots").dropColumn("token_hash").execute()
    await db.schema.dropTable("botrelay_secret_key").ifExists().execute()
  }
})

/**
 * Every schema change, in order, for a database whose secrets `cipher` encrypts. A migration is frozen
 * once released: change the schema by adding a new entry, never by editing an old one (they are written
 * against `Kysely<any>` for that reason).
 */
export const migrations = (cipher: Cipher): Record<string, Migration> => ({
  ...unkeyedMigrations,
  "0010_encrypted_secrets": encryptedSecrets(cipher),
  "0011_prune_indexes": pruneIndexes,
  "0012_chats_people": chatsPeople,
  "0013_event_log": eventLog,
  "0014_media_index": mediaIndex,
  "0015_search": search,
  "0016_search_batched": searchBatched
})

/** The chat type a chat id implies (see `Chat.typeOfId`), in SQL. */
const typeOfId = (id: string) =>
  `CASE WHEN ${id} > 0 THEN 'private' WHEN ${id} <= -1000000000000 THEN 'supergroup' ELSE 'group' END`

/**
 * 0012: chats, people and the counters of stats. Triggers on `botrelay_messages` keep each chat's
 * counters and last message, and the hourly and daily counts, whatever writes the history (an edit is an
 * upsert's update, which counts nothing again); the rest comes from sightings. Chats and counts are built
 * from the history already stored, read up to their last message.
 */
const chatsPeople: Migration = {
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

    await sql.raw(`CREATE TRIGGER botrelay_messages_chat_insert AFTER INSERT ON botrelay_messages BEGIN
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
    END`).execute(db)
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

/** 0014: whether a bot's history holds a file (`GET /api/media`) is an index search, not a scan of the history. */
const mediaIndex: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("botrelay_messages_file")
      .on("botrelay_messages")
      .columns(["bot_id", "file_id"])
      .where(sql.ref("file_id"), "is not", null)
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("botrelay_messages_file").ifExists().execute()
  }
}

/**
 * 0011: housekeeping finds processed updates and sent route sends older than a time by an index search
 * instead of a scan (delivered deliveries already are, in id order, through `botrelay_deliveries_status`).
 */
const pruneIndexes: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("botrelay_inbox_processed_received")
      .on("botrelay_inbox")
      .column("received_at")
      .where(sql.ref("processed"), "=", 1)
      .execute()
    await db.schema
      .createIndex("botrelay_route_sends_sent_updated")
      .on("botrelay_route_sends")
      .column("updated_at")
      .where(sql.ref("status"), "=", "sent")
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("botrelay_inbox_processed_received").ifExists().execute()
    await db.schema.dropIndex("botrelay_route_sends_sent_updated").ifExists().execute()
  }
}

/**
 * The words 0015 indexes beside a message's text, so that a search scoped to bots, a chat or a sender
 * intersects posting lists instead of reading every match: `b<bot_id> c<chat_id> u<user_id>`, a negative id
 * written `n<digits>` (the tokenizer splits at `-`). `row` is `new`, `old` or a table.
 */
const scopeWordsOf0015 = (row: string) =>
  `'b' || ${row}.bot_id` +
  ` || ' c' || (CASE WHEN ${row}.chat_id < 0 THEN 'n' || -${row}.chat_id ELSE ${row}.chat_id END)` +
  ` || ' u' || (CASE WHEN ${row}.user_id < 0 THEN 'n' || -${row}.user_id ELSE ${row}.user_id END)`

/** The triggers of 0015: every insert, delete and update of the text, bot, chat or sender, indexed at once. */
const triggersOf0015 = async (db: Kysely<any>) => {
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
const search: Migration = {
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

/** Whether a message's rowid is within the search index's reach (0016). */
const indexedOf0016 = (row: string) => `${row}.rowid <= (SELECT indexed_upto FROM botrelay_search_state WHERE id = 1)`

/**
 * 0016: the search index is written in batches. Messages are indexed in rowid order by the store (before
 * each search, and in the background), up to `botrelay_search_state.indexed_upto`; the triggers keep only
 * what is within that reach in step (a rowid SQLite reuses below it is indexed at once). Indexing a
 * thousand messages in one statement costs a tenth of indexing each as it is written.
 */
const searchBatched: Migration = {
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

/** The migrations before encryption at rest, which need no key. */
const unkeyedMigrations: Record<string, Migration> = {
  "0001_init": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("botrelay_bots")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("token", "text", (c) => c.notNull().unique())
        .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("source", "text", (c) => c.notNull())
        .addColumn("manage_enabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("proxy_enabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("backend_url", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("secret_token", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("long_poll_enabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("webhook_mode", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("disabled", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("username", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("last_update_at", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute()

      await db.schema
        .createTable("botrelay_routes")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("source_bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("target_bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("condition_type", "text", (c) => c.notNull().defaultTo("all"))
        .addColumn("condition_value", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("target_chat_id", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
        .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute()
      await db.schema.createIndex("botrelay_routes_source").on("botrelay_routes").column("source_bot_id").execute()
      await db.schema.createIndex("botrelay_routes_target").on("botrelay_routes").column("target_bot_id").execute()

      await db.schema
        .createTable("botrelay_messages")
        .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("chat_id", "integer", (c) => c.notNull())
        .addColumn("id", "integer", (c) => c.notNull())
        .addColumn("user_id", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("username", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("first_name", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("last_name", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("text", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("date", "integer", (c) => c.notNull())
        .addColumn("media_type", "text")
        .addColumn("file_id", "text")
        .addColumn("reply_to_message_id", "integer")
        .addColumn("direction", "text", (c) => c.notNull())
        .addColumn("edit_date", "integer", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("botrelay_messages_pk", ["bot_id", "chat_id", "id"])
        .execute()
      await db.schema
        .createIndex("botrelay_messages_chat_date")
        .on("botrelay_messages")
        .columns(["bot_id", "chat_id", "date desc", "id desc"])
        .execute()

      await db.schema
        .createTable("botrelay_tags")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("chat_id", "integer", (c) => c.notNull())
        .addColumn("user_id", "integer", (c) => c.notNull())
        .addColumn("username", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("tag", "text", (c) => c.notNull())
        .addColumn("color", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addUniqueConstraint("botrelay_tags_unique", ["chat_id", "user_id", "tag"])
        .execute()
      await db.schema
        .createIndex("botrelay_tags_chat_user")
        .on("botrelay_tags")
        .columns(["chat_id", "user_id"])
        .execute()

      await db.schema
        .createTable("botrelay_api_keys")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("prefix", "text", (c) => c.notNull())
        .addColumn("hash", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("last_used_at", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
        .execute()

      await db.schema
        .createTable("botrelay_api_key_bots")
        .addColumn("api_key_id", "integer", (c) =>
          c.notNull().references("botrelay_api_keys.id").onDelete("cascade"))
        .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addPrimaryKeyConstraint("botrelay_api_key_bots_pk", ["api_key_id", "bot_id"])
        .execute()
      await db.schema.createIndex("botrelay_api_key_bots_bot").on("botrelay_api_key_bots").column("bot_id").execute()
    },
    async down(db: Kysely<any>) {
      for (
        const table of [
          "botrelay_api_key_bots",
          "botrelay_api_keys",
          "botrelay_tags",
          "botrelay_messages",
          "botrelay_routes",
          "botrelay_bots"
        ]
      ) {
        await db.schema.dropTable(table).ifExists().execute()
      }
    }
  },
  "0002_runtime": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("botrelay_inbox")
        .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("update_id", "integer", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("received_at", "text", (c) => c.notNull())
        .addColumn("processed", "integer", (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint("botrelay_inbox_pk", ["bot_id", "update_id"])
        .execute()
      await db.schema
        .createIndex("botrelay_inbox_pending")
        .on("botrelay_inbox")
        .columns(["bot_id", "update_id"])
        .where(sql.ref("processed"), "=", 0)
        .execute()

      await db.schema
        .createTable("botrelay_ingress")
        .addColumn("bot_id", "integer", (c) => c.primaryKey().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("offset", "integer", (c) => c.notNull().defaultTo(0))
        .execute()

      await db.schema
        .createTable("botrelay_deliveries")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("update_id", "integer", (c) => c.notNull())
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "text", (c) => c.notNull())
        .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex("botrelay_deliveries_bot_status")
        .on("botrelay_deliveries")
        .columns(["bot_id", "status", "id"])
        .execute()
      await db.schema
        .createIndex("botrelay_deliveries_bot")
        .on("botrelay_deliveries")
        .columns(["bot_id", "id"])
        .execute()
      await db.schema
        .createIndex("botrelay_deliveries_status")
        .on("botrelay_deliveries")
        .columns(["status", "id"])
        .execute()
    },
    async down(db: Kysely<any>) {
      for (const table of ["botrelay_deliveries", "botrelay_ingress", "botrelay_inbox"]) {
        await db.schema.dropTable(table).ifExists().execute()
      }
    }
  },
  "0003_webhook_secret": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("botrelay_webhooks")
        .addColumn("bot_id", "integer", (c) => c.primaryKey().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("secret", "text", (c) => c.notNull())
        .execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable("botrelay_webhooks").ifExists().execute()
    }
  },
  "0004_long_poll_buffer": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("botrelay_long_poll_buffer")
        .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("update_id", "integer", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("botrelay_long_poll_buffer_pk", ["bot_id", "update_id"])
        .execute()
      await db.schema
        .createIndex("botrelay_long_poll_buffer_age")
        .on("botrelay_long_poll_buffer")
        .columns(["bot_id", "created_at"])
        .execute()

      await db.schema
        .createTable("botrelay_long_poll_state")
        .addColumn("bot_id", "integer", (c) => c.primaryKey().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("allowed_updates", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("trimmed", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("last_trimmed_at", "text", (c) => c.notNull().defaultTo(""))
        .execute()
    },
    async down(db: Kysely<any>) {
      for (const table of ["botrelay_long_poll_state", "botrelay_long_poll_buffer"]) {
        await db.schema.dropTable(table).ifExists().execute()
      }
    }
  },
  "0005_message_deleted": {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("botrelay_messages")
        .addColumn("deleted", "integer", (c) => c.notNull().defaultTo(0))
        .execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("botrelay_messages").dropColumn("deleted").execute()
    }
  },
  "0006_llm_settings": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("botrelay_settings")
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("value", "text", (c) => c.notNull())
        .execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable("botrelay_settings").ifExists().execute()
    }
  },
  "0007_route_sends": {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable("botrelay_route_sends")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
        .addColumn("kind", "text", (c) => c.notNull())
        .addColumn("route_id", "integer", (c) => c.notNull())
        .addColumn("source_bot_id", "integer", (c) => c.notNull())
        .addColumn("update_id", "integer", (c) => c.notNull())
        .addColumn("from_chat_id", "integer", (c) => c.notNull())
        .addColumn("message_id", "integer", (c) => c.notNull())
        .addColumn("chat_id", "integer", (c) => c.notNull())
        .addColumn("reply_to_message_id", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("hop", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
        .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("next_attempt_at", "text", (c) => c.notNull())
        .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex("botrelay_route_sends_bot_status")
        .on("botrelay_route_sends")
        .columns(["bot_id", "status", "id"])
        .execute()

      await db.schema
        .createTable("botrelay_route_mappings")
        .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
        .addColumn("route_id", "integer", (c) => c.notNull())
        .addColumn("source_bot_id", "integer", (c) => c.notNull())
        .addColumn("source_chat_id", "integer", (c) => c.notNull())
        .addColumn("source_message_id", "integer", (c) => c.notNull())
        .addColumn("target_bot_id", "integer", (c) => c.notNull())
        .addColumn("target_chat_id", "integer", (c) => c.notNull())
        .addColumn("target_message_id", "integer", (c) => c.notNull())
        .addColumn("hop", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("reversible", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute()
      await db.schema
        .createIndex("botrelay_route_mappings_target")
        .on("botrelay_route_mappings")
        .columns(["target_bot_id", "target_chat_id", "target_message_id"])
        .execute()
      await db.schema
        .createIndex("botrelay_route_mappings_target_message")
        .on("botrelay_route_mappings")
        .columns(["target_chat_id", "target_message_id"])
        .execute()
      await db.schema
        .createIndex("botrelay_route_mappings_created")
        .on("botrelay_route_mappings")
        .column("created_at")
        .execute()
    },
    async down(db: Kysely<any>) {
      for (const table of ["botrelay_route_mappings", "botrelay_route_sends"]) {
        await db.schema.dropTable(table).ifExists().execute()
      }
    }
  },
  "0008_tag_bots": {
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
,
  "0009_backend_url_origin": {
    async up(db: Kysely<any>) {
      await db.schema
        .alterTable("botrelay_bots")
        .addColumn("backend_url_origin", "text", (c) => c.notNull().defaultTo("api"))
        .execute()
    },
    async down(db: Kysely<any>) {
      await db.schema.alterTable("botrelay_bots").dropColumn("backend_url_origin").execute()
    }
  }
}

/**
 * 0013: the event log live event streams replay from: ids never reused (AUTOINCREMENT), an index for
 * replays of some bots by id, and one for retention by age.
 */
const eventLog: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_events")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("bot_id", "integer", (c) => c.notNull())
      .addColumn("chat_id", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute()
    await db.schema.createIndex("botrelay_events_bot").on("botrelay_events").columns(["bot_id", "id"]).execute()
    await db.schema.createIndex("botrelay_events_created").on("botrelay_events").column("created_at").execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("botrelay_events").ifExists().execute()
  }
}
