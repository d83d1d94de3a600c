import { Chunk, Clock, Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Queue, Stream } from "effect"
import type { Scope } from "effect"
import { view } from "../domain/Bot.js"
import { type StoredBridge, takes } from "../domain/Bridge.js"
import type { Delivery } from "../domain/Delivery.js"
import type { EventName, LogEntry, NewLogEntry } from "../domain/LiveEvent.js"
import type { Message } from "../domain/Message.js"
import { withoutCredentials } from "../internal/Url.js"
import { BotStore } from "../stores/BotStore.js"
import { BridgeStore } from "../stores/BridgeStore.js"
import { Broadcast } from "../stores/Broadcast.js"
import { EventStore } from "../stores/EventStore.js"
import { MessageStore } from "../stores/MessageStore.js"
import { Event, Events, type EventOf } from "./Events.js"

/** How the event log keeps entries and serves streams. */
export interface Options {
  /** How often a stream sends a heartbeat comment (one is sent on connect besides). */
  readonly heartbeat: Duration.DurationInput
  /** A stream with more events than this waiting to be sent is cut off; the client reconnects and replays. */
  readonly maxPending: number
  /** Entries younger than this are kept... */
  readonly retention: Duration.DurationInput
  /** ...and so are the newest `keep` entries, whatever their age. */
  readonly keep: number
  /** How often retention runs. */
  readonly sweepInterval: Duration.DurationInput
  /** How long `close` lets streams end by themselves before it cuts off those still open. */
  readonly closeGrace: Duration.DurationInput
}

/** DESIGN.md section 9: heartbeats every 15 s, cut off beyond 10,000 waiting events, keep 24 h and 100,000 events. */
export const defaults: Options = {
  heartbeat: Duration.seconds(15),
  maxPending: 10_000,
  retention: Duration.hours(24),
  keep: 100_000,
  sweepInterval: Duration.minutes(10),
  closeGrace: Duration.seconds(1)
}

/** What a stream sends: an event of the log, a reset (reload: events may be missing before it), or a heartbeat. */
export type Frame =
  | { readonly _tag: "Event"; readonly id: number; readonly name: EventName; readonly data: string }
  | { readonly _tag: "Reset"; readonly id: number }
  | { readonly _tag: "Heartbeat" }

const heartbeat: Frame = { _tag: "Heartbeat" }

/** Which events a stream gets, and where it starts. */
export interface StreamOptions {
  /** Only events of these bots; every bot's when omitted. */
  readonly bots?: ReadonlyArray<number> | undefined
  /** Only events of this chat (events of no chat, such as `bot` and `delivery`, are left out); all when omitted. */
  readonly chatId?: number | undefined
  /** Whether `note` events are sent (only signed-in accounts may read notes); true when omitted. */
  readonly notes?: boolean | undefined
  /** Only events this holds for (besides those of no bot); every event when omitted. */
  readonly visible?: ((entry: NewLogEntry) => boolean) | undefined
  /** Replays the log's events after this id first; live events only when omitted. */
  readonly lastEventId?: number | undefined
  /**
   * Runs when the stream is cut off while its consumer may not be taking from it: it fell more than
   * `maxPending` events behind, or the log closed and the stream did not end within `closeGrace`. The
   * stream ends too; this is for closing the connection under it.
   */
  readonly onCutOff?: Effect.Effect<void> | undefined
}

/** The event log: every live event, appended in batches, kept for replay, and fanned out to open streams. */
export interface EventLogService {
  /** A client's stream: a heartbeat, the replay (or a reset when the log no longer reaches back), then live events. */
  readonly stream: (options: StreamOptions) => Stream.Stream<Frame>
  /** Ends every stream (cutting off, after `closeGrace`, those still open) and refuses new ones; the log goes on. */
  readonly close: Effect.Effect<void>
  /** How many streams are open. */
  readonly streams: () => number
}

/** The event log of an instance. */
export class EventLog extends Context.Tag("@botrelay/core/EventLog")<EventLog, EventLogService>() {}

