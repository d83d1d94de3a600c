import type { Kysely } from "kysely"
import { sql } from "kysely"
import type { Database } from "./Tables.js"

/** Adds an update to a bot's buffer unless it holds it. */
export const insertBuffered = (
  db: Kysely<Database>,
  botId: number,
  updateId: number,
  type: string,
  payload: string,
  createdAt: string
) =>
  db.insertInto("botrelay_long_poll_buffer")
    .values({ bot_id: botId, update_id: updateId, type, payload, created_at: createdAt })
    .onConflict((oc) => oc.columns(["bot_id", "update_id"]).doNothing())

export const confirmBuffered = (db: Kysely<Database>, botId: number, offset: number) =>
  db.deleteFrom("botrelay_long_poll_buffer").where("bot_id", "=", botId).where("update_id", "<", offset)

/** Forgets all but the newest `skip + 1` updates of a bot (nothing when it holds no more). */
export const keepNewestBuffered = (db: Kysely<Database>, botId: number, newestBotId: number, skip: number) =>
  db.deleteFrom("botrelay_long_poll_buffer")
    .where("bot_id", "=", botId)
    .where("update_id", "<", (eb) =>
      eb.selectFrom("botrelay_long_poll_buffer")
        .select("update_id")
        .where("bot_id", "=", newestBotId)
        .orderBy("update_id", "desc")
        .limit(sql.lit(1))
        .offset(skip))

export const bufferedBefore = (db: Kysely<Database>, botId: number, before: string) =>
  db.deleteFrom("botrelay_long_poll_buffer").where("bot_id", "=", botId).where("created_at", "<", before)

/** One update of a bot buffered before `before`, if any: what `bufferedBefore` would forget. */
export const oneBufferedBefore = (db: Kysely<Database>, botId: number, before: string) =>
  db.selectFrom("botrelay_long_poll_buffer")
    .select("update_id")
    .where("bot_id", "=", botId)
    .where("created_at", "<", before)
    .limit(sql.lit(1))

/** The bot's update after its newest `count`, if it holds more: what `keepNewestBuffered` would forget. */
export const oneBufferedPast = (db: Kysely<Database>, botId: number, count: number) =>
  db.selectFrom("botrelay_long_poll_buffer")
    .select("update_id")
    .where("bot_id", "=", botId)
    .orderBy("update_id", "desc")
    .limit(sql.lit(1))
    .offset(count)

export const countBuffered = (db: Kysely<Database>, botId: number) =>
  db.selectFrom("botrelay_long_poll_buffer")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("bot_id", "=", botId)

export const bufferState = (db: Kysely<Database>, botId: number) =>
  db.selectFrom("botrelay_long_poll_state")
    .select(["allowed_updates", "trimmed", "last_trimmed_at"])
    .where("bot_id", "=", botId)

/** Adds to the bot's trimmed count and records the time of the trim. */
export const recordTrim = (db: Kysely<Database>, botId: number, trimmed: number, at: string) =>
  db.insertInto("botrelay_long_poll_state")
    .values({ bot_id: botId, allowed_updates: sql.lit("[]"), trimmed, last_trimmed_at: at })
    .onConflict((oc) =>
      oc.column("bot_id").doUpdateSet((eb) => ({
        trimmed: eb(eb.ref("botrelay_long_poll_state.trimmed"), "+", eb.ref("excluded.trimmed")),
        last_trimmed_at: eb.ref("excluded.last_trimmed_at")
      }))
    )

/** Remembers the allowed_updates (a JSON array) of the bot's getUpdates. */
export const setAllowedUpdates = (db: Kysely<Database>, botId: number, allowed: string) =>
  db.insertInto("botrelay_long_poll_state")
    .values({ bot_id: botId, allowed_updates: allowed, trimmed: sql.lit(0), last_trimmed_at: sql.lit("") })
    .onConflict((oc) =>
      oc.column("bot_id").doUpdateSet((eb) => ({ allowed_updates: eb.ref("excluded.allowed_updates") }))
    )
