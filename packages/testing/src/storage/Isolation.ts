import { BotStore, RouteStore, MessageStore, TagStore, KeyStore, InboxStore, OutboxStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import {
  type Runner,
  botScopes,
  t2,
  botInput,
  routeInput,
  message,
  tagInput,
  keyInput,
  update,
  held,
  newDelivery,
  queued,
  completion,
  some,
  nextDelivery
} from "./Fixtures.js"

/** The conformance tests for isolation: what storage hands out is a copy. */
export const isolation = (run: Runner): void => {
  const test = run(BotStore.BotStore, RouteStore.RouteStore, MessageStore.MessageStore, TagStore.TagStore, KeyStore.KeyStore, InboxStore.InboxStore, OutboxStore.OutboxStore)
  describe("isolation", () => {
    test("returned records are copies", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const a = yield* storage.insertBot(botInput(2))
        const route = yield* storage.insertRoute(routeInput(bot.id, a.id))
        yield* storage.saveMessage(message(bot.id, 10, 1))
        const tag = yield* storage.upsertTag(tagInput(1, 10, "x"))
        const key = yield* storage.insertApiKey(keyInput(1, { bot_ids: [bot.id] }))

        Object.assign(bot, { name: "mutated" })
        Object.assign(route, { description: "mutated" })
        Object.assign(tag, { color: "mutated" })
        Object.assign(key, { name: "mutated" })
        const keyBots: Array<number> = key.bot_ids as Array<number>
        keyBots.push(99)
        const [listed] = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 1, offset: 0 })
        Object.assign(listed!, { text: "mutated" })
        for (const b of yield* storage.listBots) Object.assign(b, { name: "mutated" })
        const input = message(bot.id, 10, 2)
        yield* storage.saveMessage(input)
        Object.assign(input, { text: "mutated after save" })

        assert.strictEqual(some(yield* storage.findBot(bot.id)).name, "bot 1")
        assert.strictEqual(some(yield* storage.findRoute(route.id)).description, "")
        assert.strictEqual(some(yield* storage.findTag(tag.id)).color, "")
        assert.deepStrictEqual(some(yield* storage.findApiKey(key.id)), { ...key, name: "key 1", bot_ids: [bot.id], scopes: botScopes([bot.id]) })
        assert.deepStrictEqual(
          yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 }),
          [message(bot.id, 10, 2), message(bot.id, 10, 1)]
        )
      }))

    test("each build of the layer starts empty", (storage) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* storage.listBots, [])
        assert.deepStrictEqual(yield* storage.listRoutes({}), [])
        assert.deepStrictEqual(yield* storage.listApiKeys, [])
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: 1 }), [])
        assert.deepStrictEqual(yield* storage.botsWithWork, [])
        assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 100 }), [])
        assert.deepStrictEqual(yield* storage.listSends({ limit: 100 }), [])
      }))

    test("returned updates and deliveries are copies", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const input = update(1)
        const batch = [input]
        yield* storage.commitUpdates(bot.id, batch, 2)
        Object.assign(input, { payload: "mutated" })
        batch.push(update(2))
        const [found] = yield* storage.pendingUpdates(bot.id, 10)
        Object.assign(found!, { payload: "mutated" })
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), held(bot.id, update(1)))

        const delivery = newDelivery(bot.id, 1)
        const done = completion(bot.id, 1, { deliveries: [delivery] })
        yield* storage.completeUpdates([done])
        Object.assign(delivery, { url: "mutated" })
        const [next] = Option.toArray(yield* nextDelivery(storage, bot.id))
        Object.assign(next!, { status: "dead" })
        const [listed] = yield* storage.listDeliveries({ limit: 1 })
        Object.assign(listed!, { attempts: 9 })
        yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "x" }]])
        Object.assign(some(yield* storage.retryDelivery(1, t2)), { last_error: "mutated" })
        assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [
          { ...queued(1, newDelivery(bot.id, 1)), next_attempt_at: t2, last_error: "x", updated_at: t2 }
        ])
      }))
  })
}
