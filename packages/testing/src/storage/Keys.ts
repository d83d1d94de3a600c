import { BotStore, KeyStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Runner, t0, t1, t2, botInput, keyInput, some } from "./Fixtures.js"

/** The conformance tests for API keys. */
export const apiKeys = (run: Runner): void => {
  const test = run(BotStore.BotStore, KeyStore.KeyStore)
  describe("api keys", () => {
    test("insertApiKey returns an enabled, unused key without its hash", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const admin = yield* storage.insertApiKey(keyInput(1, { role: "admin", name: "root" }))
        assert.deepStrictEqual(admin, {
          id: 1,
          name: "root",
          role: "admin",
          bot_ids: [],
          scopes: [],
          prefix: "brk_k1",
          created_at: t0,
          last_used_at: "",
          enabled: true
        })
        assert.isFalse("hash" in admin)
        const operator = yield* storage.insertApiKey(keyInput(2, { bot_ids: [b.id, a.id] }))
        assert.strictEqual(operator.id, 2)
        assert.deepStrictEqual(operator.bot_ids, [a.id, b.id])
        assert.deepStrictEqual(yield* storage.findApiKey(operator.id), Option.some(operator))
        assert.deepStrictEqual(yield* storage.listApiKeys, [admin, operator])
        for (const key of yield* storage.listApiKeys) assert.isFalse("hash" in key)
      }))

    test("findApiKeyByHash finds a key by the hash of its secret", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const one = yield* storage.insertApiKey(keyInput(1))
        const two = yield* storage.insertApiKey(keyInput(2, { bot_ids: [bot.id] }))
        assert.deepStrictEqual(yield* storage.findApiKeyByHash("hash-2"), Option.some(two))
        assert.deepStrictEqual(yield* storage.findApiKeyByHash("hash-1"), Option.some(one))
        assert.isTrue(Option.isNone(yield* storage.findApiKeyByHash("hash-3")))
        assert.isTrue(Option.isNone(yield* storage.findApiKeyByHash("")))
        assert.isFalse("hash" in some(yield* storage.findApiKeyByHash("hash-2")))
      }))

    test("setApiKeyEnabled, touchApiKey and deleteApiKey", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const key = yield* storage.insertApiKey(keyInput(1, { bot_ids: [bot.id] }))
        const other = yield* storage.insertApiKey(keyInput(2))
        const disabled = some(yield* storage.setApiKeyEnabled(key.id, false))
        assert.deepStrictEqual(disabled, { ...key, enabled: false })
        assert.deepStrictEqual(yield* storage.findApiKeyByHash("hash-1"), Option.some(disabled))
        assert.deepStrictEqual(some(yield* storage.setApiKeyEnabled(key.id, true)), key)
        assert.isTrue(Option.isNone(yield* storage.setApiKeyEnabled(99, true)))

        yield* storage.touchApiKey(key.id, t1)
        yield* storage.touchApiKey(key.id, t2)
        yield* storage.touchApiKey(99, t2)
        assert.deepStrictEqual(yield* storage.findApiKey(key.id), Option.some({ ...key, last_used_at: t2 }))
        assert.deepStrictEqual(yield* storage.findApiKey(other.id), Option.some(other))

        assert.isTrue(yield* storage.deleteApiKey(key.id))
        assert.isFalse(yield* storage.deleteApiKey(key.id))
        assert.isTrue(Option.isNone(yield* storage.findApiKey(key.id)))
        assert.isTrue(Option.isNone(yield* storage.findApiKeyByHash("hash-1")))
        assert.deepStrictEqual(yield* storage.listApiKeys, [other])
        assert.isTrue(Option.isSome(yield* storage.findBot(bot.id)))
        const next = yield* storage.insertApiKey(keyInput(3, { bot_ids: [bot.id] }))
        assert.strictEqual(next.id, 3)
        assert.deepStrictEqual(next.bot_ids, [bot.id])
      }))
  })
}
