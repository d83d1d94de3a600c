import { Schema } from "effect"
import { BotView } from "./Bot.js"
import { Chat } from "./Chat.js"
import { Delivery } from "./Delivery.js"
import { Message } from "./Message.js"
import { Note } from "./Note.js"

/** The names of live events (`event:` of `GET /api/events`). */
export const EventName = Schema.Literal("message", "message_edited", "message_deleted", "chat", "bot", "delivery", "note")
export type EventName = typeof EventName.Type

/**
 * The kinds of entries the event log keeps: the live events, and its own markers (bot 0), which clients
 * never see as such: `reset` (events may be missing before it: clients reload) and `stop` (the log was
 * closed with nothing left unwritten).
 */
export type EntryType = EventName | "reset" | "stop"

/** An entry to append to the event log: `data` is the JSON text of the event's `data`. */
export interface NewLogEntry {
  readonly bot_id: number
  readonly chat_id: number
  readonly type: EntryType
  readonly data: string
  readonly created_at: string
}

/** An entry of the event log; ids increase with every append and are never reused. */
export interface LogEntry extends NewLogEntry {
  readonly id: number
}

/** Which entries a replay reads: ids above `after`, of these bots (all when omitted) and this chat (any when omitted). */
export interface LogQuery {
  readonly after: number
  readonly bot_ids?: ReadonlyArray<number> | undefined
  readonly chat_id?: number | undefined
  readonly limit: number
}

/** A delivery as live events show it: without the update it carries (`GET /api/bots/deliveries` has it). */
export const DeliveryEvent = Delivery.pipe(Schema.omit("payload")).annotations({ identifier: "DeliveryEvent" })
export type DeliveryEvent = typeof DeliveryEvent.Type

/**
 * The `data` of a live event: its name, its bot and chat (0 for events of no chat), and what it is about:
 * a `message` (new, edited, or deleted: `deleted: true`), a `chat` (the Chat resource, when known), a `bot`
 * (null once deleted), a `delivery`, or a note (`note_id`; the `note` when added or edited, `deleted: true`
 * when deleted; sent to signed-in accounts only).
 */
export const LiveEvent = Schema.Struct({
  type: EventName,
  bot_id: Schema.Int,
  chat_id: Schema.Int,
  message: Schema.optionalWith(Message, { exact: true }),
  chat: Schema.optionalWith(Chat, { exact: true }),
  bot: Schema.optionalWith(Schema.NullOr(BotView), { exact: true }),
  delivery: Schema.optionalWith(DeliveryEvent, { exact: true }),
  note_id: Schema.optionalWith(Schema.Int, { exact: true }),
  note: Schema.optionalWith(Note, { exact: true }),
  deleted: Schema.optionalWith(Schema.Literal(true), { exact: true })
}).annotations({ identifier: "LiveEvent" })
export type LiveEvent = typeof LiveEvent.Type
