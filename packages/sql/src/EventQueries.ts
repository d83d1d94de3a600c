import type { LiveEvent } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import type { Database, EventsTable } from "./Tables.js"

/** The entry a row of `botrelay_events` holds. */
export const toLogEntry = (r: Selectable<EventsTable>): LiveEvent.LogEntry => ({
  id: r.id,
  bot_id: r.bot_id,
  chat_id: r.chat_id,
  type: r.type as LiveEvent.EntryType,
  data: r.data,
  created_at: r.created_at
})

/** The last id handed out. */
export const lastEventId = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_event_state").select("last_id").where("id", "=", sql.lit(1))

/** Records the last id handed out. */
export const setLastEventId = (db: Kysely<Database>, lastId: number) =>
  db.updateTable("botrelay_event_state").set({ last_id: lastId }).where("id", "=", sql.lit(1))

/** Appends an entry with the id handed out to it. */
export const appendEvent = (
  db: Kysely<Database>,
  id: number,
  botId: number,
  chatId: number,
  type: string,
  data: string,
  createdAt: string
) =>
  db.insertInto("botrelay_events")
    .values({ id, bot_id: botId, chat_id: chatId, type, data, created_at: createdAt })

/** Entries after an id in id order: of the query's bots and chat, and the log's markers (bot 0). */
export const readEvents = (db: Kysely<Database>, query: LiveEvent.LogQuery) =>
  db.selectFrom("botrelay_events")
    .selectAll()
    .where("id", ">", query.after)
    .where((eb) => {
      const scoped = [
        ...(query.bot_ids === undefined
          ? []
          : [query.bot_ids.length === 0 ? eb.lit(false) : eb("bot_id", "in", query.bot_ids)]),
        ...(query.chat_id === undefined ? [] : [eb("chat_id", "=", query.chat_id)])
      ]
      return scoped.length === 0 ? eb.lit(true) : eb.or([eb.and(scoped), eb("bot_id", "=", eb.lit(0))])
    })
    .orderBy("id")
    .limit(query.limit)

export const oldestEventId = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_events").select("id").orderBy("id").limit(sql.lit(1))

export const newestEvent = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_events").selectAll().orderBy("id", "desc").limit(sql.lit(1))

/**
 * The oldest entry appended at or after a time: a scan from the oldest, which passes over only what
 * retention is about to delete (entries are appended in time order).
 */
export const firstEventSince = (db: Kysely<Database>, since: string) =>
  db.selectFrom("botrelay_events")
    .select("id")
    .where("created_at", ">=", since)
    .orderBy("id")
    .limit(sql.lit(1))

/** The oldest entries up to an id that were appended before a time. */
export const pruneEvents = (db: Kysely<Database>, upTo: number, before: string, limit: number) =>
  db.deleteFrom("botrelay_events").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_events")
      .select("id")
      .where("id", "<=", upTo)
      .where("created_at", "<", before)
      .orderBy("id")
      .limit(limit))
