import type { Kysely, Migration } from "kysely"

/** 0001: the first schema: bots, routes, messages, tags and API keys. */
export const migration: Migration = {
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
}
