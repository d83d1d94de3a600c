import type { Scope } from "effect"
import { Effect, Layer, Queue } from "effect"
import { Broadcast, type Heard } from "../stores/Broadcast.js"
import { type Event, Event as Events_, Events, type EventsService } from "./Events.js"
import { Identity } from "./Identity.js"
import { Ownership } from "./Ownership.js"

/**
 * The events other instances need: what changes bots, routes and keys; work queued for a bot another
 * instance may run; what long polls and live streams wait for. Messages and chats reach other instances'
 * streams through the event log (`LogAppended`), not here.
 */
export const relayed = [
  "BotChanged",
  "RoutesChanged",
  "BridgesChanged",
  "KeysChanged",
  "SettingsChanged",
  "UpdatesReceived",
  "OutboxQueued",
  "UpdatesBuffered",
  "BotStatusChanged",
  "LongPollStarted",
  "LogAppended",
  "LeasesReleased"
] as const

type Relayed = Extract<Event, { readonly _tag: typeof relayed[number] }>

interface Envelope {
  readonly from: string
  /** The events, or none with `resync` when they did not fit in a message. */
  readonly events: ReadonlyArray<Relayed>
  readonly resync?: true
}

const bytes = (text: string) => new TextEncoder().encode(text).length

/** Work for a bot this instance runs needs no message: the runtime here was told already. */
const concernsOthers = (event: Relayed, owns: (botId: number) => boolean) =>
  event._tag === "UpdatesReceived" || event._tag === "OutboxQueued" ? !owns(event.bot_id) : true

/** Messages of at most `maxBytes`, each carrying as many of the events as fit, in order. */
export const pack = (from: string, events: ReadonlyArray<Relayed>, maxBytes: number): ReadonlyArray<string> => {
  const messages: Array<string> = []
  let batch: Array<Relayed> = []
  const flush = () => {
    if (batch.length > 0) messages.push(JSON.stringify({ from, events: batch } satisfies Envelope))
    batch = []
  }
  for (const event of events) {
    const alone = JSON.stringify({ from, events: [event] } satisfies Envelope)
    if (bytes(alone) > maxBytes) {
      flush()
      messages.push(JSON.stringify({ from, events: [], resync: true } satisfies Envelope))
      continue
    }
    const next = JSON.stringify({ from, events: [...batch, event] } satisfies Envelope)
    if (bytes(next) > maxBytes) flush()
    batch.push(event)
  }
  flush()
  return messages
}

const known = new Set<string>(relayed)

/** The constructors of relayed events, by tag. */
const constructors = Events_ as unknown as Record<Relayed["_tag"], (fields: object) => Event>

/** Publishes what another instance said on this instance's bus; its own messages and garbage are ignored. */
const hear = (events: EventsService, self: string, heard: Heard) =>
  Effect.suspend(() => {
    if (heard._tag === "Reconnected") return events.receive(Events_.Resynced())
    let envelope: Envelope
    try {
      envelope = JSON.parse(heard.text) as Envelope
    } catch {
      return Effect.logWarning("ignored a message that is not JSON from another instance")
    }
    if (envelope.from === self) return Effect.void
    if (envelope.resync === true) return events.receive(Events_.Resynced())
    return Effect.forEach(
      envelope.events.filter((event) => known.has(event._tag)),
      ({ _tag, ...fields }) => events.receive(constructors[_tag](fields)),
      { discard: true }
    )
  })

/**
 * Relays events between the instances sharing the storage, in the scope: what this instance publishes of
 * `relayed` goes to the others (gathered into few messages), and what they publish is published here as
 * received (never sent on again). After the link was down, `Resynced` tells this instance's runtime to read
 * everything again.
 */
export const run: Effect.Effect<void, never, Broadcast | Events | Identity | Ownership | Scope.Scope> = Effect.gen(
  function*() {
    const broadcast = yield* Broadcast
    const events = yield* Events
    const identity = yield* Identity
    const ownership = yield* Ownership
    const outgoing = yield* events.subscribe(...relayed)
    const incoming = yield* broadcast.listen
    yield* Queue.takeBetween(outgoing, 1, 1000).pipe(
      Effect.flatMap((taken) => {
        const local = [...taken].filter((event) => !events.isReceived(event) && concernsOthers(event, ownership.owns))
        const unique = [...new Map(local.map((event) => [JSON.stringify(event), event])).values()]
        // A message being said is finished even when the relay stops.
        return Effect.uninterruptible(
          Effect.forEach(pack(identity.id, unique, broadcast.maxBytes), broadcast.say, { discard: true })
        )
      }),
      Effect.catchAll((e) => Effect.logWarning("could not tell the other instances", e.cause)),
      Effect.forever,
      Effect.forkScoped
    )
    // Stopping, what was published last (the leases given up) still goes out; runs before the fiber above stops.
    yield* Effect.addFinalizer(() =>
      Queue.takeAll(outgoing).pipe(
        Effect.map((left) => [...left].filter((event) => !events.isReceived(event))),
        Effect.flatMap((left) => Effect.forEach(pack(identity.id, left, broadcast.maxBytes), broadcast.say, { discard: true })),
        Effect.catchAll((e) => Effect.logWarning("could not tell the other instances", e.cause))
      )
    )
    yield* Queue.take(incoming).pipe(
      Effect.flatMap((heard) => hear(events, identity.id, heard)),
      Effect.forever,
      Effect.forkScoped
    )
  }
)

/** The relay as a layer: it runs while the layer is alive. */
export const layer: Layer.Layer<never, never, Broadcast | Events | Identity | Ownership> = Layer.scopedDiscard(run)
