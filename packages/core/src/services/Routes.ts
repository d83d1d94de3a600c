import { Context, Effect, Layer, Option } from "effect"
import { BotNotFound } from "../domain/Bot.js"
import { Event, Events } from "../runtime/Events.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import type { NewRoute, Route, RouteUpdate } from "../domain/Route.js"
import { normalizeCondition, RouteNotFound } from "../domain/Route.js"
import * as RouteRegex from "../internal/RouteRegex.js"
import type { RouteSend, SendStatus } from "../domain/RouteSend.js"
import { BotStore } from "../stores/BotStore.js"
import { RouteStore } from "../stores/RouteStore.js"
import { OutboxStore } from "../stores/OutboxStore.js"
import { SettingsStore } from "../stores/SettingsStore.js"
import * as ConfigRevision from "../runtime/ConfigRevision.js"
import { nowIso } from "../internal/Time.js"

/** Managing routes between bots. */
export interface RoutesService {
  /**
   * Creates a route; both bots must exist, and an enabled regex route must keep the source bot's enabled
   * regex routes within `RouteRegex.maxTotalProgramSize` in all.
   */
  readonly add: (input: NewRoute) => Effect.Effect<Route, BotNotFound | InvalidInput | StorageError>
  /** Replaces every field of the route with this id, under the same rules as `add`. */
  readonly update: (
    input: RouteUpdate
  ) => Effect.Effect<Route, RouteNotFound | BotNotFound | InvalidInput | StorageError>
  /** Routes ordered by id; with a bot id, those where it is source or target. */
  readonly list: (botId?: number) => Effect.Effect<ReadonlyArray<Route>, StorageError>
  readonly remove: (id: number) => Effect.Effect<Route, RouteNotFound | StorageError>
  /** Route sends newest first, optionally of one sending bot and one status. */
  readonly sends: (filter: {
    readonly bot_id?: number
    readonly status?: SendStatus
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<RouteSend>, StorageError>
}

/** Managing routes between bots. */
export class Routes extends Context.Tag("@botrelay/core/Routes")<Routes, RoutesService>() {}

/** Builds the service on the stores the host provides, telling the `Events` bus. */
export const make: Effect.Effect<
  RoutesService,
  never,
  BotStore | RouteStore | OutboxStore | SettingsStore | Events
> = Effect.gen(function*() {
  const botStore = yield* BotStore
  const routeStore = yield* RouteStore
  const outbox = yield* OutboxStore
  const events = yield* Events
  const bumped = ConfigRevision.bumped(yield* SettingsStore)
  /** Tells the runtime which routes went and which came. */
  const announce = (removed: ReadonlyArray<Route>, added: ReadonlyArray<Route>) =>
    events.publish(Event.RoutesChanged({ removed, added }))

  const botExists = (id: number) =>
    botStore.findBot(id).pipe(Effect.flatMap((bot) => Option.isSome(bot) ? Effect.void : new BotNotFound({ id })))

  const findRoute = (id: number) =>
    routeStore.findRoute(id).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(new RouteNotFound({ id })), onSome: Effect.succeed }))
    )

  const record = (input: NewRoute) => {
    const condition = normalizeCondition(input.condition_type, input.condition_value)
    return {
      source_bot_id: input.source_bot_id,
      target_bot_id: input.target_bot_id,
      condition_type: input.condition_type,
      condition_value: condition._tag === "Right" ? condition.value : input.condition_value,
      action: input.action,
      target_chat_id: input.target_chat_id,
      enabled: input.enabled,
      description: input.description
    }
  }

  const botsExist = (route: NewRoute) =>
    Effect.zipRight(botExists(route.source_bot_id), botExists(route.target_bot_id))

  const regexBudget = (route: NewRoute, replacing?: number) => {
    if (!route.enabled || route.condition_type !== "regex") return Effect.void
    return routeStore.listRoutes({ bot_id: route.source_bot_id }).pipe(Effect.flatMap((routes) => {
      const total = routes
        .filter((r) =>
          r.source_bot_id === route.source_bot_id && r.id !== replacing && r.enabled && r.condition_type === "regex"
        )
        .reduce((sum, r) => sum + RouteRegex.cost(r.condition_value), RouteRegex.cost(route.condition_value))
      return total <= RouteRegex.maxTotalProgramSize ? Effect.void : Effect.fail(InvalidInput.field(
        "condition_value",
        `the enabled regex routes of bot ${route.source_bot_id} would have RE2 program size ${total} in all, ` +
          `over the limit of ${RouteRegex.maxTotalProgramSize}; simplify or disable some of them (see docs/routing.md)`
      ))
    }))
  }

  return Routes.of({
    add: (input) =>
      botsExist(input).pipe(
        Effect.zipRight(regexBudget(input)),
        Effect.zipRight(nowIso),
        Effect.flatMap((created_at) => routeStore.insertRoute({ ...record(input), created_at })),
        Effect.tap((route) => announce([], [route])),
        bumped,
        Effect.withSpan("Routes.add")
      ),
    update: (input) =>
      findRoute(input.id).pipe(
        Effect.tap(() => botsExist(input)),
        Effect.tap(() => regexBudget(input, input.id)),
        Effect.flatMap((before) =>
          routeStore.replaceRoute(input.id, record(input)).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.fail(new RouteNotFound({ id: input.id })),
              onSome: Effect.succeed
            })),
            Effect.tap((after) => announce([before], [after]))
          )
        ),
        bumped,
        Effect.withSpan("Routes.update", { attributes: { id: input.id } })
      ),
    list: (botId) => routeStore.listRoutes(botId === undefined ? {} : { bot_id: botId }),
    remove: (id) =>
      findRoute(id).pipe(
        Effect.tap(() => routeStore.deleteRoute(id)),
        Effect.tap((route) => announce([route], [])),
        bumped,
        Effect.withSpan("Routes.remove", { attributes: { id } })
      ),
    sends: outbox.listSends
  })
})

/** The service on the stores the host provides and the `Events` bus. */
export const layer: Layer.Layer<Routes, never, BotStore | RouteStore | OutboxStore | SettingsStore | Events> = Layer
  .effect(Routes, make)
