import type { Message } from "./Message.js"
import type { NewDelivery } from "./Delivery.js"

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
}
