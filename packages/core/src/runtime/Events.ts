import type { Scope } from "effect"
import { Context, Data, Effect, Layer, Queue } from "effect"
import type { Delivery } from "../domain/Delivery.js"
import type { Message } from "../domain/Message.js"
import type { Note } from "../domain/Note.js"
import type { Route } from "../domain/Route.js"

/** What the runtime needs of a route that changed: its two bots and whether it is enabled. */
export type RouteEnds = Pick<Route, "source_bot_id" | "target_bot_id" | "enabled">

/** The kinds of outbox jobs: deliveries to a bot's backend, messages routes make a bot send, events to bridges. */
export type OutboxKind = "delivery" | "route_send" | "bridge"

/** Something that happened, for whoever follows it: the supervisor, long polls, the route cache. */
export type Event = Data.TaggedEnum<{
  /** A bot was added, changed or deleted: read it again. */
  BotChanged: { readonly id: number }
  /** Routes went (`removed`, as they were) and came (`added`, as they are now); an update is both. */
  RoutesChanged: { readonly removed: ReadonlyArray<RouteEnds>; readonly added: ReadonlyArray<RouteEnds> }
  /** The bot's inbox holds updates to process. */
  UpdatesReceived: { readonly bot_id: number }
  /** The bot's outbox line of this kind holds jobs to run (queued, or put back in line). */
  OutboxQueued: { readonly bot_id: number; readonly kind: OutboxKind }
  /** The bot's long-poll buffer holds new updates. */
  UpdatesBuffered: { readonly bot_id: number }
  /** The bot's ingress (poller or webhook) went live or stopped. */
  BotStatusChanged: { readonly bot_id: number; readonly running: boolean }
  /** New messages of the bot, incoming and outgoing, are in its history. */
  MessagesStored: { readonly bot_id: number; readonly messages: ReadonlyArray<Message> }
  /** A message of the bot's history was edited; `message` is as stored now. */
  MessageEdited: { readonly bot_id: number; readonly message: Message }
  /** Messages of the bot's history in the chat were marked deleted. */
  MessagesDeleted: { readonly bot_id: number; readonly chat_id: number; readonly message_ids: ReadonlyArray<number> }
  /** Something a chat shows changed (a new or edited message moves its last message and unread count). */
  ChatChanged: { readonly bot_id: number; readonly chat_id: number }
  /** A delivery's status changed: delivered, waiting for a retry, dead, or put back in line; `delivery` is as stored now. */
  DeliveryChanged: { readonly delivery: Delivery }
  /** A note was added or edited (`note` as stored now), or deleted (`note` as it was, `deleted`). */
  NoteChanged: { readonly note: Note; readonly deleted: boolean }
  /** Bridges were added, changed or removed: read them again. */
  BridgesChanged: {}
  /** API keys were added, changed or removed: forget what was remembered of them. */
  KeysChanged: {}
  /** Stored settings (the LLM router's) changed: read them again. */
  SettingsChanged: {}
  /** A getUpdates of the bot started (`poll` tells it apart): it ends any other pending one, on any instance. */
  LongPollStarted: { readonly bot_id: number; readonly poll: string }
  /** Entries were appended to the event log (by another instance, when it came from one). */
  LogAppended: {}
  /** An instance gave up leases (rebalancing or shutting down): the others may take them now. */
  LeasesReleased: {}
  /** This instance started or stopped running the bot's ingress, pipeline and outbox (its lease). */
  OwnershipChanged: { readonly bot_id: number; readonly owned: boolean }
  /** Events of other instances may have been missed (the link to them was down): read everything again. */
  Resynced: {}
}>

/** Constructors and matchers of `Event`. */
export const Event = Data.taggedEnum<Event>()

/** Events of one kind. */
export type EventOf<Tag extends Event["_tag"]> = Extract<Event, { readonly _tag: Tag }>

/** The bots whose routes a `RoutesChanged` touches, each once. */
export const botsOf = (event: EventOf<"RoutesChanged">): ReadonlyArray<number> => [
  ...new Set([...event.removed, ...event.added].flatMap((r) => [r.source_bot_id, r.target_bot_id]))
]

