import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0002: instances sharing the database, by their heartbeats, and each bot's lease (as SQLite's 0021). A lease
 * row outlives its owner (its epoch only grows) and goes with its bot. The URL each webhook was registered at.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql.raw(`
CREATE TABLE botrelay_instances (
  id text COLLATE "C" PRIMARY KEY,
  started_at text COLLATE "C" NOT NULL,
  last_heartbeat_at text COLLATE "C" NOT NULL
);
CREATE TABLE botrelay_leases (
  bot_id bigint PRIMARY KEY REFERENCES botrelay_bots (id) ON DELETE CASCADE,
  instance_id text COLLATE "C" NOT NULL,
  epoch bigint NOT NULL,
  expires_at text COLLATE "C" NOT NULL,
  running integer NOT NULL DEFAULT 0
);
ALTER TABLE botrelay_webhooks ADD COLUMN url text COLLATE "C" NOT NULL DEFAULT '';`).execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`ALTER TABLE botrelay_webhooks DROP COLUMN IF EXISTS url`.execute(db)
    await sql`DROP TABLE IF EXISTS botrelay_leases`.execute(db)
    await sql`DROP TABLE IF EXISTS botrelay_instances`.execute(db)
  }
}
