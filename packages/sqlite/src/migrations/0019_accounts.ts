import type { Kysely, Migration } from "kysely"

/**
 * 0019: console accounts, the bots an operator account may act on, and sessions (stored by the SHA-256
 * of their id). A username is unique whatever its case: `username_key` holds it in lower case.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("botrelay_accounts")
      .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
      .addColumn("username", "text", (c) => c.notNull())
      .addColumn("username_key", "text", (c) => c.notNull().unique())
      .addColumn("display_name", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("role", "text", (c) => c.notNull())
      .addColumn("password_hash", "text", (c) => c.notNull())
      .addColumn("enabled", "integer", (c) => c.notNull().defaultTo(1))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("last_login_at", "text", (c) => c.notNull().defaultTo(""))
      .execute()
    await db.schema
      .createTable("botrelay_account_bots")
      .addColumn("account_id", "integer", (c) => c.notNull().references("botrelay_accounts.id").onDelete("cascade"))
      .addColumn("bot_id", "integer", (c) => c.notNull().references("botrelay_bots.id").onDelete("cascade"))
      .addPrimaryKeyConstraint("botrelay_account_bots_pk", ["account_id", "bot_id"])
      .execute()
    await db.schema.createIndex("botrelay_account_bots_bot").on("botrelay_account_bots").column("bot_id").execute()
    await db.schema
      .createTable("botrelay_sessions")
      .addColumn("id_hash", "text", (c) => c.primaryKey())
      .addColumn("account_id", "integer", (c) => c.notNull().references("botrelay_accounts.id").onDelete("cascade"))
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("last_seen_at", "text", (c) => c.notNull())
      .execute()
    await db.schema.createIndex("botrelay_sessions_account").on("botrelay_sessions").column("account_id").execute()
  },
  async down(db: Kysely<any>) {
    for (const table of ["botrelay_sessions", "botrelay_account_bots", "botrelay_accounts"]) {
      await db.schema.dropTable(table).ifExists().execute()
    }
  }
}
