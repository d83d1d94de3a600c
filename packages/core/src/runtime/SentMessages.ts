import { BotApi } from "@botrelay/telegram"
import { Clock, Context, Effect, Either, Layer, Option, Schema } from "effect"
import { type StoredBot, userIdOf } from "../domain/Bot.js"
import * as CallParams from "../domain/CallParams.js"
import type { StorageError } from "../domain/Errors.js"
import { fromTelegram, type Message, Recorded } from "../domain/Message.js"
import { type ChatSeen, empty, type Sighting } from "../domain/Sighting.js"
import { ChatStore, type ChatStoreService } from "../stores/ChatStore.js"
import { MessageStore, type MessageStoreService } from "../stores/MessageStore.js"
import { chatSeen } from "./Capture.js"
import { Event, Events, type EventsService, publishMessages } from "./Events.js"

/** Methods whose `result` is the Message sent or edited (lower-case). */
const messageMethods: ReadonlySet<string> = new Set([
  "sendmessage",
  "sendphoto",
  "sendaudio",
  "senddocument",
  "sendvideo",
  "sendanimation",
  "sendvoice",
  "sendvideonote",
  "sendpaidmedia",
  "sendsticker",
  "sendlocation",
  "sendvenue",
  "sendcontact",
  "sendpoll",
  "sendchecklist",
  "senddice",
  "sendinvoice",
  "sendgame",
  "forwardmessage",
  "editmessagetext",
  "editmessagecaption",
  "editmessagemedia",
  "editmessagereplymarkup",
  "editmessagelivelocation",
  "stopmessagelivelocation",
  "editmessagechecklist"
])

/** Methods whose capture reads the call's parameters, not only its answer. */
const paramMethods: ReadonlySet<string> = new Set(["copymessage", "deletemessage", "deletemessages"])

/** Whether a successful call of `method` (lower-case) changes the bot's history. */
export const captures = (method: string): boolean =>
  messageMethods.has(method) || paramMethods.has(method) || method === "sendmediagroup"

/** Whether capturing a call of `method` (lower-case) needs its parameters. */
export const needsParams = (method: string): boolean => paramMethods.has(method)

const decodeMessage = Schema.decodeUnknownEither(Recorded)
const decodeMessageId = Schema.decodeUnknownEither(BotApi.MessageId)

/** The `result` of a Bot API answer's text when the answer is `ok`. */
export const resultOf = (answer: string): Option.Option<unknown> => {
  try {
    const parsed: unknown = JSON.parse(answer)
    return typeof parsed === "object" && parsed !== null && (parsed as { ok?: unknown }).ok === true
      ? Option.some((parsed as { result?: unknown }).result)
      : Option.none()
  } catch {
    return Option.none()
  }
}

/**
 * The services capture writes to and tells, taken once by the service: providing them on every call would
 * copy the caller's whole context each time.
 */
interface Stores {
  readonly messageStore: MessageStoreService
  readonly chatStore: ChatStoreService
  readonly events: EventsService
}

const storesOf: Effect.Effect<Stores, never, MessageStore | ChatStore | Events> = Effect.all({
  messageStore: MessageStore,
  chatStore: ChatStore,
  events: Events
})

/** What the bot copied: the source message's text and media when the history holds it, `caption` replacing the text. */
const copied = (stores: Stores, bot: StoredBot, params: CallParams.CallParams, messageId: number) =>
  Effect.gen(function*() {
    const { messageStore } = stores
    const chatId = CallParams.int(params.chat_id)
    if (chatId === undefined) return Option.none<Message>()
    const fromChatId = CallParams.int(params.from_chat_id)
    const sourceId = CallParams.int(params.message_id)
    const source = fromChatId === undefined || sourceId === undefined
      ? Option.none<Message>()
      : yield* messageStore.findMessage(bot.id, fromChatId, sourceId)
    const caption = CallParams.string(params.caption)
    const removeCaption = CallParams.bool(params.remove_caption) === true
    const sourceText = Option.match(source, { onNone: () => "", onSome: (m) => m.text })
    const hasMedia = Option.exists(source, (m) => m.media_type !== undefined)
    const text = caption ?? (removeCaption && hasMedia ? "" : sourceText)
    const replyParameters = CallParams.object(params.reply_parameters)
    const replyChat = CallParams.int(replyParameters?.chat_id)
    const replyTo = replyChat === undefined || replyChat === chatId
      ? CallParams.int(replyParameters?.message_id ?? params.reply_to_message_id)
      : undefined
    const media = Option.match(source, {
      onNone: () => ({}),
      onSome: (m) =>
        m.media_type === undefined || m.file_id === undefined ? {} : { media_type: m.media_type, file_id: m.file_id }
    })
    return Option.some(botMessage(bot, chatId, text, Math.floor((yield* Clock.currentTimeMillis) / 1000), {
      id: messageId,
      ...media,
      ...(replyTo === undefined ? {} : { reply_to_message_id: replyTo })
    }))
  })

