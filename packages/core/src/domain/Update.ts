import type { NewDelivery } from "./Delivery.js"
import type { Message } from "./Message.js"
import type { NewRouteSend } from "./RouteSend.js"
import type { Sighting } from "./Sighting.js"

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
  /** A drop route removed the update: it is kept from the backend, and from replays. */
  readonly dropped?: boolean | undefined
  /** Messages routes pass on, and replies the reverse path carries back. */
  readonly sends?: ReadonlyArray<NewRouteSend> | undefined
  /** The update for the bot's long-poll buffer, when the bot has `long_poll_enabled`. */
  readonly buffer?: BufferEntry | undefined
  /** What the update tells about chats and people, when the bot keeps history; written after the messages. */
  readonly sighting?: Sighting | undefined
}

/** An update as a bot's long-poll buffer keeps it. */
export interface BufferEntry {
  /** The update's type (its only key besides `update_id`), "" when it has none. */
  readonly type: string
  /** The update's JSON text exactly as Telegram sent it. */
  readonly payload: string
  readonly created_at: string
}

/** A buffered update: its id and its JSON text exactly as Telegram sent it. */
export interface BufferedUpdate {
  readonly update_id: number
  readonly payload: string
}

/** Which update types a read lets through: only the listed ones, or every one but the listed ones. */
export type TypeFilter = { readonly only: ReadonlyArray<string> } | { readonly except: ReadonlyArray<string> }

/** A read of a bot's buffer: from update_id `offset` up, at most `limit`, of the types `types` lets through. */
export interface BufferQuery {
  readonly offset: number
  readonly limit: number
  readonly types: TypeFilter
}

/** A trim of a bot's buffer: keep at most `max_updates`, none buffered before `before`; `at` is now. */
export interface BufferRetention {
  readonly max_updates: number
  /** ISO 8601. */
  readonly before: string
  /** ISO 8601. */
  readonly at: string
}

/** What storage keeps about a bot's buffer besides its updates. */
export interface BufferState {
  readonly allowed_updates: ReadonlyArray<string>
  readonly trimmed: number
  /** ISO 8601 time of the last trim, "" if none. */
  readonly last_trimmed_at: string
}
