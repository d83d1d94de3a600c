import { Schema } from "effect"

/** Messages in and out on one UTC day (`YYYY-MM-DD`). */
export const DayCount = Schema.Struct({
  day: Schema.String,
  in: Schema.Int,
  out: Schema.Int
}).annotations({ identifier: "DayCount" })
export type DayCount = typeof DayCount.Type

/** One of the busiest chats of a range: messages in and out. */
export const TopChat = Schema.Struct({
  bot_id: Schema.Int,
  chat_id: Schema.Int,
  title: Schema.String,
  messages: Schema.Int
}).annotations({ identifier: "TopChat" })
export type TopChat = typeof TopChat.Type

/** What the outbox did with updates bound for backends. */
export const DeliveryFigures = Schema.Struct({
  delivered: Schema.Int,
  /** Still pending after at least one failed attempt. */
  retrying: Schema.Int,
  dead: Schema.Int,
  /** Median milliseconds from queueing to delivery; 0 without deliveries. */
  p50_ms: Schema.Int
}).annotations({ identifier: "DeliveryFigures" })
export type DeliveryFigures = typeof DeliveryFigures.Type

/** `GET /api/stats`: figures of one bot or all bots in scope over a range. */
export const Stats = Schema.Struct({
  totals: Schema.Struct({
    in: Schema.Int,
    out: Schema.Int,
    chats: Schema.Int,
    people: Schema.Int,
    active_chats_7d: Schema.Int
  }),
  per_day: Schema.Array(DayCount),
  /** 24 counts: messages in and out by UTC hour of day. */
  per_hour: Schema.Array(Schema.Int),
  top_chats: Schema.Array(TopChat),
  deliveries: DeliveryFigures
}).annotations({ identifier: "Stats" })
export type Stats = typeof Stats.Type

/** Messages in and out of one hour (Unix seconds / 3600). */
export interface HourCount {
  readonly hour: number
  readonly in: number
  readonly out: number
}

/** The longest range stats cover, in days. */
export const maxRangeDays = 366

/** The range stats cover by default: the last 30 days. */
export const defaultRangeDays = 30
