import type { Kysely } from "kysely"
import { sql } from "kysely"
import { inFilter } from "./ScopeQueries.js"
import type { Database } from "./Tables.js"

/** Single chats of a chat-level scope. */
export type Chats = ReadonlyArray<{ readonly bot_id: number; readonly chat_id: number }>

/** Messages in and out per hour of the range (inclusive) that has any, summed over the bots (at least one). */
export const hourCounts = (db: Kysely<Database>, botIds: ReadonlyArray<number>, fromHour: number, toHour: number) =>
  db.selectFrom("botrelay_message_hours")
    .select(["hour", sql<number>`sum(in_count)`.as("in_count"), sql<number>`sum(out_count)`.as("out_count")])
    .where("bot_id", "in", botIds)
    .where("hour", ">=", fromHour)
    .where("hour", "<=", toHour)
    .groupBy("hour")
    .orderBy("hour")

/**
 * Messages in and out per hour of the range (inclusive) that has any, summed over single chats (at least
 * one): read from the chats' messages by their (bot_id, chat_id, date) index, as the hour counters are per bot.
 */
export const chatHourCounts = (db: Kysely<Database>, chats: Chats, fromHour: number, toHour: number) => {
  const hour = sql<number>`(date / 3600)`
  return db.selectFrom("botrelay_messages")
    .select([
      hour.as("hour"),
      sql<number>`sum(case when direction = 'in' then 1 else 0 end)`.as("in_count"),
      sql<number>`sum(case when direction = 'out' then 1 else 0 end)`.as("out_count")
    ])
    .where(inFilter({ bot_ids: [], chats }, "bot_id", "chat_id"))
    .where("date", ">=", fromHour * 3600)
    .where("date", "<", (toHour + 1) * 3600)
    .groupBy(hour)
    .orderBy(hour)
}

/** The chats with the most messages over the days (inclusive), most first. */
export const topChats = (
  db: Kysely<Database>,
  botIds: ReadonlyArray<number>,
  fromDay: number,
  toDay: number,
  limit: number,
  chats: Chats = []
) =>
  db.selectFrom("botrelay_chat_days")
    .select(["bot_id", "chat_id", sql<number>`sum(messages)`.as("messages")])
    .where(inFilter({ bot_ids: botIds, chats }, "bot_id", "chat_id"))
    .where("day", ">=", fromDay)
    .where("day", "<=", toDay)
    .groupBy(["bot_id", "chat_id"])
    .orderBy("messages", "desc")
    .orderBy("bot_id")
    .orderBy("chat_id")
    .limit(limit)

/** A chat's names, for titles. */
export const chatNames = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.selectFrom("botrelay_chats")
    .select(["title", "username", "first_name", "last_name"])
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)

/** How many chats had messages over the days (inclusive). */
export const activeChats = (
  db: Kysely<Database>,
  botIds: ReadonlyArray<number>,
  fromDay: number,
  toDay: number,
  chats: Chats = []
) =>
  db.selectFrom((eb) =>
    eb.selectFrom("botrelay_chat_days")
      .select(["bot_id", "chat_id"])
      .distinct()
      .where(inFilter({ bot_ids: botIds, chats }, "bot_id", "chat_id"))
      .where("day", ">=", fromDay)
      .where("day", "<=", toDay)
      .as("active")
  ).select(sql<number>`count(*)`.as("n"))

/** How many chats the bots have, migrated-away ones left out. */
export const chatCount = (db: Kysely<Database>, botIds: ReadonlyArray<number>, chats: Chats = []) =>
  db.selectFrom("botrelay_chats")
    .select(sql<number>`count(*)`.as("n"))
    .where(inFilter({ bot_ids: botIds, chats }, "bot_id", "chat_id"))
    .where("migrated_to_chat_id", "=", sql.lit(0))

/** How many distinct users the bots saw, with the members seen in the single chats. */
export const peopleCount = (db: Kysely<Database>, botIds: ReadonlyArray<number>, chats: Chats = []) =>
  chats.length === 0
    ? db.selectFrom("botrelay_people")
      .select(sql<number>`count(distinct user_id)`.as("n"))
      .where("bot_id", "in", botIds)
    : db.selectFrom((eb) =>
      eb.selectFrom("botrelay_people").select("user_id").where(inFilter({ bot_ids: botIds, chats: [] }, "bot_id", "bot_id"))
        .union(
          eb.selectFrom("botrelay_chat_members").select("user_id").where(inFilter({ bot_ids: [], chats }, "bot_id", "chat_id"))
        )
        .as("seen")
    ).select(sql<number>`count(*)`.as("n"))

/** Deliveries queued in the range, by status; pending ones only once an attempt failed (retrying). */
export const deliveryCounts = (db: Kysely<Database>, botIds: ReadonlyArray<number>, from: string, to: string) =>
  db.selectFrom("botrelay_deliveries")
    .select(["status", sql<number>`count(*)`.as("n")])
    .where("bot_id", "in", botIds)
    .where("created_at", ">=", from)
    .where("created_at", "<", to)
    .where((eb) => eb.or([eb("status", "<>", sql.lit("pending")), eb("attempts", ">", sql.lit(0))]))
    .groupBy("status")

/** How many delivered deliveries the median is taken over at most: the latest ones. */
export const medianSample = 10_000

/** The queueing and delivery times of the latest delivered deliveries queued in the range. */
export const deliveryTimes = (db: Kysely<Database>, botIds: ReadonlyArray<number>, from: string, to: string) =>
  db.selectFrom("botrelay_deliveries")
    .select(["created_at", "updated_at"])
    .where("bot_id", "in", botIds)
    .where("status", "=", sql.lit("delivered"))
    .where("created_at", ">=", from)
    .where("created_at", "<", to)
    .orderBy("id", "desc")
    .limit(sql.lit(medianSample))
