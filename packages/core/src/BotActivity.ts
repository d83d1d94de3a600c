import type { Scope } from "effect"
import { Context, Effect, Layer, PubSub, type Queue } from "effect"
import type { Route } from "./Route.js"

/** What the runtime needs of a route that changed: its two bots and whether it is enabled. */
export type RouteEnds = Pick<Route, "source_bot_id" | "target_bot_id" | "enabled">

/**
 * Something the runtime must look at again: one bot's settings, or routes: those `removed` (as they
 * were) and `added` (as they are now); an update is both.
 */
export type Change =
  | { readonly _tag: "Bot"; readonly id: number }
  | {
    readonly _tag: "Routes"
    readonly removed: ReadonlyArray<RouteEnds>
    readonly added: ReadonlyArray<RouteEnds>
  }

/** The bots whose routes a change touches, each once. */
export const botsOf = (change: Extract<Change, { readonly _tag: "Routes" }>): ReadonlyArray<number> => [
  ...new Set([...change.removed, ...change.added].flatMap((r) => [r.source_bot_id, r.target_bot_id]))
]

/** Which bots have live ingress, and news of changes to bots and routes for the runtime. */
export interface BotActivityService {
  /** Whether the bot's ingress (poller or webhook) is live now. */
  readonly isRunning: (botId: number) => boolean
  readonly setRunning: (botId: number, running: boolean) => Effect.Effect<void>
  /** Tells the runtime about a change; management services call it after every write. */
  readonly changed: (change: Change) => Effect.Effect<void>
  /** Changes from now on, until the scope closes. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<Change>, never, Scope.Scope>
}

/** Which bots have live ingress, and news of changes to bots and routes for the runtime. */
export class BotActivity extends Context.Tag("@botrelay/core/BotActivity")<BotActivity, BotActivityService>() {}

/** Builds the shared state: a set of live bots and an unbounded hub of changes. */
export const make: Effect.Effect<BotActivityService> = Effect.gen(function*() {
  const running = new Set<number>()
  const changes = yield* PubSub.unbounded<Change>()
  return BotActivity.of({
    isRunning: (botId) => running.has(botId),
    setRunning: (botId, live) => Effect.sync(() => void (live ? running.add(botId) : running.delete(botId))),
    changed: (change) => Effect.asVoid(PubSub.publish(changes, change)),
    subscribe: PubSub.subscribe(changes)
  })
})

/** The shared state as a layer. */
export const layer: Layer.Layer<BotActivity> = Layer.effect(BotActivity, make)
