import type { Bot, Delivery, LongPoll, RouteSend, Storage } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import type { Layer } from "effect"
import { Effect, Either, Option, Redacted } from "effect"
import {
  botInput,
  completion,
  held,
  ids,
  keyInput,
  message,
  newDelivery,
  newMapping,
  newSend,
  nextDelivery,
  plainBot,
  queued,
  queuedSend,
  routeInput,
  runner,
  some,
  t0,
  t1,
  t2,
  tagInput,
  update
} from "./storage/Fixtures.js"

/**
 * The storage conformance suite: every `StorageService` driver must pass it. `layer` must give a
 * fresh, empty storage each time it is built; every test builds it once.
 */
export const suite = (name: string, layer: Layer.Layer<Storage.Storage, unknown>): void => {
  const test = runner(layer)

  describe(`${name} storage`, () => {
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

    describe("messages", () => {
      test("saveMessage stores a message; optional fields are omitted when absent", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const plain = message(bot.id, 10, 1)
          yield* storage.saveMessage(plain)
          const [found] = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 })
          assert.deepStrictEqual(found, plain)
          assert.isFalse("media_type" in found!)
          assert.isFalse("file_id" in found!)
          assert.isFalse("reply_to_message_id" in found!)
        }))

      test("optional fields round-trip when present", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const full = message(bot.id, 10, 2, {
            media_type: "photo",
            file_id: "AgACAgIAAxkBAAIB",
            reply_to_message_id: 1,
            direction: "out",
            edit_date: 1_700_000_100,
            user_id: 0,
            username: "",
            first_name: "",
            last_name: "Smith",
            text: "caption with ünïcödé ✓"
          })
          const callback = message(bot.id, 10, -7, { media_type: "callback", text: "data:1" })
          yield* storage.saveMessage(full)
          yield* storage.saveMessage(callback)
          const found = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 })
          assert.deepStrictEqual(found, [full, callback])
          assert.isFalse("file_id" in found[1]!)
        }))

      test("saving the same (bot_id, chat_id, id) replaces the message", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const original = message(a.id, 10, 1, { media_type: "photo", file_id: "f1", reply_to_message_id: 3 })
          yield* storage.saveMessage(original)
          yield* storage.saveMessage(message(a.id, 11, 1, { text: "other chat" }))
          yield* storage.saveMessage(message(b.id, 10, 1, { text: "other bot" }))
          const edited = message(a.id, 10, 1, { text: "edited", edit_date: 1_700_000_500 })
          yield* storage.saveMessage(edited)
          assert.deepStrictEqual(yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }), [
            edited
          ])
          assert.deepStrictEqual(
            (yield* storage.listMessages({ bot_id: a.id, chat_id: 11, limit: 50, offset: 0 })).map((m) => m.text),
            ["other chat"]
          )
          assert.deepStrictEqual(
            (yield* storage.listMessages({ bot_id: b.id, chat_id: 10, limit: 50, offset: 0 })).map((m) => m.text),
            ["other bot"]
          )
        }))

      test("saveMessages saves each in order, a later one replacing an earlier with the same key", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.saveMessages([])
          yield* storage.saveMessages([
            message(bot.id, 10, 1, { text: "first" }),
            message(bot.id, 10, 2, { direction: "out" }),
            message(bot.id, 10, 1, { text: "replaced", edit_date: 1_700_000_500 })
          ])
          const found = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 })
          assert.deepStrictEqual(found, [
            message(bot.id, 10, 2, { direction: "out" }),
            message(bot.id, 10, 1, { text: "replaced", edit_date: 1_700_000_500 })
          ])
        }))

      test("listMessages orders by date desc, then id desc", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const saved = [
            message(bot.id, 10, 5, { date: 100 }),
            message(bot.id, 10, 1, { date: 300 }),
            message(bot.id, 10, 3, { date: 200 }),
            message(bot.id, 10, 2, { date: 200 }),
            message(bot.id, 10, 4, { date: 200 }),
            message(bot.id, 10, 6, { date: 50 })
          ]
          for (const m of saved) yield* storage.saveMessage(m)
          const found = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 })
          assert.deepStrictEqual(ids(found), [1, 4, 3, 2, 5, 6])
          assert.deepStrictEqual(found.map((m) => m.date), [300, 200, 200, 200, 100, 50])
        }))

      test("listMessages pages with limit and offset", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          for (let id = 1; id <= 25; id++) yield* storage.saveMessage(message(bot.id, 10, id, { date: 1000 + id }))
          yield* storage.saveMessage(message(bot.id, 11, 100, { date: 5000 }))
          const page = (limit: number, offset: number) =>
            storage.listMessages({ bot_id: bot.id, chat_id: 10, limit, offset }).pipe(Effect.map(ids))
          assert.deepStrictEqual(yield* page(10, 0), [25, 24, 23, 22, 21, 20, 19, 18, 17, 16])
          assert.deepStrictEqual(yield* page(10, 10), [15, 14, 13, 12, 11, 10, 9, 8, 7, 6])
          assert.deepStrictEqual(yield* page(10, 20), [5, 4, 3, 2, 1])
          assert.deepStrictEqual(yield* page(10, 25), [])
          assert.deepStrictEqual(yield* page(10, 1000), [])
          assert.deepStrictEqual(yield* page(1, 3), [22])
          assert.deepStrictEqual((yield* page(200, 0)).length, 25)
          assert.deepStrictEqual(yield* storage.listMessages({ bot_id: bot.id, chat_id: 12, limit: 50, offset: 0 }), [])
          assert.deepStrictEqual(yield* storage.listMessages({ bot_id: 99, chat_id: 10, limit: 50, offset: 0 }), [])
        }))

      test("findMessage finds one message by (bot_id, chat_id, id)", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const photo = message(a.id, -100, 7, { media_type: "photo", file_id: "f7", reply_to_message_id: 3 })
          yield* storage.saveMessage(photo)
          yield* storage.saveMessage(message(a.id, 10, 7, { text: "other chat" }))
          yield* storage.saveMessage(message(b.id, -100, 7, { text: "other bot" }))
          assert.deepStrictEqual(yield* storage.findMessage(a.id, -100, 7), Option.some(photo))
          assert.deepStrictEqual(
            (yield* storage.findMessage(b.id, -100, 7)).pipe(Option.map((m) => m.text)),
            Option.some("other bot")
          )
          assert.isTrue(Option.isNone(yield* storage.findMessage(a.id, -100, 8)))
          assert.isTrue(Option.isNone(yield* storage.findMessage(99, -100, 7)))
        }))

      test("markMessagesDeleted marks the named messages of one bot and chat, keeping them in the history", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          for (const id of [1, 2, 3]) yield* storage.saveMessage(message(a.id, 10, id))
          yield* storage.saveMessage(message(a.id, 11, 1))
          yield* storage.saveMessage(message(b.id, 10, 1))
          assert.strictEqual(yield* storage.markMessagesDeleted(a.id, 10, [1, 3, 3, 99]), 2)
          const page = yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 })
          assert.deepStrictEqual(page.map((m) => [m.id, m.deleted]), [[3, true], [2, false], [1, true]])
          assert.deepStrictEqual(
            yield* storage.findMessage(a.id, 10, 3),
            Option.some(message(a.id, 10, 3, { deleted: true }))
          )
          assert.isFalse((yield* storage.listMessages({ bot_id: a.id, chat_id: 11, limit: 50, offset: 0 }))[0]!.deleted)
          assert.isFalse((yield* storage.listMessages({ bot_id: b.id, chat_id: 10, limit: 50, offset: 0 }))[0]!.deleted)
          assert.strictEqual(yield* storage.markMessagesDeleted(a.id, 10, []), 0)
          assert.strictEqual(yield* storage.markMessagesDeleted(a.id, 12, [1]), 0)
        }))

      test("a saved message carries its deleted flag; saving it again replaces the flag too", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const gone = message(bot.id, 10, 1, { deleted: true })
          yield* storage.saveMessage(gone)
          assert.deepStrictEqual(yield* storage.findMessage(bot.id, 10, 1), Option.some(gone))
          yield* storage.saveMessage(message(bot.id, 10, 1, { text: "again" }))
          assert.isFalse(Option.getOrThrow(yield* storage.findMessage(bot.id, 10, 1)).deleted)
        }))

      test("negative chat ids and large ids round-trip", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const chatId = -1001234567890
          const big = message(bot.id, chatId, 2147483647 + 10, {
            user_id: 7_123_456_789,
            reply_to_message_id: 2147483647 + 1,
            date: 4_102_444_800
          })
          const small = message(bot.id, chatId, 1, { user_id: 1 })
          yield* storage.saveMessage(big)
          yield* storage.saveMessage(small)
          yield* storage.saveMessage(message(bot.id, -chatId, 3))
          const found = yield* storage.listMessages({ bot_id: bot.id, chat_id: chatId, limit: 50, offset: 0 })
          assert.deepStrictEqual(found, [big, small])
          const tag = yield* storage.upsertTag(tagInput(chatId, 7_123_456_789, "big"))
          assert.deepStrictEqual(yield* storage.listTags({ chat_id: chatId }), [tag])
          assert.strictEqual(tag.chat_id, chatId)
          assert.strictEqual(tag.user_id, 7_123_456_789)
        }))
    })

    describe("tags", () => {
      test("upsertTag assigns ids from 1 and keeps id and created_at on reassignment", (storage) =>
        Effect.gen(function*() {
          const first = yield* storage.upsertTag(tagInput(-100, 42, "vip", { color: "#f00", created_at: t0 }))
          assert.deepStrictEqual(first, { id: 1, ...tagInput(-100, 42, "vip", { color: "#f00", created_at: t0 }) })
          const again = yield* storage.upsertTag(
            tagInput(-100, 42, "vip", { color: "gold", username: "alice_new", created_at: t1 })
          )
          assert.deepStrictEqual(again, { ...first, color: "gold", username: "alice_new" })
          assert.deepStrictEqual(yield* storage.findTag(first.id), Option.some(again))
          const otherTag = yield* storage.upsertTag(tagInput(-100, 42, "admin"))
          const otherUser = yield* storage.upsertTag(tagInput(-100, 43, "vip"))
          const otherChat = yield* storage.upsertTag(tagInput(-200, 42, "vip"))
          const otherBot = yield* storage.upsertTag(tagInput(-100, 42, "vip", { bot_id: 2 }))
          assert.deepStrictEqual([otherTag.id, otherUser.id, otherChat.id, otherBot.id], [2, 3, 4, 5])
          assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100 })), [1, 2, 3, 5])
          assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100, bot_id: 1 })), [1, 2, 3])
          assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100, bot_id: 2, user_id: 42 })), [5])
          assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100, bot_id: 3 })), [])
        }))

      test("listTags filters by chat and optionally user, ordered by id", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.upsertTag(tagInput(1, 10, "z"))
          const b = yield* storage.upsertTag(tagInput(1, 11, "a"))
          const c = yield* storage.upsertTag(tagInput(2, 10, "m"))
          const d = yield* storage.upsertTag(tagInput(1, 10, "b"))
          assert.deepStrictEqual(yield* storage.listTags({ chat_id: 1 }), [a, b, d])
          assert.deepStrictEqual(yield* storage.listTags({ chat_id: 1, user_id: 10 }), [a, d])
          assert.deepStrictEqual(yield* storage.listTags({ chat_id: 2, user_id: 10 }), [c])
          assert.deepStrictEqual(yield* storage.listTags({ chat_id: 2, user_id: 11 }), [])
          assert.deepStrictEqual(yield* storage.listTags({ chat_id: 3 }), [])
        }))

      test("findTag and deleteTag", (storage) =>
        Effect.gen(function*() {
          const tag = yield* storage.upsertTag(tagInput(1, 10, "x"))
          assert.isTrue(Option.isNone(yield* storage.findTag(tag.id + 1)))
          assert.isTrue(yield* storage.deleteTag(tag.id))
          assert.isFalse(yield* storage.deleteTag(tag.id))
          assert.isTrue(Option.isNone(yield* storage.findTag(tag.id)))
          const reassigned = yield* storage.upsertTag(tagInput(1, 10, "x"))
          assert.strictEqual(reassigned.id, 2)
        }))
    })

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

    describe("inbox", () => {
      test("ingressOffset is 0 until a batch is committed; commitUpdates stores the batch and raises it", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          assert.strictEqual(yield* storage.ingressOffset(a.id), 0)
          assert.strictEqual(yield* storage.ingressOffset(99), 0)
          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), [])

          const batch = [update(500, { received_at: t1 }), update(501, { received_at: t2 })]
          assert.strictEqual(yield* storage.commitUpdates(a.id, batch, 502), 2)
          assert.strictEqual(yield* storage.ingressOffset(a.id), 502)
          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, ...batch))
          assert.strictEqual(yield* storage.ingressOffset(b.id), 0)
          assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 100), [])

          const other = update(500, { payload: "{\"update_id\":500}" })
          assert.strictEqual(yield* storage.commitUpdates(b.id, [other], 501), 1)
          assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 100), held(b.id, other))
          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, ...batch))
        }))

      test("committing the same updates again counts them once and keeps the first payload", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const batch = [update(10), update(11)]
          assert.strictEqual(yield* storage.commitUpdates(bot.id, batch, 12), 2)
          assert.strictEqual(yield* storage.commitUpdates(bot.id, batch, 12), 0)
          assert.strictEqual(
            yield* storage.commitUpdates(bot.id, [update(11, { payload: "{\"changed\":true}", received_at: t2 })], 12),
            0
          )
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(11), update(12), update(12)], 13), 1)
          assert.deepStrictEqual(
            yield* storage.pendingUpdates(bot.id, 100),
            held(bot.id, update(10), update(11), update(12))
          )
          assert.strictEqual(yield* storage.ingressOffset(bot.id), 13)
        }))

      test("the ingress offset is never lowered; updates below it are still stored", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [], 20), 0)
          assert.strictEqual(yield* storage.ingressOffset(bot.id), 20)
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(5)], 15), 1)
          assert.strictEqual(yield* storage.ingressOffset(bot.id), 20)
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [], 0), 0)
          assert.strictEqual(yield* storage.ingressOffset(bot.id), 20)
          assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), held(bot.id, update(5)))
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(21)], 22), 1)
          assert.strictEqual(yield* storage.ingressOffset(bot.id), 22)
        }))

      test("pendingUpdates is ordered by update_id and honours the limit", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.commitUpdates(bot.id, [update(3), update(1)], 4)
          yield* storage.commitUpdates(bot.id, [update(2), update(1_000_000_000), update(900)], 4)
          const updateIds = (limit: number) =>
            storage.pendingUpdates(bot.id, limit).pipe(Effect.map((us) => us.map((u) => u.update_id)))
          assert.deepStrictEqual(yield* updateIds(100), [1, 2, 3, 900, 1_000_000_000])
          assert.deepStrictEqual(yield* updateIds(2), [1, 2])
          assert.deepStrictEqual(yield* updateIds(1), [1])
          yield* storage.completeUpdates([completion(bot.id, 1)])
          yield* storage.completeUpdates([completion(bot.id, 3)])
          assert.deepStrictEqual(yield* updateIds(2), [2, 900])
        }))

      test("a processed update committed again stays processed", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.commitUpdates(bot.id, [update(1), update(2)], 3)
          yield* storage.completeUpdates([completion(bot.id, 1)])
          assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), held(bot.id, update(2)))
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4), 1)
          assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), held(bot.id, update(2), update(3)))
          yield* storage.completeUpdates([completion(bot.id, 2)])
          yield* storage.completeUpdates([completion(bot.id, 3)])
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4), 0)
          assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), [])
          assert.deepStrictEqual(yield* storage.botsWithWork, [])
        }))

      test("payloads are kept byte for byte", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const payloads = [
            "{\"update_id\":1,\"message\":{\"text\":\"héllo wörld ✓ 👋🏽 中文 \\u00e9 \\\"quoted\\\" \\\\ \\n\"}}",
            "{ \"update_id\" : 2 ,\n\t\"big\": 123456789012345678901234567890, \"id\": 9007199254740993,\n" +
            "  \"float\": 1.0e3, \"neg\": -0, \"order\": {\"z\": 1, \"a\": 2} }\n",
            "{\"update_id\":3,\"text\":\"" + "x".repeat(70_000) + "\"}"
          ]
          const batch = payloads.map((payload, i) => update(i + 1, { payload }))
          assert.strictEqual(yield* storage.commitUpdates(bot.id, batch, 4), 3)
          const found = yield* storage.pendingUpdates(bot.id, 10)
          assert.deepStrictEqual(found.map((u) => u.payload), payloads)
          for (const [i, u] of found.entries()) assert.strictEqual(u.payload.length, payloads[i]!.length)

          yield* storage.completeUpdates([completion(bot.id, 2, {
            deliveries: [
              newDelivery(bot.id, 2, { payload: payloads[1]! }),
              newDelivery(bot.id, 1, { payload: payloads[0]! })
            ]
          })])
          assert.deepStrictEqual(
            (yield* storage.listDeliveries({ bot_id: bot.id, limit: 10 })).map((d) => d.payload),
            [payloads[0], payloads[1]]
          )
        }))

      test("completeUpdates saves the messages, queues the deliveries and marks the update processed", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* storage.saveMessage(message(a.id, 10, 7, { text: "before edit" }))
          yield* storage.commitUpdates(a.id, [update(1), update(2)], 3)
          const edited = message(a.id, 10, 7, { text: "after edit", edit_date: 1_700_000_900 })
          const routed = message(b.id, -100, 3, { direction: "out", media_type: "photo", file_id: "f" })
          const toBackend = newDelivery(a.id, 1)
          const toTarget = newDelivery(b.id, 1, { url: "https://backend.example/other", created_at: t2 })
          yield* storage.completeUpdates([completion(a.id, 1, {
            messages: [message(a.id, 10, 8), edited, routed],
            deliveries: [toBackend, toTarget]
          })])

          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, update(2)))
          assert.deepStrictEqual(
            yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }),
            [message(a.id, 10, 8), edited]
          )
          assert.deepStrictEqual(
            yield* storage.listMessages({ bot_id: b.id, chat_id: -100, limit: 50, offset: 0 }),
            [routed]
          )
          assert.deepStrictEqual(
            yield* storage.listDeliveries({ limit: 10 }),
            [queued(2, toTarget), queued(1, toBackend)]
          )
          assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some(queued(1, toBackend)))
          assert.deepStrictEqual(yield* nextDelivery(storage, b.id), Option.some(queued(2, toTarget)))
        }))

      test("completing an update twice changes nothing the second time", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.commitUpdates(bot.id, [update(1)], 2)
          const first = completion(bot.id, 1, {
            messages: [message(bot.id, 10, 1)],
            deliveries: [newDelivery(bot.id, 1)]
          })
          yield* storage.completeUpdates([first])
          yield* storage.completeUpdates([first])
          yield* storage.completeUpdates([completion(bot.id, 1, {
            messages: [message(bot.id, 10, 1, { text: "replayed" }), message(bot.id, 10, 2)],
            deliveries: [newDelivery(bot.id, 1, { url: "https://backend.example/replayed" })]
          })])
          assert.deepStrictEqual(
            yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 }),
            [message(bot.id, 10, 1)]
          )
          assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [queued(1, newDelivery(bot.id, 1))])
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(1)], 2), 0)
          assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [])
        }))

      test("completing an update the inbox does not hold does nothing", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* storage.commitUpdates(a.id, [update(1)], 2)
          yield* storage.completeUpdates([completion(a.id, 2, {
            messages: [message(a.id, 10, 1)],
            deliveries: [newDelivery(a.id, 2)]
          })])
          yield* storage.completeUpdates([completion(b.id, 1, { deliveries: [newDelivery(b.id, 1)] })])
          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 10), held(a.id, update(1)))
          assert.deepStrictEqual(yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }), [])
          assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [])

          assert.isTrue(yield* storage.deleteBot(a.id))
          yield* storage.completeUpdates([completion(a.id, 1, {
            messages: [message(a.id, 10, 1)],
            deliveries: [newDelivery(a.id, 1)]
          })])
          assert.deepStrictEqual(yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }), [])
          assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [])
          assert.deepStrictEqual(yield* storage.botsWithWork, [])
        }))

      test("a completion that fails leaves no trace", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.commitUpdates(bot.id, [update(1)], 2)
          const result = yield* Effect.either(storage.completeUpdates([completion(bot.id, 1, {
            messages: [message(bot.id, 10, 1)],
            deliveries: [newDelivery(bot.id, 1), newDelivery(999, 1)]
          })]))
          const messages = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 })
          const deliveries = yield* storage.listDeliveries({ limit: 10 })
          const pending = yield* storage.pendingUpdates(bot.id, 10)
          if (Either.isLeft(result)) {
            assert.strictEqual(result.left._tag, "StorageError")
            assert.deepStrictEqual(pending, held(bot.id, update(1)))
            assert.deepStrictEqual(messages, [])
            assert.deepStrictEqual(deliveries, [])
          } else {
            assert.deepStrictEqual(pending, [])
            assert.deepStrictEqual(messages, [message(bot.id, 10, 1)])
            assert.strictEqual(deliveries.length, 2)
          }
        }))

      test("completeUpdates applies a batch of several updates in order, in one go", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* storage.saveMessage(message(a.id, 10, 7, { text: "before edit" }))
          yield* storage.commitUpdates(a.id, [update(1), update(2), update(3), update(4)], 5)
          yield* storage.commitUpdates(b.id, [update(1)], 2)
          const firstEdit = message(a.id, 10, 7, { text: "first edit", edit_date: 1_700_000_100 })
          const secondEdit = message(a.id, 10, 7, { text: "second edit", edit_date: 1_700_000_200 })
          const fromB = message(b.id, -100, 1, { direction: "out" })
          const d1 = newDelivery(a.id, 1)
          const d2 = newDelivery(a.id, 2)
          const d3 = newDelivery(b.id, 2, { url: "https://backend.example/other", created_at: t2 })
          const d4 = newDelivery(a.id, 3)
          yield* storage.completeUpdates([
            completion(a.id, 1, { messages: [firstEdit], deliveries: [d1] }),
            completion(a.id, 2, { messages: [secondEdit, message(a.id, 10, 8)], deliveries: [d2, d3] }),
            completion(b.id, 1, { messages: [fromB] }),
            completion(a.id, 3, { deliveries: [d4] })
          ])

          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, update(4)))
          assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 100), [])
          assert.deepStrictEqual(
            yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }),
            [message(a.id, 10, 8), secondEdit]
          )
          assert.deepStrictEqual(yield* storage.listMessages({ bot_id: b.id, chat_id: -100, limit: 50, offset: 0 }), [
            fromB
          ])
          assert.deepStrictEqual(
            yield* storage.listDeliveries({ limit: 10 }),
            [queued(4, d4), queued(3, d3), queued(2, d2), queued(1, d1)]
          )
          assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some(queued(1, d1)))
          assert.deepStrictEqual(yield* nextDelivery(storage, b.id), Option.some(queued(3, d3)))
        }))

      test("a batch mixing processed and unprocessed updates applies only the unprocessed ones", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4)
          const done = newDelivery(bot.id, 2)
          yield* storage.completeUpdates([
            completion(bot.id, 2, { messages: [message(bot.id, 10, 2)], deliveries: [done] })
          ])

          const d1 = newDelivery(bot.id, 1)
          const d3 = newDelivery(bot.id, 3, { created_at: t2 })
          const replayed = { url: "https://backend.example/replayed" }
          yield* storage.completeUpdates([
            completion(bot.id, 1, { messages: [message(bot.id, 10, 1)], deliveries: [d1] }),
            completion(bot.id, 2, {
              messages: [message(bot.id, 10, 2, { text: "replayed" })],
              deliveries: [newDelivery(bot.id, 2, replayed)]
            }),
            completion(bot.id, 5, { messages: [message(bot.id, 10, 5)], deliveries: [newDelivery(bot.id, 5)] }),
            completion(bot.id, 3, { deliveries: [d3] }),
            completion(bot.id, 1, {
              messages: [message(bot.id, 10, 1, { text: "twice in one batch" })],
              deliveries: [newDelivery(bot.id, 1, replayed)]
            })
          ])

          assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [])
          assert.deepStrictEqual(
            yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 }),
            [message(bot.id, 10, 2), message(bot.id, 10, 1)]
          )
          assert.deepStrictEqual(
            yield* storage.listDeliveries({ limit: 10 }),
            [queued(3, d3), queued(2, d1), queued(1, done)]
          )

          yield* storage.completeUpdates([])
          assert.strictEqual((yield* storage.listDeliveries({ limit: 10 })).length, 3)
        }))

      test("backlog counts the bot's unprocessed updates and pending deliveries", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const backlogs = Effect.all([storage.backlog(a.id), storage.backlog(b.id)])
          assert.deepStrictEqual(yield* backlogs, [0, 0])
          assert.strictEqual(yield* storage.backlog(99), 0)

          yield* storage.commitUpdates(a.id, [update(1), update(2), update(3)], 4)
          assert.deepStrictEqual(yield* backlogs, [3, 0])
          yield* storage.completeUpdates([
            completion(a.id, 1, { deliveries: [newDelivery(a.id, 1), newDelivery(a.id, 1), newDelivery(b.id, 1)] })
          ])
          assert.deepStrictEqual(yield* backlogs, [4, 1])

          yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
          assert.deepStrictEqual(yield* backlogs, [3, 1])
          yield* storage.recordAttempts([[2, { status: "pending", at: t2, next_attempt_at: t2, last_error: "timeout" }]])
          assert.deepStrictEqual(yield* backlogs, [3, 1])
          yield* storage.recordAttempts([[2, { status: "dead", at: t2, last_error: "timeout" }]])
          assert.deepStrictEqual(yield* backlogs, [2, 1])

          yield* storage.completeUpdates([completion(a.id, 2), completion(a.id, 3)])
          assert.deepStrictEqual(yield* backlogs, [0, 1])
          assert.strictEqual(yield* storage.commitUpdates(a.id, [update(1), update(2), update(3)], 4), 0)
          assert.deepStrictEqual(yield* backlogs, [0, 1])
          yield* storage.retryDelivery(2, t2)
          assert.deepStrictEqual(yield* backlogs, [1, 1])

          assert.isTrue(yield* storage.deleteBot(b.id))
          assert.deepStrictEqual(yield* backlogs, [1, 0])
        }))

      test("botsWithWork lists bots with unprocessed updates or pending deliveries, ascending", (storage) =>
        Effect.gen(function*() {
          for (const n of [1, 2, 3, 4, 5]) yield* storage.insertBot(botInput(n))
          assert.deepStrictEqual(yield* storage.botsWithWork, [])
          yield* storage.commitUpdates(4, [update(1), update(2)], 3)
          yield* storage.commitUpdates(1, [update(1)], 2)
          yield* storage.completeUpdates([completion(1, 1, { deliveries: [newDelivery(1, 1)] })])
          yield* storage.commitUpdates(2, [update(1)], 2)
          yield* storage.completeUpdates([completion(2, 1, { deliveries: [newDelivery(2, 1), newDelivery(2, 1)] })])
          yield* storage.recordAttempts([[2, { status: "delivered", at: t2 }]])
          yield* storage.recordAttempts([[3, { status: "dead", at: t2, last_error: "HTTP 500" }]])
          yield* storage.commitUpdates(5, [], 10)
          yield* storage.completeUpdates([completion(4, 1, { deliveries: [newDelivery(4, 1)] })])
          assert.deepStrictEqual(yield* storage.botsWithWork, [1, 4])

          yield* storage.completeUpdates([completion(4, 2)])
          assert.deepStrictEqual(yield* storage.botsWithWork, [1, 4])
          yield* storage.recordAttempts([[4, { status: "delivered", at: t2 }]])
          assert.deepStrictEqual(yield* storage.botsWithWork, [1])
          yield* storage.recordAttempts([[1, { status: "pending", at: t2, next_attempt_at: t2, last_error: "timeout" }]])
          assert.deepStrictEqual(yield* storage.botsWithWork, [1])
          yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "timeout" }]])
          assert.deepStrictEqual(yield* storage.botsWithWork, [])
          yield* storage.retryDelivery(3, t2)
          assert.deepStrictEqual(yield* storage.botsWithWork, [2])
        }))

      test("changing a bot's token resets its ingress offset and keeps its inbox", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* storage.commitUpdates(a.id, [update(50)], 51)
          yield* storage.commitUpdates(b.id, [update(70)], 71)
          yield* storage.updateBot(a.id, { name: "renamed", secret_token: Redacted.make("x"), updated_at: t1 })
          assert.strictEqual(yield* storage.ingressOffset(a.id), 51)
          yield* storage.updateBot(a.id, { token: Redacted.make(Redacted.value(a.token)) })
          assert.strictEqual(yield* storage.ingressOffset(a.id), 51)

          const error = yield* Effect.flip(storage.updateBot(a.id, { token: b.token }))
          assert.strictEqual(error._tag, "DuplicateToken")
          assert.strictEqual(yield* storage.ingressOffset(a.id), 51)

          assert.isTrue(Option.isNone(yield* storage.updateBot(99, { token: Redacted.make("99:new") })))
          yield* storage.updateBot(a.id, { token: Redacted.make("300:another-bot") })
          assert.strictEqual(yield* storage.ingressOffset(a.id), 0)
          assert.strictEqual(yield* storage.ingressOffset(b.id), 71)
          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 10), held(a.id, update(50)))

          assert.strictEqual(yield* storage.commitUpdates(a.id, [update(7)], 8), 1)
          assert.strictEqual(yield* storage.ingressOffset(a.id), 8)
        }))

      test("deleteBot removes the bot's inbox, ingress offset and deliveries", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* storage.commitUpdates(a.id, [update(1), update(2)], 3)
          yield* storage.commitUpdates(b.id, [update(1), update(2)], 3)
          yield* storage.completeUpdates([completion(a.id, 1, {
            deliveries: [newDelivery(a.id, 1), newDelivery(b.id, 1)]
          })])
          yield* storage.completeUpdates([
            completion(b.id, 1, { deliveries: [newDelivery(b.id, 1, { created_at: t2 })] })
          ])
          yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "gone" }]])

          assert.isTrue(yield* storage.deleteBot(a.id))
          assert.strictEqual(yield* storage.ingressOffset(a.id), 0)
          assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 10), [])
          assert.isTrue(Option.isNone(yield* nextDelivery(storage, a.id)))
          assert.deepStrictEqual(yield* storage.listDeliveries({ bot_id: a.id, limit: 10 }), [])
          assert.isTrue(Option.isNone(yield* storage.retryDelivery(1, t2)))
          assert.deepStrictEqual(yield* storage.botsWithWork, [b.id])

          assert.strictEqual(yield* storage.ingressOffset(b.id), 3)
          assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 10), held(b.id, update(2)))
          assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [3, 2])

          const c = yield* storage.insertBot(botInput(3))
          assert.strictEqual(yield* storage.ingressOffset(c.id), 0)
          assert.deepStrictEqual(yield* storage.pendingUpdates(c.id, 10), [])
          yield* storage.commitUpdates(c.id, [update(1)], 2)
          yield* storage.completeUpdates([completion(c.id, 1, { deliveries: [newDelivery(c.id, 1)] })])
          assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [4, 3, 2])
        }))
    })

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

    describe("deliveries", () => {
      const queue = (storage: Storage.StorageService, inputs: ReadonlyArray<Delivery.NewDelivery>) =>
        Effect.gen(function*() {
          for (const botId of new Set(inputs.map((d) => d.bot_id))) {
            const offset = yield* storage.ingressOffset(botId)
            yield* storage.commitUpdates(botId, [update(offset + 1)], offset + 2)
            yield* storage.completeUpdates([completion(botId, offset + 1, {
              deliveries: inputs.filter((d) => d.bot_id === botId)
            })])
          }
        })

      test("nextDeliveries are the bot's pending deliveries in id order, due or not, at most limit", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          assert.deepStrictEqual(yield* storage.nextDeliveries(a.id, 10), [])
          yield* queue(storage, [newDelivery(a.id, 1), newDelivery(b.id, 1), newDelivery(a.id, 2), newDelivery(a.id, 3)])
          const later = "2099-01-01T00:00:00.000Z"
          yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
          yield* storage.recordAttempts([[2, { status: "pending", at: t2, next_attempt_at: later, last_error: "HTTP 502" }]])
          assert.deepStrictEqual(ids(yield* storage.nextDeliveries(a.id, 10)), [2, 3])
          assert.deepStrictEqual(ids(yield* storage.nextDeliveries(a.id, 1)), [2])
          assert.deepStrictEqual(ids(yield* storage.nextDeliveries(b.id, 10)), [4])
        }))

      test("nextDelivery is the bot's pending delivery with the smallest id, due or not", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          assert.isTrue(Option.isNone(yield* nextDelivery(storage, a.id)))
          const inputs = [newDelivery(a.id, 1), newDelivery(a.id, 2), newDelivery(a.id, 3), newDelivery(b.id, 1)]
          yield* queue(storage, inputs)
          assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [4, 3, 2, 1])

          const later = "2099-01-01T00:00:00.000Z"
          yield* storage.recordAttempts([[1, { status: "pending", at: t2, next_attempt_at: later, last_error: "HTTP 502" }]])
          assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some({
            ...queued(1, inputs[0]!),
            attempts: 1,
            next_attempt_at: later,
            last_error: "HTTP 502",
            updated_at: t2
          }))
          yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
          assert.strictEqual(some(yield* nextDelivery(storage, a.id)).id, 2)
          yield* storage.recordAttempts([[2, { status: "dead", at: t2, last_error: "HTTP 410" }]])
          assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some(queued(3, inputs[2]!)))
          assert.deepStrictEqual(yield* nextDelivery(storage, b.id), Option.some(queued(4, inputs[3]!)))
          yield* storage.recordAttempts([[3, { status: "delivered", at: t2 }]])
          assert.isTrue(Option.isNone(yield* nextDelivery(storage, a.id)))
          assert.isTrue(Option.isNone(yield* nextDelivery(storage, 99)))
          assert.strictEqual(some(yield* storage.retryDelivery(2, t2)).id, 2)
          assert.strictEqual(some(yield* nextDelivery(storage, a.id)).id, 2)
        }))

      test("pruneFinished deletes old processed updates and old delivered deliveries, nothing else", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3, { received_at: t2 })], 4)
          yield* storage.completeUpdates([
            completion(bot.id, 1, { deliveries: [newDelivery(bot.id, 1), newDelivery(bot.id, 1)] }),
            completion(bot.id, 3, { deliveries: [newDelivery(bot.id, 3)] })
          ])
          yield* storage.recordAttempts([
            [1, { status: "delivered", at: t0 }],
            [2, { status: "dead", at: t0, last_error: "HTTP 410" }],
            [3, { status: "delivered", at: t2 }]
          ])
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 100), { updates: 1, deliveries: 1, sends: 0 })
          assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [3, 2])
          assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [2])
          yield* storage.commitUpdates(bot.id, [update(1)], 4)
          assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [1, 2])
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 100), { updates: 0, deliveries: 0, sends: 0 })
        }))

      test("pruneFinished deletes at most limit rows of each kind", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4)
          yield* storage.completeUpdates([completion(bot.id, 1), completion(bot.id, 2), completion(bot.id, 3)])
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 2, deliveries: 0, sends: 0 })
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 1, deliveries: 0, sends: 0 })
        }))

      test("recordAttempts records several outcomes at once and skips unknown ids", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* queue(storage, [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3)])
          yield* storage.recordAttempts([
            [1, { status: "delivered", at: t2 }],
            [99, { status: "delivered", at: t2 }],
            [2, { status: "dead", at: t2, last_error: "HTTP 410" }],
            [3, { status: "pending", at: t2, next_attempt_at: t2, last_error: "HTTP 502" }]
          ])
          const statuses = (yield* storage.listDeliveries({ limit: 10 })).map((d) => [d.id, d.status, d.attempts])
          assert.deepStrictEqual(statuses, [[3, "pending", 1], [2, "dead", 1], [1, "delivered", 0]])
        }))

      test("recordAttempt counts failed attempts and records the outcome", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const inputs = [newDelivery(bot.id, 1), newDelivery(bot.id, 2)]
          yield* queue(storage, inputs)
          const find = (id: number) =>
            storage.listDeliveries({ bot_id: bot.id, limit: 10 }).pipe(
              Effect.map((all) => all.find((d) => d.id === id))
            )

          yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 500" }]])
          yield* storage.recordAttempts([[1, {
            status: "pending",
            at: t2,
            next_attempt_at: "2025-03-04T05:07:07.000Z",
            last_error: "timeout after 10 s"
          }]])
          const retried = {
            ...queued(1, inputs[0]!),
            attempts: 2,
            next_attempt_at: "2025-03-04T05:07:07.000Z",
            last_error: "timeout after 10 s",
            updated_at: t2
          }
          assert.deepStrictEqual(yield* find(1), retried)
          const deliveredAt = "2025-03-04T05:08:00.000Z"
          yield* storage.recordAttempts([[1, { status: "delivered", at: deliveredAt }]])
          assert.deepStrictEqual(yield* find(1), { ...retried, status: "delivered", updated_at: deliveredAt })

          yield* storage.recordAttempts([[2, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 503" }]])
          const deadError = "gave up after 24 h: HTTP 503"
          yield* storage.recordAttempts([[2, { status: "dead", at: deliveredAt, last_error: deadError }]])
          assert.deepStrictEqual(yield* find(2), {
            ...queued(2, inputs[1]!),
            status: "dead",
            attempts: 2,
            next_attempt_at: t2,
            last_error: deadError,
            updated_at: deliveredAt
          })

          yield* storage.recordAttempts([[99, { status: "delivered", at: t2 }]])
          assert.strictEqual((yield* storage.listDeliveries({ limit: 10 })).length, 2)
        }))

      test("retryDelivery puts only a dead delivery back in line", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const inputs = [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3)]
          yield* queue(storage, inputs)
          yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 500" }]])
          yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "HTTP 500 for 24 h" }]])
          yield* storage.recordAttempts([[2, { status: "delivered", at: t2 }]])

          const at = "2025-04-01T00:00:00.000Z"
          const retried = some(yield* storage.retryDelivery(1, at))
          const expected: Delivery.Delivery = {
            ...queued(1, inputs[0]!),
            attempts: 0,
            next_attempt_at: at,
            last_error: "HTTP 500 for 24 h",
            updated_at: at
          }
          assert.deepStrictEqual(retried, expected)
          assert.deepStrictEqual(yield* nextDelivery(storage, bot.id), Option.some(expected))
          assert.deepStrictEqual(yield* storage.listDeliveries({ status: "dead", limit: 10 }), [])
          assert.isTrue(Option.isNone(yield* storage.retryDelivery(1, at)))
          assert.isTrue(Option.isNone(yield* storage.retryDelivery(2, at)))
          assert.isTrue(Option.isNone(yield* storage.retryDelivery(3, at)))
          assert.isTrue(Option.isNone(yield* storage.retryDelivery(99, at)))
          assert.deepStrictEqual(yield* storage.listDeliveries({ status: "delivered", limit: 10 }), [
            { ...queued(2, inputs[1]!), status: "delivered", updated_at: t2 }
          ])
          assert.deepStrictEqual(yield* storage.listDeliveries({ status: "pending", limit: 10 }), [
            queued(3, inputs[2]!),
            expected
          ])
        }))

      test("retargetDeliveries points only the bot's pending deliveries at the URL, due now, backoff reset", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const other = yield* storage.insertBot(botInput(2))
          const inputs = [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3), newDelivery(other.id, 1)]
          yield* queue(storage, inputs)
          yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 401" }]])
          yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 401" }]])
          yield* storage.recordAttempts([[2, { status: "dead", at: t1, last_error: "HTTP 401" }]])
          const at = "2025-04-01T00:00:00.000Z"
          const url = "https://new.example/hook"
          assert.strictEqual(yield* storage.retargetDeliveries(bot.id, url, at), 2)
          const byId = new Map((yield* storage.listDeliveries({ limit: 10 })).map((d) => [d.id, d]))
          assert.deepStrictEqual(byId.get(1), {
            ...queued(1, inputs[0]!),
            url,
            attempts: 0,
            next_attempt_at: at,
            last_error: "HTTP 401",
            updated_at: at
          })
          assert.deepStrictEqual(byId.get(3), { ...queued(3, inputs[2]!), url, next_attempt_at: at, updated_at: at })
          assert.strictEqual(byId.get(2)!.url, inputs[1]!.url)
          assert.strictEqual(byId.get(2)!.status, "dead")
          assert.deepStrictEqual(byId.get(4), queued(4, inputs[3]!))
          assert.deepStrictEqual((yield* nextDelivery(storage, bot.id)).pipe(Option.map((d) => d.id)), Option.some(1))
          assert.strictEqual(yield* storage.retargetDeliveries(99, url, at), 0)
        }))

      test("listDeliveries is newest first, filters by bot and status and honours the limit", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* queue(storage, [newDelivery(a.id, 1), newDelivery(a.id, 1), newDelivery(a.id, 1)])
          yield* queue(storage, [newDelivery(b.id, 1), newDelivery(b.id, 1)])
          yield* queue(storage, [newDelivery(a.id, 2)])
          yield* storage.recordAttempts([[2, { status: "dead", at: t2, last_error: "x" }]])
          yield* storage.recordAttempts([[4, { status: "dead", at: t2, last_error: "x" }]])
          yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
          const list = (filter: Parameters<Storage.StorageService["listDeliveries"]>[0]) =>
            storage.listDeliveries(filter).pipe(Effect.map(ids))

          assert.deepStrictEqual(yield* list({ limit: 100 }), [6, 5, 4, 3, 2, 1])
          assert.deepStrictEqual(yield* list({ limit: 2 }), [6, 5])
          assert.deepStrictEqual(yield* list({ bot_id: a.id, limit: 100 }), [6, 3, 2, 1])
          assert.deepStrictEqual(yield* list({ bot_id: b.id, limit: 1 }), [5])
          assert.deepStrictEqual(yield* list({ status: "dead", limit: 100 }), [4, 2])
          assert.deepStrictEqual(yield* list({ status: "pending", limit: 100 }), [6, 5, 3])
          assert.deepStrictEqual(yield* list({ bot_id: a.id, status: "pending", limit: 100 }), [6, 3])
          assert.deepStrictEqual(yield* list({ bot_id: a.id, status: "pending", limit: 1 }), [6])
          assert.deepStrictEqual(yield* list({ bot_id: b.id, status: "delivered", limit: 100 }), [])
          assert.deepStrictEqual(yield* list({ bot_id: 99, limit: 100 }), [])
          const [newest] = yield* storage.listDeliveries({ limit: 1 })
          assert.deepStrictEqual(newest, queued(6, newDelivery(a.id, 2)))
        }))
    })

    describe("route sends", () => {
      /** Completes a fresh update of `sourceBotId` that queues `sends`, received at t2 so pruning keeps it. */
      const queue = (
        storage: Storage.StorageService,
        sourceBotId: number,
        sends: ReadonlyArray<RouteSend.NewRouteSend>
      ) =>
        Effect.gen(function*() {
          const updateIds = [...new Set(sends.map((send) => send.update_id))]
          const offset = Math.max(yield* storage.ingressOffset(sourceBotId), ...updateIds.map((id) => id + 1))
          yield* storage.commitUpdates(sourceBotId, updateIds.map((id) => update(id, { received_at: t2 })), offset)
          yield* storage.completeUpdates(
            updateIds.map((id) => completion(sourceBotId, id, { sends: sends.filter((send) => send.update_id === id) }))
          )
        })

      const sent = (at: string): RouteSend.SendOutcome => ({ status: "sent", at })

      const sendIds = (storage: Storage.StorageService, filter: Parameters<Storage.StorageService["listSends"]>[0]) =>
        storage.listSends(filter).pipe(Effect.map(ids))

      const produced = (storage: Storage.StorageService, chatId: number, messageId: number) =>
        storage.findProduced(chatId, messageId).pipe(Effect.map(Option.map((m) => m.id)))

      test("completeUpdates queues route sends as pending, and completing again queues none", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* storage.commitUpdates(a.id, [update(1), update(2)], 3)
          const inputs = [
            newSend(b.id, a.id, 1),
            newSend(b.id, a.id, 1, { kind: "copy", route_id: 2, chat_id: 300, reply_to_message_id: 5, hop: 1 }),
            newSend(a.id, a.id, 2, { kind: "reply", route_id: 3, from_chat_id: 300, chat_id: 100, created_at: t2 })
          ]
          yield* storage.completeUpdates([
            completion(a.id, 1, { sends: inputs.slice(0, 2), deliveries: [newDelivery(a.id, 1)] }),
            completion(a.id, 2, { sends: inputs.slice(2) })
          ])
          const all = [queuedSend(3, inputs[2]!), queuedSend(2, inputs[1]!), queuedSend(1, inputs[0]!)]
          assert.deepStrictEqual(yield* storage.listSends({ limit: 10 }), all)

          yield* storage.completeUpdates([
            completion(a.id, 1, { sends: [newSend(b.id, a.id, 1)] }),
            completion(a.id, 99, { sends: [newSend(b.id, a.id, 99)] }),
            completion(b.id, 1, { sends: [newSend(a.id, b.id, 1)] })
          ])
          assert.deepStrictEqual(yield* storage.listSends({ limit: 10 }), all)
          assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [1])

          yield* storage.commitUpdates(a.id, [update(3)], 4)
          yield* storage.completeUpdates([completion(a.id, 3, { sends: [newSend(b.id, a.id, 3)] })])
          assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [4, 3, 2, 1])
        }))

      test("nextSends are the bot's pending sends in id order, due or not, at most limit", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const c = yield* storage.insertBot(botInput(3))
          assert.deepStrictEqual(yield* storage.nextSends(b.id, 10), [])
          const inputs = [b.id, b.id, c.id, b.id].map((botId) => newSend(botId, a.id, 1))
          yield* queue(storage, a.id, inputs)
          const later = "2099-01-01T00:00:00.000Z"
          yield* storage.recordSend(1, sent(t2), [])
          yield* storage.recordSend(2, { status: "pending", at: t2, next_attempt_at: later, last_error: "429" }, [])
          assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 10)), [2, 4])
          assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 1)), [2])
          assert.deepStrictEqual(yield* storage.nextSends(c.id, 10), [queuedSend(3, inputs[2]!)])
          assert.deepStrictEqual(yield* storage.nextSends(a.id, 10), [])
          assert.deepStrictEqual(yield* storage.nextSends(99, 10), [])

          yield* storage.recordSend(2, { status: "dead", at: t2, last_error: "403" }, [])
          assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 10)), [4])
          yield* storage.recordSend(4, sent(t2), [])
          assert.deepStrictEqual(yield* storage.nextSends(b.id, 10), [])
        }))

      test("recordSend records sent, pending and dead outcomes and counts every attempt", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const inputs = [newSend(b.id, a.id, 1), newSend(b.id, a.id, 2), newSend(b.id, a.id, 3)]
          yield* queue(storage, a.id, inputs)
          const find = (id: number) =>
            storage.listSends({ limit: 10 }).pipe(Effect.map((all) => all.find((r) => r.id === id)))

          const retryAt = "2025-03-04T05:07:07.000Z"
          yield* storage.recordSend(1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 500" }, [])
          yield* storage.recordSend(
            1,
            { status: "pending", at: t2, next_attempt_at: retryAt, last_error: "timeout" },
            []
          )
          const retried = {
            ...queuedSend(1, inputs[0]!),
            attempts: 2,
            next_attempt_at: retryAt,
            last_error: "timeout",
            updated_at: t2
          }
          assert.deepStrictEqual(yield* find(1), retried)
          const sentAt = "2025-03-04T05:08:00.000Z"
          yield* storage.recordSend(1, sent(sentAt), [])
          assert.deepStrictEqual(yield* find(1), {
            ...retried,
            status: "sent",
            attempts: 3,
            last_error: "",
            updated_at: sentAt
          })

          yield* storage.recordSend(2, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 502" }, [])
          const deadError = "Forbidden: bot was blocked by the user"
          yield* storage.recordSend(2, { status: "dead", at: sentAt, last_error: deadError }, [])
          assert.deepStrictEqual(yield* find(2), {
            ...queuedSend(2, inputs[1]!),
            status: "dead",
            attempts: 2,
            next_attempt_at: t2,
            last_error: deadError,
            updated_at: sentAt
          })

          yield* storage.recordSend(3, sent(t2), [])
          assert.deepStrictEqual(yield* find(3), {
            ...queuedSend(3, inputs[2]!),
            status: "sent",
            attempts: 1,
            updated_at: t2
          })
        }))

      test("recordSend adds the mappings with the attempt; an unknown id records nothing", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
          const first = newMapping(a.id, b.id, 10, { route_id: 7, source_chat_id: 101, source_message_id: 3, hop: 2 })
          const second = newMapping(a.id, b.id, 11, { reversible: false, target_chat_id: 201, created_at: t2 })
          yield* storage.recordSend(1, sent(t2), [first, second])
          assert.deepStrictEqual(yield* storage.findProduced(200, 10), Option.some({ id: 1, ...first }))
          assert.deepStrictEqual(yield* storage.findProduced(201, 11), Option.some({ id: 2, ...second }))
          assert.deepStrictEqual(yield* storage.findReverse(b.id, 200, 10, t0), Option.some({ id: 1, ...first }))

          yield* storage.recordSend(99, sent(t2), [newMapping(a.id, b.id, 12)])
          yield* storage.recordSend(99, { status: "dead", at: t2, last_error: "x" }, [newMapping(a.id, b.id, 12)])
          assert.isTrue(Option.isNone(yield* storage.findProduced(200, 12)))
          assert.deepStrictEqual(
            (yield* storage.listSends({ limit: 10 })).map((r) => [r.id, r.status, r.attempts]),
            [[1, "sent", 1]]
          )

          yield* storage.recordSend(1, sent(t2), [newMapping(a.id, b.id, 13)])
          assert.deepStrictEqual(yield* produced(storage, 200, 13), Option.some(3))
        }))

      test("listSends is newest first, filters by sending bot and status and honours the limit", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const c = yield* storage.insertBot(botInput(3))
          yield* queue(storage, a.id, [newSend(b.id, a.id, 1), newSend(b.id, a.id, 1), newSend(c.id, a.id, 1)])
          yield* queue(storage, c.id, [newSend(a.id, c.id, 1), newSend(b.id, c.id, 1)])
          yield* queue(storage, a.id, [newSend(b.id, a.id, 2)])
          yield* storage.recordSend(2, { status: "dead", at: t2, last_error: "x" }, [])
          yield* storage.recordSend(4, { status: "dead", at: t2, last_error: "x" }, [])
          yield* storage.recordSend(1, sent(t2), [])

          assert.deepStrictEqual(yield* sendIds(storage, { limit: 100 }), [6, 5, 4, 3, 2, 1])
          assert.deepStrictEqual(yield* sendIds(storage, { limit: 2 }), [6, 5])
          assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, limit: 100 }), [6, 5, 2, 1])
          assert.deepStrictEqual(yield* sendIds(storage, { bot_id: a.id, limit: 100 }), [4])
          assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, limit: 1 }), [6])
          assert.deepStrictEqual(yield* sendIds(storage, { status: "dead", limit: 100 }), [4, 2])
          assert.deepStrictEqual(yield* sendIds(storage, { status: "sent", limit: 100 }), [1])
          assert.deepStrictEqual(yield* sendIds(storage, { status: "pending", limit: 100 }), [6, 5, 3])
          assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, status: "pending", limit: 100 }), [6, 5])
          assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, status: "pending", limit: 1 }), [6])
          assert.deepStrictEqual(yield* sendIds(storage, { bot_id: c.id, status: "dead", limit: 100 }), [])
          assert.deepStrictEqual(yield* sendIds(storage, { bot_id: 99, limit: 100 }), [])
          const [newest] = yield* storage.listSends({ limit: 1 })
          assert.deepStrictEqual(newest, queuedSend(6, newSend(b.id, a.id, 2)))
        }))

      test("findReverse is the newest reversible mapping of the bot's message created since a time", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const c = yield* storage.insertBot(botInput(3))
          yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
          yield* storage.recordSend(1, sent(t2), [
            newMapping(a.id, b.id, 10, { created_at: t0 }),
            newMapping(a.id, b.id, 10, { route_id: 2, created_at: t1 }),
            newMapping(a.id, b.id, 10, { reversible: false, created_at: t2 }),
            newMapping(a.id, c.id, 10, { created_at: t1 }),
            newMapping(a.id, b.id, 11, { created_at: t1 }),
            newMapping(a.id, b.id, 10, { target_chat_id: 201, created_at: t1 })
          ])
          const reverse = (botId: number, chatId: number, messageId: number, since: string) =>
            storage.findReverse(botId, chatId, messageId, since).pipe(Effect.map(Option.map((m) => m.id)))

          assert.deepStrictEqual(
            yield* storage.findReverse(b.id, 200, 10, t0),
            Option.some({ id: 2, ...newMapping(a.id, b.id, 10, { route_id: 2, created_at: t1 }) })
          )
          assert.deepStrictEqual(yield* reverse(b.id, 200, 10, t1), Option.some(2))
          assert.isTrue(Option.isNone(yield* reverse(b.id, 200, 10, "2025-02-03T04:05:06.001Z")))
          assert.isTrue(Option.isNone(yield* reverse(b.id, 200, 10, t2)))
          assert.deepStrictEqual(yield* reverse(c.id, 200, 10, t0), Option.some(4))
          assert.deepStrictEqual(yield* reverse(b.id, 200, 11, t0), Option.some(5))
          assert.deepStrictEqual(yield* reverse(b.id, 201, 10, t0), Option.some(6))
          assert.isTrue(Option.isNone(yield* reverse(a.id, 200, 10, t0)))
          assert.isTrue(Option.isNone(yield* reverse(b.id, 200, 12, t0)))
          assert.isTrue(Option.isNone(yield* reverse(b.id, 202, 10, t0)))

          yield* storage.recordSend(1, sent(t2), [newMapping(a.id, b.id, 10, { created_at: t0 })])
          assert.deepStrictEqual(yield* reverse(b.id, 200, 10, t0), Option.some(7))
          assert.deepStrictEqual(yield* reverse(b.id, 200, 10, t1), Option.some(2))
        }))

      test("findProduced is the newest mapping of any bot whose target is the message", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const c = yield* storage.insertBot(botInput(3))
          yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
          assert.isTrue(Option.isNone(yield* storage.findProduced(200, 10)))
          const last = newMapping(b.id, c.id, 10, { reversible: false, created_at: t0 })
          yield* storage.recordSend(1, sent(t2), [
            newMapping(a.id, b.id, 10, { created_at: t2 }),
            last,
            newMapping(a.id, b.id, 10, { target_chat_id: 300 })
          ])
          assert.deepStrictEqual(yield* storage.findProduced(200, 10), Option.some({ id: 2, ...last }))
          assert.deepStrictEqual(yield* produced(storage, 300, 10), Option.some(3))
          assert.isTrue(Option.isNone(yield* storage.findProduced(200, 11)))
          assert.isTrue(Option.isNone(yield* storage.findProduced(100, 10)))
        }))

      test("pruneMappings deletes at most limit mappings created before the cutoff", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
          assert.strictEqual(yield* storage.pruneMappings(t2, 10), 0)
          yield* storage.recordSend(1, sent(t2), [
            newMapping(a.id, b.id, 1, { created_at: t0 }),
            newMapping(a.id, b.id, 2, { created_at: t1 }),
            newMapping(a.id, b.id, 3, { created_at: t0 }),
            newMapping(a.id, b.id, 4, { created_at: t2 }),
            newMapping(a.id, b.id, 5, { created_at: t0 })
          ])
          const left = Effect.forEach([1, 2, 3, 4, 5], (n) => produced(storage, 200, n)).pipe(
            Effect.map((found) => found.flatMap(Option.toArray))
          )
          assert.strictEqual(yield* storage.pruneMappings(t1, 2), 2)
          assert.strictEqual((yield* left).length, 3)
          assert.strictEqual(yield* storage.pruneMappings(t1, 2), 1)
          assert.deepStrictEqual(yield* left, [2, 4])
          assert.strictEqual(yield* storage.pruneMappings(t1, 2), 0)
          assert.strictEqual(yield* storage.pruneMappings(t2, 10), 1)
          assert.deepStrictEqual(yield* left, [4])
        }))

      test("pruneFinished deletes old sent route sends, at most limit, and keeps pending and dead ones", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const inputs = Array.from({ length: 7 }, (_, i) => newSend(b.id, a.id, i + 1, { created_at: t0 }))
          yield* queue(storage, a.id, inputs)
          yield* storage.recordSend(1, sent(t0), [])
          yield* storage.recordSend(2, { status: "dead", at: t0, last_error: "403" }, [])
          yield* storage.recordSend(3, { status: "pending", at: t0, next_attempt_at: t0, last_error: "429" }, [])
          yield* storage.recordSend(4, sent(t2), [])
          yield* storage.recordSend(5, sent(t0), [])
          yield* storage.recordSend(6, sent(t0), [])
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 0, deliveries: 0, sends: 2 })
          assert.deepStrictEqual(yield* sendIds(storage, { status: "sent", limit: 10 }), [6, 4])
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 0, deliveries: 0, sends: 1 })
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 0, deliveries: 0, sends: 0 })
          assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [7, 4, 3, 2])
          assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 10)), [3, 7])
        }))

      test("a send reads its payload from the receiving bot's inbox, and reads \"\" once the inbox dropped it", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const payload = "{\"update_id\":1,\"message\":{\"message_id\":1,\"text\":\"привет\"}}"
          yield* storage.commitUpdates(a.id, [update(1, { payload, received_at: t0 })], 2)
          yield* storage.completeUpdates([completion(a.id, 1, { sends: [newSend(b.id, a.id, 1)] })])
          assert.deepStrictEqual((yield* storage.nextSends(b.id, 10)).map((r) => r.payload), [payload])
          assert.deepStrictEqual(yield* storage.pruneFinished(t1, 10), { updates: 1, deliveries: 0, sends: 0 })
          assert.deepStrictEqual((yield* storage.nextSends(b.id, 10)).map((r) => r.payload), [""])
          assert.deepStrictEqual((yield* storage.listSends({ limit: 10 })).map((r) => r.payload), [""])
        }))

      test("botsWithWork includes bots with pending route sends only", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const c = yield* storage.insertBot(botInput(3))
          yield* queue(storage, a.id, [newSend(c.id, a.id, 1), newSend(b.id, a.id, 1)])
          assert.deepStrictEqual(yield* storage.botsWithWork, [b.id, c.id])
          yield* storage.recordSend(1, { status: "pending", at: t2, next_attempt_at: t2, last_error: "429" }, [])
          assert.deepStrictEqual(yield* storage.botsWithWork, [b.id, c.id])
          yield* storage.recordSend(1, sent(t2), [])
          assert.deepStrictEqual(yield* storage.botsWithWork, [b.id])
          yield* storage.recordSend(2, { status: "dead", at: t2, last_error: "403" }, [])
          assert.deepStrictEqual(yield* storage.botsWithWork, [])
          assert.strictEqual(yield* storage.backlog(b.id), 0)
        }))

      test("deleteBot removes the sends the bot makes and the mappings it is source or target of", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          const c = yield* storage.insertBot(botInput(3))
          yield* queue(storage, a.id, [newSend(b.id, a.id, 1), newSend(c.id, a.id, 1), newSend(b.id, a.id, 2)])
          yield* queue(storage, b.id, [newSend(c.id, b.id, 1)])
          yield* storage.recordSend(1, sent(t2), [newMapping(a.id, b.id, 1), newMapping(c.id, a.id, 4)])
          yield* storage.recordSend(2, sent(t2), [newMapping(a.id, c.id, 2), newMapping(b.id, c.id, 3)])

          assert.isTrue(yield* storage.deleteBot(b.id))
          assert.deepStrictEqual(yield* storage.listSends({ bot_id: b.id, limit: 10 }), [])
          assert.deepStrictEqual(yield* storage.nextSends(b.id, 10), [])
          assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [4, 2])
          assert.deepStrictEqual(yield* storage.botsWithWork, [c.id])
          assert.isTrue(Option.isNone(yield* storage.findProduced(200, 1)))
          assert.isTrue(Option.isNone(yield* storage.findProduced(200, 3)))
          assert.deepStrictEqual(yield* produced(storage, 200, 2), Option.some(3))
          assert.deepStrictEqual(yield* produced(storage, 200, 4), Option.some(2))
          assert.isTrue(Option.isNone(yield* storage.findReverse(b.id, 200, 1, t0)))

          const d = yield* storage.insertBot(botInput(4))
          yield* queue(storage, a.id, [newSend(d.id, a.id, 3)])
          assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [5, 4, 2])
        }))
    })

    describe("long-poll buffer", () => {
      const entry = (updateId: number, type = "message", createdAt = t1) => ({
        type,
        payload: `{"update_id":${updateId},"${type}":{"text":"привет 👋","big":123456789012345678901234567890}}`,
        created_at: createdAt
      })

      /** Commits the updates to the bot's inbox and completes them into its buffer. */
      const buffer = (
        storage: Storage.StorageService,
        botId: number,
        ...entries: ReadonlyArray<readonly [updateId: number, type?: string, createdAt?: string]>
      ) =>
        Effect.gen(function*() {
          yield* storage.commitUpdates(botId, entries.map(([id]) => update(id)), 0)
          yield* storage.completeUpdates(entries.map(([id, type, createdAt]) =>
            completion(botId, id, { buffer: entry(id, type, createdAt) })
          ))
        })

      const untouched = { allowed_updates: [], trimmed: 0, last_trimmed_at: "" }
      const all = { except: [] } as const
      const read = (storage: Storage.StorageService, botId: number, offset = 0, limit = 100) =>
        Effect.map(
          storage.readBuffered(botId, { offset, limit, types: all }),
          (updates) => updates.map((u) => u.update_id)
        )

      test("completeUpdates buffers an update with its completion, once, payload unchanged", (storage) =>
        Effect.gen(function*() {
          const a = yield* storage.insertBot(botInput(1))
          const b = yield* storage.insertBot(botInput(2))
          yield* storage.commitUpdates(a.id, [update(900_000_002), update(900_000_001), update(900_000_003)], 0)
          yield* storage.completeUpdates([
            completion(a.id, 900_000_002, { buffer: entry(900_000_002) }),
            completion(a.id, 900_000_001, { buffer: entry(900_000_001, "callback_query") }),
            completion(a.id, 900_000_003)
          ])
          yield* storage.completeUpdates([completion(a.id, 900_000_002, { buffer: entry(900_000_002, "poll") })])
          assert.deepStrictEqual(yield* storage.readBuffered(a.id, { offset: 0, limit: 100, types: all }), [
            { update_id: 900_000_001, payload: entry(900_000_001, "callback_query").payload },
            { update_id: 900_000_002, payload: entry(900_000_002).payload }
          ])
          assert.strictEqual(yield* storage.countBuffered(a.id), 2)
          assert.strictEqual(yield* storage.countBuffered(b.id), 0)
          assert.deepStrictEqual(yield* read(storage, b.id), [])
          assert.deepStrictEqual((yield* storage.pendingUpdates(a.id, 10)).length, 0)
        }))

      test("readBuffered reads from an offset, by update_id, at most limit, of the types let through", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          yield* buffer(
            storage,
            bot.id,
            [10, "message"],
            [11, "chat_member"],
            [12, "callback_query"],
            [13, "message_reaction"],
            [14, "message"],
            [15, ""]
          )
          assert.deepStrictEqual(yield* read(storage, bot.id), [10, 11, 12, 13, 14, 15])
          assert.deepStrictEqual(yield* read(storage, bot.id, 12), [12, 13, 14, 15])
          assert.deepStrictEqual(yield* read(storage, bot.id, 11, 2), [11, 12])
          assert.deepStrictEqual(yield* read(storage, bot.id, 16), [])
          const typed = (offset: number, limit: number, types: LongPoll.TypeFilter) =>
            Effect.map(storage.readBuffered(bot.id, { offset, limit, types }), (us) => us.map((u) => u.update_id))
          const telegramDefault = { except: ["chat_member", "message_reaction", "message_reaction_count"] }
          assert.deepStrictEqual(yield* typed(0, 100, telegramDefault), [10, 12, 14, 15])
          assert.deepStrictEqual(yield* typed(11, 2, telegramDefault), [12, 14])
          assert.deepStrictEqual(yield* typed(0, 100, { only: ["message"] }), [10, 14])
          assert.deepStrictEqual(yield* typed(0, 100, { only: ["chat_member", "callback_query"] }), [11, 12])
          assert.deepStrictEqual(yield* typed(0, 1, { only: ["message"] }), [10])
          assert.deepStrictEqual(yield* typed(11, 100, { only: ["message"] }), [14])
          assert.deepStrictEqual(yield* typed(0, 100, { only: [] }), [])
          assert.strictEqual(yield* storage.countBuffered(bot.id), 6)
        }))

      test("confirmBuffered, keepNewestBuffered and dropBuffered forget updates and say how many", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const other = yield* storage.insertBot(botInput(2))
          yield* buffer(storage, bot.id, [100], [101], [102], [103], [104], [105])
          yield* buffer(storage, other.id, [100], [101])
          assert.strictEqual(yield* storage.confirmBuffered(bot.id, 1), 0)
          assert.strictEqual(yield* storage.confirmBuffered(bot.id, 102), 2)
          assert.strictEqual(yield* storage.confirmBuffered(bot.id, 102), 0)
          assert.deepStrictEqual(yield* read(storage, bot.id), [102, 103, 104, 105])
          assert.strictEqual(yield* storage.keepNewestBuffered(bot.id, 10), 0)
          assert.strictEqual(yield* storage.keepNewestBuffered(bot.id, 3), 1)
          assert.deepStrictEqual(yield* read(storage, bot.id), [103, 104, 105])
          assert.strictEqual(yield* storage.keepNewestBuffered(bot.id, 1), 2)
          assert.deepStrictEqual(yield* read(storage, bot.id), [105])
          assert.strictEqual(yield* storage.dropBuffered(bot.id), 1)
          assert.strictEqual(yield* storage.dropBuffered(bot.id), 0)
          assert.strictEqual(yield* storage.countBuffered(bot.id), 0)
          assert.deepStrictEqual(yield* read(storage, other.id), [100, 101])
          assert.strictEqual((yield* storage.bufferState(bot.id)).trimmed, 0)
        }))

      test("trimBuffered keeps the newest max_updates and none older than before, and records the trim", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const other = yield* storage.insertBot(botInput(2))
          yield* buffer(storage, bot.id, [1, "message", t0], [2, "message", t0], [3, "message", t1], [4, "message", t1])
          yield* buffer(storage, bot.id, [5, "message", t2], [6, "message", t2], [7, "message", t2])
          yield* buffer(storage, other.id, [1, "message", t0])
          assert.deepStrictEqual(yield* storage.bufferState(bot.id), untouched)

          assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 10, before: t0, at: t1 }), 0)
          assert.deepStrictEqual(yield* storage.bufferState(bot.id), untouched)

          assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 5, before: t0, at: t1 }), 2)
          assert.deepStrictEqual(yield* read(storage, bot.id), [3, 4, 5, 6, 7])
          assert.deepStrictEqual(yield* storage.bufferState(bot.id), { ...untouched, trimmed: 2, last_trimmed_at: t1 })

          assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 4, before: t2, at: t2 }), 2)
          assert.deepStrictEqual(yield* read(storage, bot.id), [5, 6, 7])
          assert.deepStrictEqual(yield* storage.bufferState(bot.id), { ...untouched, trimmed: 4, last_trimmed_at: t2 })

          assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 1, before: t0, at: t2 }), 2)
          assert.deepStrictEqual(yield* read(storage, bot.id), [7])
          assert.strictEqual((yield* storage.bufferState(bot.id)).trimmed, 6)
          assert.deepStrictEqual(yield* read(storage, other.id), [1])
          assert.deepStrictEqual(yield* storage.bufferState(other.id), untouched)
        }))

      test("allowed_updates are remembered per bot and keep the trims", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const other = yield* storage.insertBot(botInput(2))
          assert.deepStrictEqual((yield* storage.bufferState(bot.id)).allowed_updates, [])
          yield* storage.setAllowedUpdates(bot.id, ["message", "callback_query"])
          assert.deepStrictEqual(yield* storage.bufferState(bot.id), {
            allowed_updates: ["message", "callback_query"],
            trimmed: 0,
            last_trimmed_at: ""
          })
          yield* buffer(storage, bot.id, [1, "message", t0], [2, "message", t1])
          yield* storage.trimBuffered(bot.id, { max_updates: 1, before: t0, at: t2 })
          yield* storage.setAllowedUpdates(bot.id, ["chat_member"])
          assert.deepStrictEqual(yield* storage.bufferState(bot.id), {
            allowed_updates: ["chat_member"],
            trimmed: 1,
            last_trimmed_at: t2
          })
          yield* storage.setAllowedUpdates(bot.id, [])
          assert.deepStrictEqual((yield* storage.bufferState(bot.id)).allowed_updates, [])
          assert.deepStrictEqual((yield* storage.bufferState(other.id)).allowed_updates, [])
        }))

      test("deleteBot removes the bot's buffer and its state", (storage) =>
        Effect.gen(function*() {
          const bot = yield* storage.insertBot(botInput(1))
          const other = yield* storage.insertBot(botInput(2))
          yield* buffer(storage, bot.id, [1], [2])
          yield* buffer(storage, other.id, [1])
          yield* storage.setAllowedUpdates(bot.id, ["message"])
          yield* storage.trimBuffered(bot.id, { max_updates: 1, before: t0, at: t1 })
          assert.isTrue(yield* storage.deleteBot(bot.id))
          assert.strictEqual(yield* storage.countBuffered(bot.id), 0)
          assert.deepStrictEqual(yield* storage.bufferState(bot.id), untouched)
          assert.deepStrictEqual(yield* read(storage, other.id), [1])
        }))
    })

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
          assert.deepStrictEqual(some(yield* storage.findApiKey(key.id)), { ...key, name: "key 1", bot_ids: [bot.id] })
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

    describe("settings", () => {
      test("are absent until written, then read back by name", (storage) =>
        Effect.gen(function*() {
          assert.deepStrictEqual(yield* storage.readSettings(["llm.model"]), {})
          assert.deepStrictEqual(yield* storage.readSettings([]), {})
          yield* storage.writeSettings({ "llm.model": "gpt-4o-mini", "llm.base_url": "http://x/v1" })
          assert.deepStrictEqual(yield* storage.readSettings(["llm.model", "llm.api_key"]), {
            "llm.model": "gpt-4o-mini"
          })
          assert.deepStrictEqual(yield* storage.readSettings(["llm.base_url", "llm.model"]), {
            "llm.base_url": "http://x/v1",
            "llm.model": "gpt-4o-mini"
          })
        }))

      test("are replaced, and forgotten when written as undefined", (storage) =>
        Effect.gen(function*() {
          yield* storage.writeSettings({ "llm.model": "a", "llm.api_key": "sk-1" })
          yield* storage.writeSettings({ "llm.model": "b", "llm.api_key": undefined, "llm.timeout_ms": "" })
          assert.deepStrictEqual(yield* storage.readSettings(["llm.model", "llm.api_key", "llm.timeout_ms"]), {
            "llm.model": "b",
            "llm.timeout_ms": ""
          })
        }))
    })

    test("ping succeeds", (storage) => storage.ping)
  })
}
