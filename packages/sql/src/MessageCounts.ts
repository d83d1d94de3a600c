import { Chat, type Message } from "@botrelay/core"
import type { Kysely, RawBuilder } from "kysely"
import { sql } from "kysely"
import type { ChatsTable, Database } from "./Tables.js"

/** What new messages add to a chat's counters. */
export interface ChatCount {
  readonly bot_id: number
  readonly chat_id: number
  /** Messages not deleted. */
  messages: number
  /** Dates of the incoming messages not deleted: those after the chat's read mark are unread. */
  readonly in_dates: Array<number>
  /** The newest message (the later of equal dates). */
  last_id: number
  last_at: number
}

/** What new messages add to a bot's hourly counts. */
export interface HourCount {
  readonly bot_id: number
  readonly hour: number
  in_count: number
  out_count: number
}

/** What new messages add to a chat's daily count. */
export interface DayCount {
  readonly bot_id: number
  readonly day: number
  readonly chat_id: number
  messages: number
}

/** The counters newly stored messages add to, folded to one change per chat, hour and chat-day. */
export interface Counts {
  readonly chats: ReadonlyArray<ChatCount>
  readonly hours: ReadonlyArray<HourCount>
  readonly days: ReadonlyArray<DayCount>
}

/** Folds newly stored messages (not edits of stored ones), in the order they were stored, into counts. */
export const countsOf = (messages: ReadonlyArray<Message.Message>): Counts => {
  const chats = new Map<string, ChatCount>()
  const hours = new Map<string, HourCount>()
  const days = new Map<string, DayCount>()
  for (const m of messages) {
    const live = m.deleted !== true
    const chatKey = `${m.bot_id}:${m.chat_id}`
    let chat = chats.get(chatKey)
    if (chat === undefined) {
      chat = { bot_id: m.bot_id, chat_id: m.chat_id, messages: 0, in_dates: [], last_id: m.id, last_at: m.date }
      chats.set(chatKey, chat)
    } else if (m.date >= chat.last_at) {
      chat.last_id = m.id
      chat.last_at = m.date
    }
    if (live) {
      chat.messages++
      if (m.direction === "in") chat.in_dates.push(m.date)
    }
    const hour = Math.floor(m.date / 3600)
    const hourKey = `${m.bot_id}:${hour}`
    let hourCount = hours.get(hourKey)
    if (hourCount === undefined) hours.set(hourKey, hourCount = { bot_id: m.bot_id, hour, in_count: 0, out_count: 0 })
    if (m.direction === "in") hourCount.in_count++
    else hourCount.out_count++
    const day = Math.floor(m.date / 86400)
    const dayKey = `${m.bot_id}:${day}:${m.chat_id}`
    const dayCount = days.get(dayKey)
    if (dayCount === undefined) days.set(dayKey, { bot_id: m.bot_id, day, chat_id: m.chat_id, messages: 1 })
    else dayCount.messages++
  }
  return { chats: [...chats.values()], hours: [...hours.values()], days: [...days.values()] }
}

/**
 * How a dialect counts the numbers of a JSON array (text, a bound parameter) that are greater than an
 * expression (SQLite: `json_each`, Postgres: `jsonb_array_elements_text`).
 */
export type CountGreater = (jsonArray: string, than: RawBuilder<number>) => RawBuilder<number>

/**
 * Adds new messages to a chat's counters, creating the chat: unread are the incoming ones after its read
 * mark (`inDates` as a JSON array is read, with the dialect's `countGreater`, only when the oldest of them
 * is not after it), and the newest becomes its last message unless it already has a later one.
 */