/** The one event bus of an instance. */
export interface EventsService {
  /** Tells the subscribers that follow the event's kind; never blocks (their queues are unbounded). */
  readonly publish: (event: Event) => Effect.Effect<void>
  /** The events of these kinds from now on, in the order they were published, until the scope closes. */
  readonly subscribe: <Tag extends Event["_tag"]>(
    ...tags: ReadonlyArray<Tag>
  ) => Effect.Effect<Queue.Dequeue<EventOf<Tag>>, never, Scope.Scope>
  /**
   * Calls `listener` with each event of these kinds from now on, inside `publish` (so it must be quick and
   * never throw), until the scope closes: for what must happen at once, such as waking a bot's worker.
   */
  readonly listen: <Tag extends Event["_tag"]>(
    tags: ReadonlyArray<Tag>,
    listener: (event: EventOf<Tag>) => void
  ) => Effect.Effect<void, never, Scope.Scope>
  /** Whether the bot's ingress is live now: the last `BotStatusChanged` of the bot said so. */
  readonly isRunning: (botId: number) => boolean
  /** Publishes an event that another instance published, so that it is not sent to the others again. */
  readonly receive: (event: Event) => Effect.Effect<void>
  /** Whether the event came from another instance (`receive`). */
  readonly isReceived: (event: Event) => boolean
}

/** The one event bus of an instance. */
export class Events extends Context.Tag("@botrelay/core/Events")<Events, EventsService>() {}

interface Subscriber {
  readonly tags: ReadonlySet<string>
  readonly deliver: (event: Event) => void
}

/**
 * Builds the bus: each subscriber names the kinds it follows and gets them on its own unbounded queue,
 * so a publish wakes only those that care; and the running status of each bot as its events tell it.
 */
export const make: Effect.Effect<EventsService> = Effect.sync(() => {
  const running = new Set<number>()
  const subscribers = new Set<Subscriber>()
  const received = new WeakSet<Event>()
  const publish = (event: Event) =>
    Effect.sync(() => {
      if (event._tag === "BotStatusChanged") {
        if (event.running) running.add(event.bot_id)
        else running.delete(event.bot_id)
      }
      for (const subscriber of subscribers) {
        if (subscriber.tags.has(event._tag)) subscriber.deliver(event)
      }
    })
  return Events.of({
    publish,
    receive: (event) => Effect.suspend(() => publish((received.add(event), event))),
    isReceived: (event) => received.has(event),
    subscribe: <Tag extends Event["_tag"]>(...tags: ReadonlyArray<Tag>) =>
      Effect.acquireRelease(
        Effect.map(Queue.unbounded<Event>(), (queue) => {
          const subscriber: Subscriber = { tags: new Set(tags), deliver: (event) => void Queue.unsafeOffer(queue, event) }
          subscribers.add(subscriber)
          return { subscriber, queue }
        }),
        ({ queue, subscriber }) => Effect.zipRight(Effect.sync(() => subscribers.delete(subscriber)), Queue.shutdown(queue))
      ).pipe(Effect.map(({ queue }) => queue as Queue.Queue<unknown> as Queue.Dequeue<EventOf<Tag>>)),
    listen: <Tag extends Event["_tag"]>(tags: ReadonlyArray<Tag>, listener: (event: EventOf<Tag>) => void) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const subscriber: Subscriber = { tags: new Set(tags), deliver: listener as (event: Event) => void }
          subscribers.add(subscriber)
          return subscriber
        }),
        (subscriber) => Effect.sync(() => subscribers.delete(subscriber))
      ).pipe(Effect.asVoid),
    isRunning: (botId) => running.has(botId)
  })
})

/** The bus as a layer. */
export const layer: Layer.Layer<Events> = Layer.effect(Events, make)

/**
 * Publishes that the bot's history holds new messages (`MessagesStored`, when any) and edited ones
 * (`MessageEdited` each, in order), then `ChatChanged` once for each chat they are in.
 */
export const publishMessages = (
  events: EventsService,
  botId: number,
  stored: ReadonlyArray<Message>,
  edited: ReadonlyArray<Message> = []
): Effect.Effect<void> =>
  stored.length === 0 && edited.length === 0 ? Effect.void : Effect.suspend(() => {
    const published: Array<Effect.Effect<void>> = []
    if (stored.length > 0) published.push(events.publish(Event.MessagesStored({ bot_id: botId, messages: stored })))
    for (const message of edited) published.push(events.publish(Event.MessageEdited({ bot_id: botId, message })))
    const chats = new Set<number>()
    for (const message of stored) chats.add(message.chat_id)
    for (const message of edited) chats.add(message.chat_id)
    for (const chat_id of chats) published.push(events.publish(Event.ChatChanged({ bot_id: botId, chat_id })))
    return Effect.all(published, { discard: true })
  })

/** Publishes an event on the instance's bus. */
export const publish = (event: Event): Effect.Effect<void, never, Events> =>
  Effect.flatMap(Events, (events) => events.publish(event))
