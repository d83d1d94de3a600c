import type { Scope } from "effect"
import { Context, Data, Effect, Layer, PubSub, type Queue } from "effect"
import type { Route } from "../domain/Route.js"

/** What the runtime needs of a route that changed: its two bots and whether it is enabled. */
export type RouteEnds = Pick<Route, "source_bot_id" | "target_bot_id" | "enabled">

/** The kinds of outbox jobs: deliveries to a bot's backend, and messages routes make a bot send. */
export type OutboxKind = "delivery" | "route_send"

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
  /** Tells every subscriber; never blocks (subscribers' queues are unbounded). */
  readonly publish: (event: Event) => Effect.Effect<void>
  /** Every event from now on, until the scope closes. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<Event>, never, Scope.Scope>
  /** Whether the bot's ingress is live now: the last `BotStatusChanged` of the bot said so. */
  readonly isRunning: (botId: number) => boolean
}

/** The one event bus of an instance. */
export class Events extends Context.Tag("@botrelay/core/Events")<Events, EventsService>() {}

/** Builds the bus: an unbounded hub, and the running status of each bot as its events tell it. */
export const make: Effect.Effect<EventsService> = Effect.gen(function*() {
  const running = new Set<number>()
  const hub = yield* PubSub.unbounded<Event>()
  return Events.of({
    publish: (event) =>
      Effect.suspend(() => {
        if (event._tag === "BotStatusChanged") {
          if (event.running) running.add(event.bot_id)
          else running.delete(event.bot_id)
        }
        return Effect.asVoid(PubSub.publish(hub, event))
      }),
    subscribe: PubSub.subscribe(hub),
    isRunning: (botId) => running.has(botId)
  })
})

/** The bus as a layer. */
export const layer: Layer.Layer<Events> = Layer.effect(Events, make)

/** Publishes an event on the instance's bus. */
export const publish = (event: Event): Effect.Effect<void, never, Events> =>
  Effect.flatMap(Events, (events) => events.publish(event))
