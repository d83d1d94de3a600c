import { Chat, type StatsStore } from "@botrelay/core"
import { StatsQueries } from "@botrelay/sql"
import { attempt, type Connection, db } from "./SqliteConnection.js"

/** The median of some numbers; 0 for none. */
const median = (values: Array<number>): number => {
  if (values.length === 0) return 0
  values.sort((a, b) => a - b)
  const middle = values.length >> 1
  return values.length % 2 === 1 ? values[middle]! : Math.round((values[middle - 1]! + values[middle]!) / 2)
}

/** The `StatsStore` on SQLite. */
export const make = (c: Connection): StatsStore.StatsStoreService => ({
  hourCounts: (botIds, fromHour, toHour) =>
    attempt("hourCounts", () =>
      botIds.length === 0 ? [] : c.all(StatsQueries.hourCounts(db, botIds, fromHour, toHour)).map((r) => ({
        hour: r.hour,
        in: r.in_count,
        out: r.out_count
      }))),

  chatHourCounts: (chats, fromHour, toHour) =>
    attempt("chatHourCounts", () =>
      chats.length === 0 ? [] : c.all(StatsQueries.chatHourCounts(db, chats, fromHour, toHour)).map((r) => ({
        hour: r.hour,
        in: r.in_count,
        out: r.out_count
      }))),

  topChats: (botIds, fromDay, toDay, limit, chats = []) =>
    attempt("topChats", () =>
      botIds.length === 0 && chats.length === 0
        ? []
        : c.all(StatsQueries.topChats(db, botIds, fromDay, toDay, limit, chats)).map((r) => {
        const names = c.all(StatsQueries.chatNames(db, r.bot_id, r.chat_id))[0]
        return {
          bot_id: r.bot_id,
          chat_id: r.chat_id,
          title: names === undefined ? "" : Chat.displayTitle(names),
          messages: r.messages
        }
      })),

  activeChats: (botIds, fromDay, toDay, chats = []) =>
    attempt("activeChats", () =>
      botIds.length === 0 && chats.length === 0
        ? 0
        : c.all(StatsQueries.activeChats(db, botIds, fromDay, toDay, chats))[0]!.n),

  totals: (botIds, chats = []) =>
    attempt("totals", () =>
      botIds.length === 0 && chats.length === 0 ? { chats: 0, people: 0 } : {
        chats: c.all(StatsQueries.chatCount(db, botIds, chats))[0]!.n,
        people: c.all(StatsQueries.peopleCount(db, botIds, chats))[0]!.n
      }),

  deliveries: (botIds, from, to) =>
    attempt("deliveries", () => {
      if (botIds.length === 0) return { delivered: 0, retrying: 0, dead: 0, p50_ms: 0 }
      const counts = new Map(c.all(StatsQueries.deliveryCounts(db, botIds, from, to)).map((r) => [r.status, r.n]))
      const durations = c.all(StatsQueries.deliveryTimes(db, botIds, from, to))
        .map((r) => Date.parse(r.updated_at) - Date.parse(r.created_at))
        .filter(Number.isFinite)
      return {
        delivered: counts.get("delivered") ?? 0,
        retrying: counts.get("pending") ?? 0,
        dead: counts.get("dead") ?? 0,
        p50_ms: Math.max(0, median(durations))
      }
    })
})
