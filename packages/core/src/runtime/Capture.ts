import { BotApi } from "@botrelay/telegram"
import { Either, Schema } from "effect"
import type { Message } from "../domain/Message.js"
import { fromTelegram } from "../domain/Message.js"

const decodeUpdate = Schema.decodeUnknownEither(BotApi.Update)

const messageKinds = [
  "message",
  "edited_message",
  "channel_post",
  "edited_channel_post",
  "business_message",
  "edited_business_message"
] as const

/** FNV-1a over the string, folded to 52 bits: stable across processes and restarts. */
const hash52 = (value: string): number => {
  let high = 0x811c9dc5
  let low = 0x050c5d1f
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    high = Math.imul(high ^ code, 0x01000193) >>> 0
    low = Math.imul(low ^ (code + i), 0x01000193) >>> 0
  }
  return (high & 0xfffff) * 0x100000000 + low
}

/**
 * The id of the synthetic message an inline-button press becomes: negative, so it never collides
 * with a real message id, and derived from the callback query id, so redelivery keeps it.
 */
export const callbackMessageId = (callbackQueryId: string): number => -(hash52(callbackQueryId) + 1)

const fromCallback = (botId: number, query: BotApi.CallbackQuery, date: number): Message => {
  const chatId = query.message?.chat.id ?? query.from.id
  return {
    id: callbackMessageId(query.id),
    chat_id: chatId,
    bot_id: botId,
    user_id: query.from.id,
    username: query.from.username ?? "",
    first_name: query.from.first_name,
    last_name: query.from.last_name ?? "",
    text: query.data ?? query.game_short_name ?? "",
    date,
    media_type: "callback",
    ...(query.message === undefined ? {} : { reply_to_message_id: query.message.message_id }),
    direction: "in",
    edit_date: 0
  }
}

/**
 * The messages an update adds to a bot's history: incoming, edited (replacing the stored text and
 * setting edit_date), channel and business messages, and button presses as `callback` messages.
 * `receivedAt` (Unix seconds) dates button presses, which carry no date of their own.
 */
export const messagesOf = (botId: number, payload: unknown, receivedAt: number): ReadonlyArray<Message> => {
  const decoded = decodeUpdate(payload)
  if (Either.isLeft(decoded)) return []
  const update = decoded.right
  const messages: Array<Message> = []
  for (const kind of messageKinds) {
    const message = update[kind]
    if (message !== undefined) messages.push(fromTelegram(botId, message, "in"))
  }
  if (update.callback_query !== undefined) messages.push(fromCallback(botId, update.callback_query, receivedAt))
  return messages
}
