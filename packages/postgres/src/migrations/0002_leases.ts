import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0002: instances sharing the database, by their heartbeats, and each bot's lease (as SQLite's 0021). A lease
 * row outlives its owner (its epoch only grows) and goes with its bot.
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
);`).execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`DROP TABLE IF EXISTS botrelay_leases`.execute(db)
    await sql`DROP TABLE IF EXISTS botrelay_instances`.execute(db)
  }
}
