import { Message } from "@botrelay/core"
import { Schema } from "effect"

/** A positive id in a query string. */
export const Id = Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))

/** A Telegram chat id in a query string (negative for groups and channels). */
export const ChatId = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.between(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
)

/** One chat and a page of its history: `limit` 1..200 (default 50), `offset` ≥ 0 (default 0). */
export const ChatPageQuery = Schema.Struct({
  bot_id: Id,
  chat_id: ChatId,
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(1, Message.maxPageSize, { message: () => `limit must be an integer from 1 to ${Message.maxPageSize}` })
    ),
    { default: () => 50 }
  ),
  offset: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(0, Number.MAX_SAFE_INTEGER, { message: () => "offset must be a non-negative integer" })
    ),
    { default: () => 0 }
  )
})
