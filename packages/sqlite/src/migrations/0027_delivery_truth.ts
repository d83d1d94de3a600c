import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0027: delivery truth. Outgoing messages sent through the API carry a `local_id` and their delivery state
 * (`botrelay_outgoing` numbers them and keeps what was asked, for a resend); chats remember that their person
 * blocked the bot; `botrelay_idempotency` keeps the answers of sends made with an `Idempotency-Key`.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql`ALTER TABLE botrelay_messages ADD COLUMN local_id integer`.execute(db)
    await sql`ALTER TABLE botrelay_messages ADD COLUMN delivery text NOT NULL DEFAULT 'sent'`.execute(db)
    await sql`ALTER TABLE botrelay_messages ADD COLUMN delivery_error text NOT NULL DEFAULT ''`.execute(db)
    await sql`ALTER TABLE botrelay_messages ADD COLUMN delivery_at integer NOT NULL DEFAULT 0`.execute(db)
    await sql`CREATE UNIQUE INDEX botrelay_messages_local_id ON botrelay_messages (local_id) WHERE local_id IS NOT NULL`
      .execute(db)
    await sql`CREATE TABLE botrelay_outgoing (
      local_id integer PRIMARY KEY AUTOINCREMENT,
      bot_id integer NOT NULL REFERENCES botrelay_bots (id) ON DELETE CASCADE,
      chat_id integer NOT NULL,
      request text NOT NULL DEFAULT '',
      created_at integer NOT NULL
    )`.execute(db)
    await sql`ALTER TABLE botrelay_chats ADD COLUMN unreachable_since integer NOT NULL DEFAULT 0`.execute(db)
    await sql`ALTER TABLE botrelay_chats ADD COLUMN unreachable_reason text NOT NULL DEFAULT ''`.execute(db)
    await sql`CREATE TABLE botrelay_idempotency (
      caller text NOT NULL,
      key text NOT NULL,
      request text NOT NULL,
      status integer NOT NULL DEFAULT 0,
      body text NOT NULL DEFAULT '',
      created_at integer NOT NULL,
      PRIMARY KEY (caller, key)
    )`.execute(db)
    await sql`CREATE INDEX botrelay_idempotency_created ON botrelay_idempotency (created_at)`.execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`DROP TABLE IF EXISTS botrelay_idempotency`.execute(db)
    await sql`ALTER TABLE botrelay_chats DROP COLUMN unreachable_reason`.execute(db)
    await sql`ALTER TABLE botrelay_chats DROP COLUMN unreachable_since`.execute(db)
    await sql`DROP TABLE IF EXISTS botrelay_outgoing`.execute(db)
    await sql`DROP INDEX IF EXISTS botrelay_messages_local_id`.execute(db)
    for (const column of ["delivery_at", "delivery_error", "delivery", "local_id"]) {
      await sql.raw(`ALTER TABLE botrelay_messages DROP COLUMN ${column}`).execute(db)
    }
  }
}
