import { BotStore, InboxStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Runner, botInput, plainBot, update, some } from "./Fixtures.js"

/** The conformance tests for webhook secrets. */
export const webhookSecrets = (run: Runner): void => {
  const test = run(BotStore.BotStore, InboxStore.InboxStore)
  describe("webhook secrets", () => {
    test("set, get and clear a bot's webhook secret", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        assert.isTrue(Option.isNone(yield* storage.webhookSecret(a.id)))
        yield* storage.setWebhookSecret(a.id, "first-secret")
        yield* storage.setWebhookSecret(b.id, "other-secret")
        assert.strictEqual(some(yield* storage.webhookSecret(a.id)), "first-secret")
        yield* storage.setWebhookSecret(a.id, "second-secret")
        assert.strictEqual(some(yield* storage.webhookSecret(a.id)), "second-secret")
        yield* storage.setWebhookSecret(a.id, undefined)
        assert.isTrue(Option.isNone(yield* storage.webhookSecret(a.id)))
        yield* storage.setWebhookSecret(a.id, undefined)
        assert.strictEqual(some(yield* storage.webhookSecret(b.id)), "other-secret")
      }))

    test("the secret is not part of the bot and survives other changes", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        yield* storage.setWebhookSecret(a.id, "kept-secret")
        yield* storage.updateBot(a.id, { webhook_mode: true, name: "renamed" })
        yield* storage.commitUpdates(a.id, [update(1)], 0)
        assert.notInclude(JSON.stringify(plainBot(some(yield* storage.findBot(a.id)))), "kept-secret")
        assert.strictEqual(some(yield* storage.webhookSecret(a.id)), "kept-secret")
      }))

    test("deleteBot removes the bot's webhook secret", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.setWebhookSecret(a.id, "secret-a")
        yield* storage.setWebhookSecret(b.id, "secret-b")
        assert.isTrue(yield* storage.deleteBot(a.id))
        assert.isTrue(Option.isNone(yield* storage.webhookSecret(a.id)))
        assert.strictEqual(some(yield* storage.webhookSecret(b.id)), "secret-b")
      }))
  })
}