/**
 * The Chat resource (DESIGN.md section 9) of a bot's chat, when something keeps chats; `chat` events carry
 * it. Without this service they carry only `bot_id` and `chat_id`.
 */
export class ChatViews extends Context.Tag("@botrelay/core/ChatViews")<
  ChatViews,
  (botId: number, chatId: number) => Effect.Effect<Option.Option<unknown>>
>() {}

/** The bus events the log turns into entries. */
const followed = [
  "MessagesStored",
  "MessageEdited",
  "MessagesDeleted",
  "ChatChanged",
  "BotChanged",
  "BotStatusChanged",
  "DeliveryChanged",
  "NoteChanged"
] as const

type Followed = EventOf<typeof followed[number]>

/** The most bus events turned into one append. */
const batchSize = 1000

/** The most entries one append writes and fans out. */
const sliceSize = 500

/** Entries one replay read takes. */
const pageSize = 500

/** Entries one retention statement deletes. */
const chunk = 1000

/** A delivery as events show it: without its update, its URL without credentials. */
const deliveryView = (delivery: Delivery) => {
  const { payload: _, ...rest } = delivery
  return { ...rest, url: withoutCredentials(rest.url) }
}

interface Client {
  readonly bots: ReadonlySet<number> | undefined
  readonly chatId: number | undefined
  readonly notes: boolean
  readonly visible: ((entry: NewLogEntry) => boolean) | undefined
  readonly queue: Queue.Queue<Frame>
  readonly onCutOff: Effect.Effect<void> | undefined
  /** Done once the stream's scope closed. */
  readonly ended: Deferred.Deferred<void>
}

const accepts = (client: Client, entry: LogEntry) =>
  entry.bot_id === 0 ||
  ((client.notes || entry.type !== "note") &&
    (client.bots === undefined || client.bots.has(entry.bot_id)) &&
    (client.chatId === undefined || entry.chat_id === client.chatId) &&
    (client.visible === undefined || client.visible(entry)))

const frameOf = (entry: LogEntry): Frame | undefined =>
  entry.type === "stop" ? undefined : entry.type === "reset"
    ? { _tag: "Reset", id: entry.id }
    : { _tag: "Event", id: entry.id, name: entry.type, data: entry.data }

/**
 * One retention round: deletes, a chunk at a time, the entries that are both older than `retention` and
 * not among the newest `keep`.
 */
export const sweep = (options: Pick<Options, "retention" | "keep">) =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const before = new Date((yield* Clock.currentTimeMillis) - Duration.toMillis(options.retention)).toISOString()
    let deleted = 0
    while (true) {
      const round = yield* store.pruneEvents(before, options.keep, chunk)
      deleted += round
      if (round < chunk) break
      yield* Effect.yieldNow()
    }
    if (deleted > 0) yield* Effect.logDebug("pruned the event log").pipe(Effect.annotateLogs({ deleted }))
    return deleted
  })

/**
 * Builds the log in the scope: follows the bus, turns each batch of events into entries (a `chat` entry
 * per changed chat and a `bot` entry per changed bot, once per batch), appends them in one write and
 * then hands each, with its id, to the open streams it concerns; a stream with more than `maxPending`
 * waiting is cut off, never waited for. Entries are appended after the changes they tell of were
 * committed; a crash in between loses them, so a log that was not closed cleanly (no `stop` marker last)
 * starts with a `reset` marker, and so does the next append after a failed one: streams replaying across
 * one tell their clients to reload. Closing the scope ends every stream and appends what is left, then
 * the `stop` marker. Where instances share the log (`Broadcast.shared`), streams get every instance's
 * entries in id order, read back from the store after each append here or there (`LogAppended`), and
 * only a failed append here starts with a reset. With a `BridgeStore`, the store queues the bridge
 * deliveries of each append; the log then wakes the bridge line of each bot whose entries a bridge takes.
 */
