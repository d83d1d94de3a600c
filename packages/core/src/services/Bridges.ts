import { Context, Effect, Layer, Option } from "effect"
import * as BackendPolicy from "../domain/BackendPolicy.js"
import {
  type Bridge,
  BridgeNotFound,
  type BridgePatch,
  type BridgeUpdate,
  type NewBridge,
  view
} from "../domain/Bridge.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import { nowIso } from "../internal/Time.js"
import { Event, Events } from "../runtime/Events.js"
import { BotStore } from "../stores/BotStore.js"
import { BridgeStore } from "../stores/BridgeStore.js"

/** Managing bridges: outbound webhooks of live events. */
export interface BridgesService {
  /** All bridges, by id. */
  readonly list: Effect.Effect<ReadonlyArray<Bridge>, StorageError>
  readonly add: (input: NewBridge) => Effect.Effect<Bridge, InvalidInput | StorageError>
  /** Changes the given fields; the others keep their value. */
  readonly update: (input: BridgeUpdate) => Effect.Effect<Bridge, BridgeNotFound | InvalidInput | StorageError>
  /** Removes the bridge and its pending deliveries. */
  readonly remove: (id: number) => Effect.Effect<Bridge, BridgeNotFound | StorageError>
}

/** Managing bridges. */
export class Bridges extends Context.Tag("@botrelay/core/Bridges")<Bridges, BridgesService>() {}

/**
 * Builds the service: bridge URLs follow the `BackendPolicy` of an admin's backend URL (a literal private
 * address is refused under strict; resolved addresses are checked when deliveries connect), bot ids must
 * name registered bots; every change is announced (`BridgesChanged`, relayed to other instances).
 */
export const make: Effect.Effect<BridgesService, never, BridgeStore | BotStore | Events> =
  Effect.gen(function*() {
    const store = yield* BridgeStore
    const bots = yield* BotStore
    const events = yield* Events
    const policy = yield* BackendPolicy.BackendPolicy
    const announce = events.publish(Event.BridgesChanged())

    const checkUrl = (url: string | undefined): Effect.Effect<void, InvalidInput> => {
      if (url === undefined || !BackendPolicy.publicOnly(policy, "api")) return Effect.void
      const refusal = BackendPolicy.literalRefusal(url)
      return refusal === undefined
        ? Effect.void
        : Effect.fail(InvalidInput.field("url", `url is not allowed by the backend URL policy: ${refusal}`))
    }

    const checkBots = (ids: ReadonlyArray<number> | undefined): Effect.Effect<void, InvalidInput | StorageError> =>
      ids === undefined ? Effect.void : Effect.gen(function*() {
        const known = new Set((yield* bots.listBots).map((bot) => bot.id))
        const unknown = ids.filter((id) => !known.has(id))
        if (unknown.length > 0) {
          return yield* InvalidInput.field("bot_ids", `bot_ids: no bot has the id ${unknown.join(", ")}`)
        }
      })

    const find = (id: number) =>
      store.findBridge(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BridgeNotFound({ id })), onSome: Effect.succeed }))
      )

    return Bridges.of({
      list: Effect.map(store.listBridges, (all) => all.map(view)),
      add: (input) =>
        Effect.gen(function*() {
          yield* checkUrl(input.url)
          yield* checkBots(input.bot_ids)
          const created_at = yield* nowIso
          const bridge = yield* store.insertBridge({ ...input, bot_ids: [...new Set(input.bot_ids)], created_at })
          yield* announce
          return view(bridge)
        }).pipe(Effect.withSpan("Bridges.add")),
      update: ({ id, ...patch }) =>
        Effect.gen(function*() {
          yield* find(id)
          yield* checkUrl(patch.url)
          yield* checkBots(patch.bot_ids)
          const changes: BridgePatch = {
            ...patch,
            ...(patch.bot_ids === undefined ? {} : { bot_ids: [...new Set(patch.bot_ids)] }),
            updated_at: yield* nowIso
          }
          const bridge = yield* store.updateBridge(id, changes).pipe(
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BridgeNotFound({ id })), onSome: Effect.succeed }))
          )
          yield* announce
          return view(bridge)
        }).pipe(Effect.withSpan("Bridges.update", { attributes: { id } })),
      remove: (id) =>
        store.deleteBridge(id).pipe(
          Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BridgeNotFound({ id })), onSome: Effect.succeed })),
          Effect.tap(() => announce),
          Effect.map(view),
          Effect.withSpan("Bridges.remove", { attributes: { id } })
        )
    })
  })

/** The service on the stores the host provides, the `Events` bus and the backend policy. */
export const layer = Layer.effect(Bridges, make)