/** A message the bot sends, as the history shows it; `extra` adds or overrides fields (id 0 unless given). */
export const botMessage = (
  bot: StoredBot,
  chatId: number,
  text: string,
  date: number,
  extra: Partial<Message> = {}
): Message => {
  const senderId = userIdOf(bot)
  return {
    id: 0,
    chat_id: chatId,
    bot_id: bot.id,
    user_id: Number.isSafeInteger(senderId) ? senderId : 0,
    username: bot.username,
    first_name: "",
    last_name: "",
    text,
    date,
    direction: "out",
    edit_date: 0,
    ...extra
  }
}

/** A successful Bot API call to record: the bot, its method (lower-case), its parameters and its answer's `result`. */
export interface Call {
  readonly bot: StoredBot
  readonly method: string
  readonly params: CallParams.CallParams
  readonly result: unknown
  /** The delivery of a message sent through the API, told with it on the bus (the store keeps its own). */
  readonly delivery?: Pick<Message, "local_id" | "delivery" | "delivery_error" | "delivery_at">
}

/**
 * Where an outgoing message comes from: `POST /api/messages/send`, a call through /tgapi, a backend's
 * webhook reply, or a route send.
 */
export type Origin = "api" | "tgapi" | "reply" | "route"

/**
 * The one rule of outgoing history: a bot's sends are kept when it has `manage_enabled`; what
 * `POST /api/messages/send` sent is kept always.
 */
export const keeps = (bot: StoredBot, origin: Origin): boolean => origin === "api" || bot.manage_enabled

/** Whether a successful call of `method` (lower-case) edits a message rather than sending one. */
const edits = (method: string): boolean => method.startsWith("edit") || method === "stopmessagelivelocation"

/** What a call sent or edited: our records and the chats as Telegram's answer shows them. */
interface Sent {
  readonly messages: ReadonlyArray<Message>
  readonly chats: ReadonlyArray<ChatSeen>
}

const sentOf = (bot: StoredBot, results: ReadonlyArray<unknown>, delivery: Call["delivery"] = {}): Sent => {
  const messages: Array<Message> = []
  const chats: Array<ChatSeen> = []
  for (const result of results) {
    const message = decodeMessage(result)
    if (Either.isLeft(message)) continue
    messages.push({ ...fromTelegram(bot.id, message.right, "out"), ...delivery })
    chats.push(chatSeen(message.right.chat, message.right.edit_date ?? message.right.date))
  }
  return { messages, chats }
}

/** What a call sent or edited, as its answer has it; undefined for calls whose record needs more. */
const sentOrEdited = (call: Call, result: unknown): Sent | undefined => {
  if (messageMethods.has(call.method)) return sentOf(call.bot, [result], call.delivery)
  if (call.method !== "sendmediagroup") return undefined
  return sentOf(call.bot, Array.isArray(result) ? result : [])
}

