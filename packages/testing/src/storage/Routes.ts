import { BotStore, RouteStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Runner, t0, botInput, routeInput, some, ids } from "./Fixtures.js"

/** The conformance tests for routes between bots. */
export const routes = (run: Runner): void => {
  const test = run(BotStore.BotStore, RouteStore.RouteStore)
  describe("routes", () => {
    test("insertRoute, findRoute, listRoutes, deleteRoute", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const input = routeInput(a.id, b.id, {
          condition_type: "keyword",
          condition_value: "hello,world",
          action: "copy",
          target_chat_id: -1001234567890,
          enabled: false,
          description: "greetings"
        })
        const route = yield* storage.insertRoute(input)
        assert.deepStrictEqual(route, { id: 1, ...input })
        assert.deepStrictEqual(yield* storage.findRoute(route.id), Option.some(route))
        assert.isTrue(Option.isNone(yield* storage.findRoute(2)))
        const second = yield* storage.insertRoute(routeInput(b.id, a.id))
        assert.deepStrictEqual(second, { id: 2, ...routeInput(b.id, a.id) })
        assert.deepStrictEqual(yield* storage.listRoutes({}), [route, second])
        assert.isTrue(yield* storage.deleteRoute(route.id))
        assert.isFalse(yield* storage.deleteRoute(route.id))
        assert.deepStrictEqual(yield* storage.listRoutes({}), [second])
        const third = yield* storage.insertRoute(routeInput(a.id, a.id))
        assert.strictEqual(third.id, 3)
      }))

    test("listRoutes with bot_id matches source or target, ordered by id", (storage) =>
      Effect.gen(function*() {
        for (const n of [1, 2, 3, 4]) yield* storage.insertBot(botInput(n))
        const r1 = yield* storage.insertRoute(routeInput(1, 2))
        const r2 = yield* storage.insertRoute(routeInput(3, 4))
        const r3 = yield* storage.insertRoute(routeInput(2, 3))
        const r4 = yield* storage.insertRoute(routeInput(4, 1))
        const r5 = yield* storage.insertRoute(routeInput(2, 2))
        assert.deepStrictEqual(ids(yield* storage.listRoutes({ bot_id: 2 })), [r1.id, r3.id, r5.id])
        assert.deepStrictEqual(ids(yield* storage.listRoutes({ bot_id: 1 })), [r1.id, r4.id])
        assert.deepStrictEqual(ids(yield* storage.listRoutes({ bot_id: 4 })), [r2.id, r4.id])
        assert.deepStrictEqual(yield* storage.listRoutes({ bot_id: 9 }), [])
        assert.deepStrictEqual(ids(yield* storage.listRoutes({})), [1, 2, 3, 4, 5])
      }))

    test("replaceRoute replaces every field but id and created_at", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const route = yield* storage.insertRoute(routeInput(a.id, b.id, { created_at: t0 }))
        const replacement = {
          source_bot_id: b.id,
          target_bot_id: a.id,
          condition_type: "regex" as const,
          condition_value: "^/start",
          action: "drop" as const,
          target_chat_id: -42,
          enabled: false,
          description: "replaced"
        }
        const replaced = some(yield* storage.replaceRoute(route.id, replacement))
        assert.deepStrictEqual(replaced, { id: route.id, ...replacement, created_at: t0 })
        assert.deepStrictEqual(yield* storage.findRoute(route.id), Option.some(replaced))
        const back = some(yield* storage.replaceRoute(route.id, { ...replacement, enabled: true }))
        assert.isTrue(back.enabled)
        assert.isTrue(Option.isNone(yield* storage.replaceRoute(99, replacement)))
        assert.deepStrictEqual(ids(yield* storage.listRoutes({})), [route.id])
      }))
  })
}