export const addToChat = (countGreater: CountGreater) =>
(
  db: Kysely<Database>,
  botId: number,
  chatId: number,
  type: ChatsTable["type"],
  messages: number,
  inCount: number,
  lastId: number,
  lastAt: number,
  oldestIn: number,
  inDates: string
) =>
  db.insertInto("botrelay_chats").values({
    bot_id: botId,
    chat_id: chatId,
    type,
    message_count: messages,
    unread_count: inCount,
    last_message_id: lastId,
    last_message_at: lastAt
  }).onConflict((oc) =>
    oc.columns(["bot_id", "chat_id"]).doUpdateSet({
      message_count: sql<number>`botrelay_chats.message_count + excluded.message_count`,
      unread_count: sql<number>`botrelay_chats.unread_count + case when ${oldestIn} > botrelay_chats.read_at
        then excluded.unread_count
        else ${countGreater(inDates, sql<number>`botrelay_chats.read_at`)} end`,
      last_message_id: sql<number>`case when excluded.last_message_at >= botrelay_chats.last_message_at
        then excluded.last_message_id else botrelay_chats.last_message_id end`,
      last_message_at: sql<number>`case when excluded.last_message_at > botrelay_chats.last_message_at
        then excluded.last_message_at else botrelay_chats.last_message_at end`,
      // The person wrote again: the bot can reach them.
      unreachable_since: sql<number>`case when excluded.unread_count > 0 then 0 else botrelay_chats.unreachable_since end`,
      unreachable_reason: sql<string>`case when excluded.unread_count > 0 then '' else botrelay_chats.unreachable_reason end`
    })
  )

/** The parameters of `addToChat` for a chat's count. */
export const addToChatParameters = (c: ChatCount) =>
  [
    c.bot_id,
    c.chat_id,
    Chat.typeOfId(c.chat_id),
    c.messages,
    c.in_dates.length,
    c.last_id,
    c.last_at,
    c.in_dates.length === 0 ? 0 : Math.min(...c.in_dates),
    c.in_dates.length <= 1 ? "[]" : JSON.stringify(c.in_dates)
  ] as const

/** Adds messages in and out to a bot's count of an hour. */
export const addToHour = (db: Kysely<Database>, botId: number, hour: number, inCount: number, outCount: number) =>
  db.insertInto("botrelay_message_hours").values({ bot_id: botId, hour, in_count: inCount, out_count: outCount })
    .onConflict((oc) =>
      oc.columns(["bot_id", "hour"]).doUpdateSet({
        in_count: sql<number>`botrelay_message_hours.in_count + excluded.in_count`,
        out_count: sql<number>`botrelay_message_hours.out_count + excluded.out_count`
      })
    )

/** Adds messages to a chat's count of a day. */
export const addToDay = (db: Kysely<Database>, botId: number, day: number, chatId: number, messages: number) =>
  db.insertInto("botrelay_chat_days").values({ bot_id: botId, day, chat_id: chatId, messages })
    .onConflict((oc) =>
      oc.columns(["bot_id", "day", "chat_id"]).doUpdateSet({
        messages: sql<number>`botrelay_chat_days.messages + excluded.messages`
      })
    )

/**
 * The counter changes that move an outgoing message (not deleted) from the hour and day of `from` to those of
 * `to` (Unix seconds), as `addToHour` and `addToDay` parameters: none when both fall in the same hour.
 */
export const moved = (
  botId: number,
  chatId: number,
  from: number,
  to: number
): {
  readonly hours: ReadonlyArray<readonly [botId: number, hour: number, inCount: number, outCount: number]>
  readonly days: ReadonlyArray<readonly [botId: number, day: number, chatId: number, messages: number]>
} => {
  const [fromHour, toHour] = [Math.floor(from / 3600), Math.floor(to / 3600)]
  if (fromHour === toHour) return { hours: [], days: [] }
  const [fromDay, toDay] = [Math.floor(from / 86400), Math.floor(to / 86400)]
  return {
    hours: [[botId, fromHour, 0, -1], [botId, toHour, 0, 1]],
    days: fromDay === toDay ? [] : [[botId, fromDay, chatId, -1], [botId, toDay, chatId, 1]]
  }
}
