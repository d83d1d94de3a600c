import type { Message } from "./Message.js"
import type { NewDelivery } from "./Delivery.js"
import type { NewRouteSend } from "./RouteSend.js"

/** An update as Telegram sent it, kept durably until processed. `payload` is the original JSON text. */
export interface InboxUpdate {
  readonly bot_id: number
  readonly update_id: number
  readonly payload: string
  readonly received_at: string
}

/** Everything processing one update changes, written in one transaction with marking it processed. */
export interface UpdateCompletion {
  readonly bot_id: number
  readonly update_id: number
  /** Captured messages, inserted or replacing the stored one with the same (bot_id, chat_id, id). */
  readonly messages: ReadonlyArray<Message>
  readonly deliveries: ReadonlyArray<NewDelivery>
  /** Messages routes pass on, and replies the reverse path carries back. */
  readonly sends?: ReadonlyArray<NewRouteSend> | undefined
  /** The update for the bot's long-poll buffer, when the bot has `long_poll_enabled`. */
  readonly buffer?: BufferEntry | undefined
}

/** An update as a bot's long-poll buffer keeps it. */
export interface BufferEntry {
  /** The update's type (its only key besides `update_id`), "" when it has none. */
  readonly type: string
  /** The update's JSON text exactly as Telegram sent it. */
  readonly payload: string
  readonly created_at: string
}
