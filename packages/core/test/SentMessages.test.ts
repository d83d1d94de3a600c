import { assert, describe, it } from "@effect/vitest"
import { ChatStore, Events, SentMessages } from "@botrelay/core"
import { Chunk, Effect, Option, Queue, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

const botInput = (token: string, manage_enabled: boolean) => TestRuntime.botInput(token, { manage_enabled })

const sent = (id: number, text: string) => ({
  message_id: id,
  date: 1_750_000_000,
  chat: { id: 42, type: "private" },
  from: { id: 7, is_bot: true, first_name: "bot" },
  text
})

const history = (botId: number) =>
  Effect.flatMap(TestRuntime.store, (storage) => storage.listMessages({ bot_id: botId, chat_id: 42, limit: 10, offset: 0 }))

describe("SentMessages.capture", () => {
  it.effect("keeps a bot's sends when it has manage_enabled, and what the API sent always", () =>
    Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const managed = yield* storage.insertBot(botInput("7:managed", true))
      const plain = yield* storage.insertBot(botInput("8:plain", false))
      for (const origin of ["tgapi", "reply", "route"] as const) {
        yield* SentMessages.capture([{ bot: plain, method: "sendmessage", params: {}, result: sent(1, origin) }], origin)
        yield* SentMessages.capture([{ bot: managed, method: "sendmessage", params: {}, result: sent(2, origin) }], origin)
        assert.isFalse(SentMessages.keeps(plain, origin))
      }
      assert.deepStrictEqual(yield* history(plain.id), [])
      assert.deepStrictEqual((yield* history(managed.id)).map((m) => [m.id, m.text, m.direction]), [[2, "route", "out"]])

      yield* SentMessages.captureSent(plain, [sent(3, "from the API")], "api")
      assert.deepStrictEqual((yield* history(plain.id)).map((m) => [m.id, m.text]), [[3, "from the API"]])
    }).pipe(Effect.provide(TestRuntime.stores)))

  it.effect("a reply that deletes marks the stored message deleted; answers that are not messages change nothing", () =>
    Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const bot = yield* storage.insertBot(botInput("7:managed", true))
      yield* SentMessages.captureSent(bot, [sent(5, "hello")], "reply")
      yield* SentMessages.capture([{ bot, method: "deletemessage", params: { chat_id: 42, message_id: 5 }, result: true }], "reply")
      yield* SentMessages.capture([{ bot, method: "sendmessage", params: {}, result: { not: "a message" } }], "reply")
      assert.deepStrictEqual((yield* history(bot.id)).map((m) => [m.id, m.deleted]), [[5, true]])
    }).pipe(Effect.provide(TestRuntime.stores)))

  it.scoped("tells the bus what it recorded: sent, edited and deleted messages, each with its chat", () =>
    Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const bus = yield* Events.Events
      const heard = yield* bus.subscribe("MessagesStored", "MessageEdited", "MessagesDeleted", "ChatChanged")
      const bot = yield* storage.insertBot(botInput("7:managed", true))
      const plain = yield* storage.insertBot(botInput("8:plain", false))
      yield* SentMessages.capture([{ bot: plain, method: "sendmessage", params: {}, result: sent(1, "not kept") }], "tgapi")
      yield* SentMessages.captureSent(bot, [sent(5, "hello")], "tgapi")
      yield* SentMessages.capture([{
        bot,
        method: "editmessagetext",
        params: {},
        result: { ...sent(5, "hello again"), edit_date: 1_750_000_100 }
      }], "tgapi")
      yield* SentMessages.capture([{ bot, method: "deletemessage", params: { chat_id: 42, message_id: 5 }, result: true }], "tgapi")
      const events = Chunk.toReadonlyArray(yield* Queue.takeAll(heard)).map((e) => {
        switch (e._tag) {
          case "MessagesStored":
            return [e._tag, e.bot_id, e.messages.map((m) => m.text)]
          case "MessageEdited":
            return [e._tag, e.bot_id, e.message.text, e.message.edit_date]
          case "MessagesDeleted":
            return [e._tag, e.bot_id, e.chat_id, e.message_ids]
          case "ChatChanged":
            return [e._tag, e.bot_id, e.chat_id]
        }
      })
      assert.deepStrictEqual(events, [
        ["MessagesStored", bot.id, ["hello"]],
        ["ChatChanged", bot.id, 42],
        ["MessageEdited", bot.id, "hello again", 1_750_000_100],
        ["ChatChanged", bot.id, 42],
        ["MessagesDeleted", bot.id, 42, [5]],
        ["ChatChanged", bot.id, 42]
      ])
    }).pipe(Effect.provide(TestRuntime.stores)))

  it.scoped("records a chat before it tells of the messages sent to it", () =>
    Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const chats = yield* ChatStore.ChatStore
      const bus = yield* Events.Events
      const bot = yield* storage.insertBot(botInput("7:managed", true))
      const seen: Array<string> = []
      yield* bus.listen(["MessagesStored"], (event) => {
        const chat = Effect.runSync(chats.findChat(event.bot_id, 42))
        seen.push(Option.match(chat, { onNone: () => "no chat", onSome: (c) => c.username }))
      })
      const named = { ...sent(10, "named"), chat: { id: 42, type: "private", first_name: "Ann", username: "ann" } }
      yield* SentMessages.capture([{ bot, method: "sendmessage", params: {}, result: named }], "tgapi")
      assert.deepStrictEqual(seen, ["ann"])
    }).pipe(Effect.provide(TestRuntime.stores)))

  it.effect("records the chats the answers show; a send through the API marks its chat read", () =>
    Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const chats = yield* ChatStore.ChatStore
      const bot = yield* storage.insertBot(botInput("7:managed", true))
      yield* storage.saveMessages([1, 2].map((id) => ({
        id,
        chat_id: 42,
        bot_id: bot.id,
        user_id: 42,
        username: "",
        first_name: "Ann",
        last_name: "",
        text: "hi",
        date: 1_700_000_000,
        direction: "in" as const,
        edit_date: 0
      })))
      const named = { ...sent(10, "named"), chat: { id: 42, type: "private", first_name: "Ann", username: "ann" } }
      yield* SentMessages.capture([{ bot, method: "sendmessage", params: {}, result: named }], "tgapi")
      let chat = Option.getOrThrow(yield* chats.findChat(bot.id, 42))
      assert.deepStrictEqual([chat.first_name, chat.username, chat.unread_count, chat.message_count], ["Ann", "ann", 2, 3])
      yield* TestClock.setTime(1_750_000_100_000)
      yield* SentMessages.captureSent(bot, [sent(11, "reply")], "api")
      chat = Option.getOrThrow(yield* chats.findChat(bot.id, 42))
      assert.deepStrictEqual([chat.unread_count, chat.message_count, chat.last_message?.id], [0, 4, 11])
    }).pipe(Effect.provide(TestRuntime.stores)))
})