export const make = (
  options: Options = defaults
): Effect.Effect<EventLogService, never, Scope.Scope | EventStore | BotStore | MessageStore | Events | Broadcast> =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const botStore = yield* BotStore
    const messageStore = yield* MessageStore
    const events = yield* Events
    const chatViews = yield* Effect.serviceOption(ChatViews)
    const bridgeStore = yield* Effect.serviceOption(BridgeStore)
    /** The enabled bridges, as last read (after every `BridgesChanged` and `Resynced`). */
    let bridges: ReadonlyArray<StoredBridge> = []
    const readBridges = Option.match(bridgeStore, {
      onNone: () => Effect.void,
      onSome: (found) =>
        found.listBridges.pipe(
          Effect.tap((all) => Effect.sync(() => void (bridges = all.filter((bridge) => bridge.enabled)))),
          Effect.catchAllCause((cause) => Effect.logWarning("could not read the bridges", cause))
        )
    })
    /** Wakes the bridge line of each bot whose entries a bridge takes; the store queued their deliveries. */
    const wakeBridges = (entries: ReadonlyArray<NewLogEntry>) =>
      Effect.suspend(() => {
        if (bridges.length === 0) return Effect.void
        const bots = new Set(
          entries.filter((e) => bridges.some((bridge) => takes(bridge, e.type, e.bot_id))).map((e) => e.bot_id)
        )
        return Effect.forEach(bots, (bot_id) => events.publish(Event.OutboxQueued({ bot_id, kind: "bridge" })), {
          discard: true
        })
      })
    const shared = (yield* Broadcast).shared
    const clients = new Set<Client>()
    let closed = false
    /** An append failed: entries may be missing, so the next append starts with a reset marker. */
    let lost = false

    const marker = (type: "reset" | "stop", created_at: string): NewLogEntry => ({
      bot_id: 0,
      chat_id: 0,
      type,
      data: JSON.stringify({ type }),
      created_at
    })

    const newest = yield* store.newestEvent.pipe(
      Effect.catchAll((e) => Effect.as(Effect.logWarning("could not read the event log", e.cause), Option.none()))
    )
    if (!shared && Option.isSome(newest) && newest.value.type !== "stop") lost = true

    const entry = (type: EventName, botId: number, chatId: number, data: object, at: string): NewLogEntry => ({
      bot_id: botId,
      chat_id: chatId,
      type,
      data: JSON.stringify({ type, bot_id: botId, chat_id: chatId, ...data }),
      created_at: at
    })

    const messageEntry = (type: EventName, message: Message, at: string) =>
      entry(type, message.bot_id, message.chat_id, { message }, at)

    const chatEntry = (botId: number, chatId: number, at: string) =>
      Option.match(chatViews, {
        onNone: () => Effect.succeed(entry("chat", botId, chatId, {}, at)),
        onSome: (lookup) =>
          lookup(botId, chatId).pipe(
            Effect.map(Option.match({
              onNone: () => entry("chat", botId, chatId, {}, at),
              onSome: (chat) => entry("chat", botId, chatId, { chat }, at)
            }))
          )
      })

    const botEntry = (botId: number, at: string) =>
      botStore.findBot(botId).pipe(
        Effect.map(Option.match({
          onNone: () => entry("bot", botId, 0, { bot: null }, at),
          onSome: (bot) => {
            const shown = view({ ...bot, running: events.isRunning(bot.id) })
            return entry("bot", botId, 0, { bot: { ...shown, backend_url: withoutCredentials(shown.backend_url) } }, at)
          }
        }))
      )

    const deletedEntries = (event: EventOf<"MessagesDeleted">, at: string) =>
      Effect.forEach(event.message_ids, (id) =>
        messageStore.findMessage(event.bot_id, event.chat_id, id).pipe(
          Effect.map(Option.map((message) => messageEntry("message_deleted", message, at)))
        )).pipe(Effect.map((found) => found.flatMap(Option.toArray)))

    /** The entries of a batch of bus events, in order; a chat's or bot's entry once, where its last event was. */
    const entriesOf = (batch: ReadonlyArray<Followed>, at: string) =>
      Effect.gen(function*() {
        const last = new Map<string, number>()
        batch.forEach((event, i) => {
          if (event._tag === "ChatChanged") last.set(`c${event.bot_id}:${event.chat_id}`, i)
          else if (event._tag === "BotChanged") last.set(`b${event.id}`, i)
          else if (event._tag === "BotStatusChanged") last.set(`b${event.bot_id}`, i)
        })
        const entries: Array<NewLogEntry> = []
        for (let i = 0; i < batch.length; i++) {
          const event = batch[i]!
          const made: Effect.Effect<ReadonlyArray<NewLogEntry>, unknown> = (() => {
            switch (event._tag) {
              case "MessagesStored":
                return Effect.succeed(event.messages.map((m) => messageEntry("message", m, at)))
              case "MessageEdited":
                return Effect.succeed([messageEntry("message_edited", event.message, at)])
              case "MessagesDeleted":
                return deletedEntries(event, at)
              case "ChatChanged":
                return last.get(`c${event.bot_id}:${event.chat_id}`) === i
                  ? Effect.map(chatEntry(event.bot_id, event.chat_id, at), (e) => [e])
                  : Effect.succeed([])
              case "BotChanged":
              case "BotStatusChanged": {
                const botId = event._tag === "BotChanged" ? event.id : event.bot_id
                return last.get(`b${botId}`) === i ? Effect.map(botEntry(botId, at), (e) => [e]) : Effect.succeed([])
              }
              case "DeliveryChanged":
                return Effect.succeed([
                  entry("delivery", event.delivery.bot_id, 0, { delivery: deliveryView(event.delivery) }, at)
                ])
              case "NoteChanged":
                return Effect.succeed([
                  entry(
                    "note",
                    event.note.bot_id,
                    event.note.chat_id,
                    event.deleted ? { note_id: event.note.id, deleted: true } : { note_id: event.note.id, note: event.note },
                    at
                  )
                ])
            }
          })()
          entries.push(...yield* made.pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(Effect.logWarning("could not make a live event", cause).pipe(
                Effect.annotateLogs({ event: event._tag })
              ), [])
            )
          ))
        }
        return entries
      })

    const cutOff = (client: Client, reason: string) =>
      Effect.gen(function*() {
        if (!clients.delete(client)) return
        yield* Queue.shutdown(client.queue)
        yield* Effect.logWarning(`an event stream was cut off: ${reason}`)
        if (client.onCutOff !== undefined) yield* Effect.forkDaemon(client.onCutOff)
      })

    /** Hands appended entries to the streams they concern; a stream whose queue is full is cut off. */
    const fanOut = (appended: ReadonlyArray<LogEntry>) =>
      Effect.suspend(() => {
        const behind: Array<Client> = []
        for (const logged of appended) {
          const frame = frameOf(logged)
          if (frame === undefined) continue
          for (const client of clients) {
            if (accepts(client, logged) && !Queue.unsafeOffer(client.queue, frame)) behind.push(client)
          }
        }
        return Effect.forEach(
          new Set(behind),
          (client) => cutOff(client, `more than ${options.maxPending} events were waiting to be sent`),
          { discard: true }
        )
      })

    /** The newest entry fanned out, where instances share the log. */
    let seen = shared ? Option.match(newest, { onNone: () => 0, onSome: (e) => e.id }) : 0
    /** Entries were appended while no stream was open: nothing read them; the first stream starts after them. */
    let unread = false
    const tailing = yield* Effect.makeSemaphore(1)

    /** Where instances share the log, a stream about to open: skips what was appended while none was. */
    const catchUp = tailing.withPermits(1)(Effect.gen(function*() {
      if (!unread) return
      seen = Option.match(yield* store.newestEvent, { onNone: () => seen, onSome: (e) => Math.max(seen, e.id) })
      unread = false
    }))

    /**
     * Fans out, in id order, the entries appended since the last time, whichever instance appended them (ids
     * are given in commit order, so none is passed over).
     */
    const tail = tailing.withPermits(1)(Effect.gen(function*() {
      if (clients.size === 0) return void (unread = true)
      while (true) {
        const page = yield* store.readEvents({ after: seen, bot_ids: undefined, chat_id: undefined, limit: pageSize })
        if (page.length === 0) return
        seen = page[page.length - 1]!.id
        yield* fanOut(page)
        if (page.length < pageSize) return
      }
    }))

    /**
     * Appends the entries (after a reset marker when an earlier append failed) and fans them out; where
     * instances share the log, tells the others and fans out through `tail`.
     */
    const append = (entries: ReadonlyArray<NewLogEntry>, at: string) =>
      Effect.gen(function*() {
        const all = lost ? [marker("reset", at), ...entries] : entries
        if (all.length === 0) return
        const ids = yield* store.appendEvents(all).pipe(
          Effect.tapError(() => Effect.sync(() => void (lost = true)))
        )
        lost = false
        yield* wakeBridges(entries)
        if (!shared) return yield* fanOut(all.map((e, i) => ({ ...e, id: ids[i]! })))
        yield* events.publish(Event.LogAppended())
        yield* tail
      })

    /** Appends a batch's entries a slice at a time, letting streams take each slice before the next comes. */
    const write = (batch: ReadonlyArray<Followed>) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        // What another instance published, it logged itself.
        const entries = yield* entriesOf(batch.filter((event) => !events.isReceived(event)), at)
        if (entries.length === 0) return yield* append([], at)
        for (let from = 0; from < entries.length; from += sliceSize) {
          if (from > 0) yield* Effect.yieldNow()
          yield* append(entries.slice(from, from + sliceSize), at)
        }
      }).pipe(Effect.catchAllCause((cause) => Effect.logError("could not append to the event log", cause)))

    const subscription = yield* events.subscribe(...followed)
    if (Option.isSome(bridgeStore)) {
      const changed = yield* events.subscribe("BridgesChanged", "Resynced")
      yield* readBridges
      yield* Queue.take(changed).pipe(
        Effect.zipRight(Queue.takeAll(changed)),
        Effect.zipRight(readBridges),
        Effect.forever,
        Effect.forkScoped
      )
    }
    if (lost) yield* write([])
    if (shared) {
      const appended = yield* events.subscribe("LogAppended", "Resynced")
      yield* Queue.take(appended).pipe(
        Effect.zipRight(Queue.takeAll(appended)),
        Effect.zipRight(tail),
        Effect.catchAllCause((cause) => Effect.logWarning("could not read the event log", cause)),
        Effect.forever,
        Effect.forkScoped
      )
    }

    const writer = yield* Effect.uninterruptibleMask((restore) =>
      restore(Queue.take(subscription)).pipe(
        Effect.flatMap((first) =>
          Effect.flatMap(Queue.takeUpTo(subscription, batchSize - 1), (rest) => write([first, ...rest]))
        )
      )
    ).pipe(Effect.forever, Effect.forkDaemon)

    const close = Effect.gen(function*() {
      if (closed) return
      closed = true
      const open = [...clients]
      clients.clear()
      yield* Effect.forEach(open, (client) => Queue.shutdown(client.queue), { discard: true })
      yield* Effect.forEach(open, (client) => Deferred.await(client.ended), { discard: true }).pipe(
        Effect.interruptible,
        Effect.timeout(options.closeGrace),
        Effect.ignore
      )
      for (const client of open) {
        if (client.onCutOff !== undefined && !(yield* Deferred.isDone(client.ended))) yield* client.onCutOff
      }
    })

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* close
        yield* Fiber.interrupt(writer)
        const rest = yield* Queue.takeAll(subscription)
        const at = new Date(yield* Clock.currentTimeMillis).toISOString()
        const entries = yield* entriesOf([...rest], at)
        yield* append([...entries, marker("stop", at)], at).pipe(
          Effect.catchAllCause((cause) => Effect.logError("could not append to the event log", cause))
        )
      })
    )

    yield* sweep(options).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("event log retention failed", cause)),
      Effect.zipRight(Effect.sleep(options.sweepInterval)),
      Effect.forever,
      Effect.forkScoped
    )

    const replay = (client: Client, after: number, skip: { upTo: number }): Stream.Stream<Frame> =>
      Stream.paginateChunkEffect(after, (from: number) =>
        store.readEvents({
          after: from,
          bot_ids: client.bots === undefined ? undefined : [...client.bots],
          chat_id: client.chatId,
          limit: pageSize
        }).pipe(
          Effect.map((page) => {
            if (page.length > 0) skip.upTo = page[page.length - 1]!.id
            const frames = page.flatMap((logged) => {
              const frame = accepts(client, logged) ? frameOf(logged) : undefined
              return frame === undefined ? [] : [frame]
            })
            return [
              Chunk.unsafeFromArray(frames),
              page.length < pageSize ? Option.none<number>() : Option.some(skip.upTo)
            ] as const
          })
        )).pipe(
          Stream.catchAllCause((cause) =>
            Stream.fromEffect(
              Effect.as(Effect.logWarning("could not replay the event log", cause), { _tag: "Reset", id: skip.upTo } as Frame)
            )
          )
        )

    /** Where a replay from `lastEventId` starts: its frames, or a reset when the log no longer reaches back to it. */
    const start = (client: Client, lastEventId: number, skip: { upTo: number }) =>
      Effect.gen(function*() {
        const oldest = yield* store.oldestEventId
        const latest = yield* store.newestEvent
        const newestId = Option.match(latest, { onNone: () => 0, onSome: (e) => e.id })
        const reaches = Option.match(oldest, {
          onNone: () => lastEventId === 0,
          onSome: (id) => lastEventId >= id - 1 && lastEventId <= newestId
        })
        if (reaches) return replay(client, lastEventId, skip)
        skip.upTo = newestId
        return Stream.succeed<Frame>({ _tag: "Reset", id: newestId })
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.as(Effect.logWarning("could not read the event log", cause), Stream.succeed<Frame>({ _tag: "Reset", id: 0 }))
        )
      )

    const stream = (streamOptions: StreamOptions): Stream.Stream<Frame> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        if (closed) return Stream.empty
        const client: Client = {
          bots: streamOptions.bots === undefined ? undefined : new Set(streamOptions.bots),
          chatId: streamOptions.chatId,
          notes: streamOptions.notes ?? true,
          visible: streamOptions.visible,
          queue: yield* Queue.bounded<Frame>(Math.max(1, options.maxPending)),
          onCutOff: streamOptions.onCutOff,
          ended: yield* Deferred.make<void>()
        }
        if (shared) yield* catchUp.pipe(Effect.catchAll((e) => Effect.logWarning("could not read the event log", e.cause)))
        clients.add(client)
        yield* Effect.addFinalizer(() =>
          Effect.zipRight(
            Effect.sync(() => clients.delete(client)),
            Effect.zipRight(Queue.shutdown(client.queue), Deferred.done(client.ended, Exit.void))
          )
        )
        const skip = { upTo: 0 }
        const replayed = streamOptions.lastEventId === undefined
          ? Stream.empty
          : yield* start(client, streamOptions.lastEventId, skip)
        const live = Stream.fromQueue(client.queue, { maxChunkSize: 64 }).pipe(
          Stream.filter((frame) => frame._tag === "Heartbeat" || frame.id > skip.upTo)
        )
        yield* Effect.sleep(options.heartbeat).pipe(
          Effect.zipRight(Effect.sync(() => Queue.unsafeOffer(client.queue, heartbeat))),
          Effect.forever,
          Effect.forkScoped
        )
        return Stream.concat(Stream.make(heartbeat), Stream.concat(replayed, live))
      }))

    return EventLog.of({ stream, close, streams: () => clients.size })
  })

/** The event log as a layer: it follows the bus while the layer is alive. */
export const layer = (
  options: Options = defaults
): Layer.Layer<EventLog, never, EventStore | BotStore | MessageStore | Events | Broadcast> =>
  Layer.scoped(EventLog, make(options))
