import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0018: the event log numbers its entries itself, a batch at a time: `botrelay_event_state.last_id` is the
 * last id handed out, so ids are never reused though the newest entries are pruned or deleted with their
 * bot (what AUTOINCREMENT did with a write per entry). Retention finds its range by id, so `created_at`
 * loses its index.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql`CREATE TABLE botrelay_event_state (id INTEGER PRIMARY KEY CHECK (id = 1), last_id INTEGER NOT NULL)`
      .execute(db)
    await sql`INSERT INTO botrelay_event_state (id, last_id) VALUES (1, max(
      COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'botrelay_events'), 0),
      COALESCE((SELECT max(id) FROM botrelay_events), 0)))`.execute(db)
    await recreate(db, false)
  },
  async down(db: Kysely<any>) {
    await recreate(db, true)
    await sql`INSERT INTO sqlite_sequence (name, seq) SELECT 'botrelay_events', last_id FROM botrelay_event_state`
      .execute(db)
    await sql`DROP TABLE botrelay_event_state`.execute(db)
  }
}

/** `botrelay_events` made again, its entries kept: as 0013 made it (AUTOINCREMENT) or as 0018 does. */
const recreate = async (db: Kysely<any>, autoincrement: boolean) => {
  await sql.raw(`CREATE TABLE botrelay_events_next (id integer primary key${autoincrement ? " autoincrement" : ""},
    bot_id integer not null,
    chat_id integer default 0 not null, type text not null, data text not null, created_at text not null)`).execute(db)
  await sql`INSERT INTO botrelay_events_next SELECT id, bot_id, chat_id, type, data, created_at FROM botrelay_events`
    .execute(db)
  await sql`DROP TABLE botrelay_events`.execute(db)
  await sql`ALTER TABLE botrelay_events_next RENAME TO botrelay_events`.execute(db)
  await db.schema.createIndex("botrelay_events_bot").on("botrelay_events").columns(["bot_id", "id"]).execute()
  if (autoincrement) {
    await db.schema.createIndex("botrelay_events_created").on("botrelay_events").column("created_at").execute()
  }
}
