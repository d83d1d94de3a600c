import { type Bot, BotStore, KeyStore, MessageStore, RouteStore, TagStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import {
  type Runner,
  t0,
  t1,
  t2,
  botInput,
  plainBot,
  routeInput,
  message,
  tagInput,
  keyInput,
  some,
  ids
} from "./Fixtures.js"

/** The conformance tests for bots: insert, find, list, update and delete. */
export const bots = (run: Runner): void => {
  const test = run(BotStore.BotStore, RouteStore.RouteStore, MessageStore.MessageStore, TagStore.TagStore, KeyStore.KeyStore)
  describe("bots", () => {
    test("insertBot returns the stored bot with defaults and ids from 1", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(
          botInput(1, {
            name: "alpha",
            source: "cli",
            manage_enabled: true,
            proxy_enabled: true,
            backend_url: "https://backend.example/hook",
            secret_token: Redacted.make("s3cr3t_-X"),
            long_poll_enabled: true,
            description: "the first bot"
          })
        )
        assert.deepStrictEqual(plainBot(bot), {
          id: 1,
          token: "100001:AAH-secret_token-1",
          name: "alpha",
          source: "cli",
          manage_enabled: true,
          proxy_enabled: true,
          backend_url: "https://backend.example/hook",
          backend_url_origin: "api",
          secret_token: "s3cr3t_-X",
          signing_secret: "",
          long_poll_enabled: true,
          description: "the first bot",
          webhook_mode: false,
          disabled: false,
          username: "",
          last_error: "",
          last_update_at: "",
          created_at: t0,
          updated_at: t0
        })
        const second = yield* storage.insertBot(botInput(2, { backend_url_origin: "tgapi" }))
        assert.strictEqual(second.id, 2)
        assert.strictEqual(second.backend_url_origin, "tgapi")
        assert.strictEqual(some(yield* storage.findBot(2)).backend_url_origin, "tgapi")
        assert.deepStrictEqual(plainBot(some(yield* storage.findBot(1))), plainBot(bot))
      }))

    test("signing secrets are Redacted, round-trip, change and clear", (storage) =>
      Effect.gen(function*() {
        const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        const bot = yield* storage.insertBot(botInput(1, { signing_secret: Redacted.make(secret) }))
        for (const found of [bot, some(yield* storage.findBot(bot.id)), (yield* storage.listBots)[0]!]) {
          assert.isTrue(Redacted.isRedacted(found.signing_secret))
          assert.strictEqual(Redacted.value(found.signing_secret), secret)
          assert.notInclude(JSON.stringify(found), secret)
        }
        const changed = some(yield* storage.updateBot(bot.id, { signing_secret: Redacted.make(`${secret}AAAA`) }))
        assert.strictEqual(Redacted.value(changed.signing_secret), `${secret}AAAA`)
        const cleared = some(yield* storage.updateBot(bot.id, { signing_secret: Redacted.make("") }))
        assert.strictEqual(Redacted.value(cleared.signing_secret), "")
        assert.strictEqual(Redacted.value(some(yield* storage.findBot(bot.id)).signing_secret), "")
      }))

    test("tokens are Redacted and round-trip", (storage) =>
      Effect.gen(function*() {
        const token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
        const bot = yield* storage.insertBot(botInput(1, {
          token: Redacted.make(token),
          secret_token: Redacted.make("webhook-secret")
        }))
        for (const found of [bot, some(yield* storage.findBot(bot.id)), (yield* storage.listBots)[0]!]) {
          assert.isTrue(Redacted.isRedacted(found.token))
          assert.isTrue(Redacted.isRedacted(found.secret_token))
          assert.strictEqual(Redacted.value(found.token), token)
          assert.strictEqual(Redacted.value(found.secret_token), "webhook-secret")
          assert.notInclude(JSON.stringify(found), token)
          // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the point: a Redacted's string form must not show the token
          assert.notInclude(String(found.token), token)
        }
        assert.strictEqual(some(yield* storage.findBotByToken(token)).id, bot.id)
        assert.isTrue(Option.isNone(yield* storage.findBotByToken("123456789:other")))
      }))

    test("findBot is None for an unknown id; listBots is ordered by id", (storage) =>
      Effect.gen(function*() {
        assert.isTrue(Option.isNone(yield* storage.findBot(1)))
        assert.deepStrictEqual(yield* storage.listBots, [])
        for (const n of [3, 1, 2]) yield* storage.insertBot(botInput(n))
        const bots = yield* storage.listBots
        assert.deepStrictEqual(ids(bots), [1, 2, 3])
        assert.deepStrictEqual(bots.map((b) => b.name), ["bot 3", "bot 1", "bot 2"])
        assert.isTrue(Option.isNone(yield* storage.findBot(4)))
      }))

    test("ids are never reused", (storage) =>
      Effect.gen(function*() {
        yield* storage.insertBot(botInput(1))
        yield* storage.insertBot(botInput(2))
        assert.isTrue(yield* storage.deleteBot(2))
        const third = yield* storage.insertBot(botInput(3))
        assert.strictEqual(third.id, 3)
        assert.isTrue(yield* storage.deleteBot(3))
        assert.isTrue(yield* storage.deleteBot(1))
        assert.strictEqual((yield* storage.insertBot(botInput(4))).id, 4)
      }))

    test("duplicate token on insert fails with the existing bot's id and changes nothing", (storage) =>
      Effect.gen(function*() {
        yield* storage.insertBot(botInput(1))
        const existing = yield* storage.insertBot(botInput(2))
        const error = yield* Effect.flip(storage.insertBot(botInput(3, { token: botInput(2).token })))
        assert.strictEqual(error._tag, "DuplicateToken")
        assert.strictEqual((error as Bot.DuplicateToken).existing_bot_id, existing.id)
        assert.include(error.message, `bot ${existing.id}`)
        assert.notInclude(error.message, Redacted.value(botInput(2).token))
        assert.deepStrictEqual(ids(yield* storage.listBots), [1, 2])
      }))

    test("updateBot applies the given fields and keeps the others", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { description: "keep me" }))
        const updated = some(
          yield* storage.updateBot(bot.id, {
            name: "renamed",
            manage_enabled: true,
            proxy_enabled: true,
            backend_url: "http://localhost:9000/x",
            backend_url_origin: "tgapi",
            secret_token: Redacted.make("new-secret"),
            long_poll_enabled: true,
            webhook_mode: true,
            disabled: true,
            source: "cli",
            username: "alpha_bot",
            last_error: "unauthorized",
            last_update_at: t1,
            updated_at: t2
          })
        )
        const expected = {
          ...plainBot(bot),
          name: "renamed",
          manage_enabled: true,
          proxy_enabled: true,
          backend_url: "http://localhost:9000/x",
          backend_url_origin: "tgapi" as const,
          secret_token: "new-secret",
          long_poll_enabled: true,
          webhook_mode: true,
          disabled: true,
          source: "cli" as const,
          username: "alpha_bot",
          last_error: "unauthorized",
          last_update_at: t1,
          updated_at: t2
        }
        assert.deepStrictEqual(plainBot(updated), expected)
        assert.deepStrictEqual(plainBot(some(yield* storage.findBot(bot.id))), expected)

        const flipped = some(yield* storage.updateBot(bot.id, { disabled: false, manage_enabled: false }))
        assert.deepStrictEqual(plainBot(flipped), { ...expected, disabled: false, manage_enabled: false })
        const unchanged = some(yield* storage.updateBot(bot.id, {}))
        assert.deepStrictEqual(plainBot(unchanged), plainBot(flipped))
      }))

    test("updateBot is None for an unknown id", (storage) =>
      Effect.gen(function*() {
        assert.isTrue(Option.isNone(yield* storage.updateBot(7, { name: "x" })))
        assert.isTrue(Option.isNone(yield* storage.updateBot(7, {})))
        assert.deepStrictEqual(yield* storage.listBots, [])
      }))

    test("updateBot changing the token checks uniqueness", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const error = yield* Effect.flip(storage.updateBot(b.id, { token: a.token, name: "stolen" }))
        assert.strictEqual(error._tag, "DuplicateToken")
        assert.strictEqual((error as Bot.DuplicateToken).existing_bot_id, a.id)
        assert.deepStrictEqual(plainBot(some(yield* storage.findBot(b.id))), plainBot(b))

        const same = some(yield* storage.updateBot(a.id, { token: Redacted.make(Redacted.value(a.token)) }))
        assert.strictEqual(Redacted.value(same.token), Redacted.value(a.token))

        const renewed = some(yield* storage.updateBot(b.id, { token: Redacted.make("200:fresh-token") }))
        assert.strictEqual(Redacted.value(renewed.token), "200:fresh-token")
        assert.strictEqual(some(yield* storage.findBotByToken("200:fresh-token")).id, b.id)
        assert.isTrue(Option.isNone(yield* storage.findBotByToken(Redacted.value(b.token))))
        const reused = yield* storage.insertBot(botInput(3, { token: b.token }))
        assert.strictEqual(reused.id, 3)
      }))

    test("deleteBot cascades to routes, messages and API keys, not to tags", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        const ab = yield* storage.insertRoute(routeInput(a.id, b.id))
        const ba = yield* storage.insertRoute(routeInput(b.id, a.id))
        const bc = yield* storage.insertRoute(routeInput(b.id, c.id))
        const ca = yield* storage.insertRoute(routeInput(c.id, a.id))
        yield* storage.saveMessage(message(b.id, -100, 1))
        yield* storage.saveMessage(message(b.id, 5, 2))
        yield* storage.saveMessage(message(a.id, -100, 1))
        const tag = yield* storage.upsertTag(tagInput(-100, 42, "vip", { bot_id: a.id }))
        const tagOfB = yield* storage.upsertTag(tagInput(-100, 42, "vip", { bot_id: b.id }))
        const key = yield* storage.insertApiKey(keyInput(1, { bot_ids: [a.id, b.id, c.id] }))
        const onlyB = yield* storage.insertApiKey(keyInput(2, { bot_ids: [b.id] }))

        assert.isTrue(yield* storage.deleteBot(b.id))
        assert.isFalse(yield* storage.deleteBot(b.id))
        assert.isFalse(yield* storage.deleteBot(99))

        assert.isTrue(Option.isNone(yield* storage.findBot(b.id)))
        assert.deepStrictEqual(ids(yield* storage.listBots), [a.id, c.id])
        assert.deepStrictEqual(ids(yield* storage.listRoutes({})), [ca.id])
        for (const id of [ab.id, ba.id, bc.id]) assert.isTrue(Option.isNone(yield* storage.findRoute(id)))
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: b.id, chat_id: -100, limit: 50, offset: 0 }), [])
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: b.id, chat_id: 5, limit: 50, offset: 0 }), [])
        assert.deepStrictEqual(
          yield* storage.listMessages({ bot_id: a.id, chat_id: -100, limit: 50, offset: 0 }),
          [message(a.id, -100, 1)]
        )
        assert.deepStrictEqual(some(yield* storage.findApiKey(key.id)).bot_ids, [a.id, c.id])
        assert.deepStrictEqual(some(yield* storage.findApiKey(onlyB.id)).bot_ids, [])
        assert.deepStrictEqual((yield* storage.listApiKeys).map((k) => k.bot_ids), [[a.id, c.id], []])
        assert.deepStrictEqual(yield* storage.findTag(tag.id), Option.some(tag))
        assert.isTrue(Option.isNone(yield* storage.findTag(tagOfB.id)))
      }))
  })
}