/** Records a copy or a delete, and tells the bus. */
const recordOther = (stores: Stores, call: Call, result: unknown) =>
  Effect.gen(function*() {
    const { events, messageStore } = stores
    const { bot, method, params } = call
    switch (method) {
      case "copymessage": {
        const id = decodeMessageId(result)
        if (Either.isLeft(id)) return
        const message = yield* copied(stores, bot, params, id.right.message_id)
        if (Option.isNone(message)) return
        yield* messageStore.saveMessage(message.value)
        return yield* publishMessages(events, bot.id, [message.value])
      }
      case "deletemessage":
      case "deletemessages": {
        const chatId = CallParams.int(params.chat_id)
        const ids = method === "deletemessage"
          ? [CallParams.int(params.message_id)]
          : (CallParams.array(params.message_ids) ?? []).map(CallParams.int)
        const known = ids.filter((id): id is number => id !== undefined)
        if (chatId === undefined || known.length === 0) return
        yield* messageStore.markMessagesDeleted(bot.id, chatId, known)
        yield* events.publish(Event.MessagesDeleted({ bot_id: bot.id, chat_id: chatId, message_ids: known }))
        return yield* events.publish(Event.ChatChanged({ bot_id: bot.id, chat_id: chatId }))
      }
    }
  })

/**
 * Every outgoing message goes through here. Records in the bots' history what successful Bot API
 * calls did, for the bots `keeps` says keep it, from their results (and, for copyMessage and deletes,
 * their parameters): sent, forwarded and edited messages and albums are stored as "out" (an edit
 * replaces the stored text and sets edit_date), all in one write; a copy is stored with the text and
 * media of its source when the history holds it, and deleted messages are marked deleted. The chats the
 * answers show are recorded (kinds and names), and a reply through the API (`origin` "api") moves its
 * chat's read mark to now. The writes run one after another (running them side by side on fibers of their
 * own cost more than a second commit), the chats before the messages, so that a chat is up to date when its
 * messages are told; one that fails does not keep the others from being made, and the effect then fails with
 * the first failure. Each write that succeeds is told on the bus:
 * `MessagesStored` for what was sent, `MessageEdited` for edits, `MessagesDeleted` for deletes, each
 * followed by `ChatChanged`.
 */
export const capture = (
  calls: ReadonlyArray<Call>,
  origin: Origin
): Effect.Effect<void, StorageError, MessageStore | ChatStore | Events> =>
  Effect.flatMap(storesOf, (stores) => captureOn(stores, calls, origin))

const captureOn = (stores: Stores, calls: ReadonlyArray<Call>, origin: Origin): Effect.Effect<void, StorageError> =>
  Effect.gen(function*() {
    const { chatStore, events, messageStore } = stores
    const messages: Array<Message> = []
    const edited = new Set<Message>()
    const sightings = new Map<number, { chats: Array<ChatSeen>; reads: Array<{ chat_id: number; at: number }> }>()
    const writes: Array<Effect.Effect<void, StorageError>> = []
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    for (const call of calls) {
      if (!keeps(call.bot, origin)) continue
      const sent = sentOrEdited(call, call.result)
      if (sent === undefined) {
        writes.push(recordOther(stores, call, call.result))
        continue
      }
      messages.push(...sent.messages)
      if (edits(call.method)) for (const message of sent.messages) edited.add(message)
      if (sent.chats.length === 0) continue
      let sighting = sightings.get(call.bot.id)
      if (sighting === undefined) {
        sighting = { chats: [], reads: [] }
        sightings.set(call.bot.id, sighting)
      }
      sighting.chats.push(...sent.chats)
      if (origin === "api") sighting.reads.push(...sent.chats.map((chat) => ({ chat_id: chat.chat_id, at: now })))
    }
    if (sightings.size > 0) {
      writes.push(chatStore.recordSightings(
        [...sightings].map(([botId, { chats, reads }]): Sighting => ({ ...empty(botId), chats, reads }))
      ))
    }
    if (messages.length > 0) {
      writes.push(Effect.zipRight(messageStore.saveMessages(messages), publishSaved(events, messages, edited)))
    }
    const outcomes = yield* Effect.all(writes, { mode: "either" })
    const failure = outcomes.find(Either.isLeft)
    if (failure !== undefined) return yield* Effect.fail(failure.left)
  })

