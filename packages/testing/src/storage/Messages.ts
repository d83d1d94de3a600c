import { BotStore, MessageStore, TagStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Runner, botInput, message, tagInput, ids } from "./Fixtures.js"

/** The conformance tests for the message history. */
export const messages = (run: Runner): void => {
  const test = run(BotStore.BotStore, MessageStore.MessageStore, TagStore.TagStore)
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
        assert.deepStrictEqual(page.map((m) => [m.id, m.deleted]), [[3, true], [2, undefined], [1, true]])
        assert.deepStrictEqual(
          yield* storage.findMessage(a.id, 10, 3),
          Option.some(message(a.id, 10, 3, { deleted: true }))
        )
        assert.notProperty((yield* storage.listMessages({ bot_id: a.id, chat_id: 11, limit: 50, offset: 0 }))[0]!, "deleted")
        assert.notProperty((yield* storage.listMessages({ bot_id: b.id, chat_id: 10, limit: 50, offset: 0 }))[0]!, "deleted")
        assert.strictEqual(yield* storage.markMessagesDeleted(a.id, 10, []), 0)
        assert.strictEqual(yield* storage.markMessagesDeleted(a.id, 12, [1]), 0)
      }))

    test("hasFile tells whether a bot's history, in any chat, holds a message with the file", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.saveMessage(message(a.id, -100, 1, { media_type: "document", file_id: "BQAC-doc" }))
        yield* storage.saveMessage(message(a.id, 10, 2, { media_type: "photo", file_id: "AgAC-photo", deleted: true }))
        yield* storage.saveMessage(message(a.id, 10, 3, { text: "BQAC-doc" }))
        yield* storage.saveMessage(message(b.id, 10, 1, { media_type: "voice", file_id: "AwAC-voice" }))
        assert.isTrue(yield* storage.hasFile(a.id, "BQAC-doc"))
        assert.isTrue(yield* storage.hasFile(a.id, "AgAC-photo"))
        assert.isFalse(yield* storage.hasFile(a.id, "AwAC-voice"))
        assert.isTrue(yield* storage.hasFile(b.id, "AwAC-voice"))
        assert.isFalse(yield* storage.hasFile(b.id, "BQAC-doc"))
        assert.isFalse(yield* storage.hasFile(a.id, "bqac-doc"))
        assert.isFalse(yield* storage.hasFile(a.id, ""))
        assert.isFalse(yield* storage.hasFile(99, "BQAC-doc"))
      }))

    test("a saved message carries its deleted flag; saving it again replaces the flag too", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const gone = message(bot.id, 10, 1, { deleted: true })
        yield* storage.saveMessage(gone)
        assert.deepStrictEqual(yield* storage.findMessage(bot.id, 10, 1), Option.some(gone))
        yield* storage.saveMessage(message(bot.id, 10, 1, { text: "again" }))
        assert.notProperty(Option.getOrThrow(yield* storage.findMessage(bot.id, 10, 1)), "deleted")
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
}