/** Tells the bus of saved messages, bot by bot: those in `edited` as edits, the others as new. */
const publishSaved = (events: EventsService, messages: ReadonlyArray<Message>, edited: ReadonlySet<Message>) =>
  Effect.forEach(
    new Set(messages.map((m) => m.bot_id)),
    (botId) => {
      const own = messages.filter((m) => m.bot_id === botId)
      return publishMessages(events, botId, own.filter((m) => !edited.has(m)), own.filter((m) => edited.has(m)))
    },
    { discard: true }
  )

/** `capture` of messages a bot sent, as Telegram returned them. */
export const captureSent = (
  bot: StoredBot,
  messages: ReadonlyArray<BotApi.Message>,
  origin: Origin
): Effect.Effect<void, StorageError, MessageStore | ChatStore | Events> =>
  capture(sentCalls(bot, messages), origin)

const sentCalls = (bot: StoredBot, messages: ReadonlyArray<BotApi.Message>): ReadonlyArray<Call> =>
  messages.map((result) => ({ bot, method: "sendmessage", params: {}, result }))

/**
 * Marks the bot's chat unreachable (`unreachable` set: a send was refused as the person blocked the bot) or
 * reachable again, telling the bus `ChatChanged` when that changed it.
 */
export const setReachable = (
  botId: number,
  chatId: number,
  unreachable: { readonly since: number; readonly reason: string } | undefined
): Effect.Effect<void, StorageError, ChatStore | Events> =>
  Effect.flatMap(
    Effect.all({ chatStore: ChatStore, events: Events }),
    (stores) => setReachableOn(stores, botId, chatId, unreachable)
  )

const setReachableOn = (
  { chatStore, events }: Pick<Stores, "chatStore" | "events">,
  botId: number,
  chatId: number,
  unreachable: { readonly since: number; readonly reason: string } | undefined
): Effect.Effect<void, StorageError> =>
  Effect.flatMap(
    chatStore.setReachable(botId, chatId, unreachable),
    (changed) => changed ? events.publish(Event.ChatChanged({ bot_id: botId, chat_id: chatId })) : Effect.void
  )

/** Recording in the bots' history what successful Bot API calls did (`capture`), for callers outside core. */
export interface SentMessagesService {
  /** `capture` on the instance's stores, telling its bus. */
  readonly capture: (calls: ReadonlyArray<Call>, origin: Origin) => Effect.Effect<void, StorageError>
  /** `captureSent` on the instance's stores, telling its bus. */
  readonly captureSent: (
    bot: StoredBot,
    messages: ReadonlyArray<BotApi.Message>,
    origin: Origin
  ) => Effect.Effect<void, StorageError>
  /** `setReachable` on the instance's store, telling its bus. */
  readonly setReachable: (
    botId: number,
    chatId: number,
    unreachable: { readonly since: number; readonly reason: string } | undefined
  ) => Effect.Effect<void, StorageError>
  /**
   * Tells the bus of an outgoing message: as `new` (`MessagesStored`) or as `edited` (`MessageEdited`, for one
   * told before); `ChatChanged` follows.
   */
  readonly tell: (message: Message, as: "new" | "edited") => Effect.Effect<void>
}

/** Recording what successful Bot API calls did. */
export class SentMessages extends Context.Tag("@botrelay/core/SentMessages")<SentMessages, SentMessagesService>() {}

/** Builds the service on the `MessageStore` and `ChatStore` the host provides, telling the `Events` bus. */
export const make: Effect.Effect<SentMessagesService, never, MessageStore | ChatStore | Events> = Effect.map(
  storesOf,
  (stores) =>
    SentMessages.of({
      capture: (calls, origin) => captureOn(stores, calls, origin),
      captureSent: (bot, messages, origin) => captureOn(stores, sentCalls(bot, messages), origin),
      setReachable: (botId, chatId, unreachable) => setReachableOn(stores, botId, chatId, unreachable),
      tell: (message, as) =>
        publishMessages(stores.events, message.bot_id, as === "new" ? [message] : [], as === "edited" ? [message] : [])
    })
)

/** The service on the `MessageStore` and `ChatStore` the host provides, telling the `Events` bus. */
export const layer: Layer.Layer<SentMessages, never, MessageStore | ChatStore | Events> = Layer.effect(SentMessages, make)
