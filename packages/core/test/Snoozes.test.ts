import { assert, describe, it } from "@effect/vitest"
import { BotStore, Chat, ChatStore, Events, MessageStore, Snoozes } from "@botrelay/core"
import { Effect, Fiber, Layer, Logger, Option, Queue, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// Snoozed chats reopen on the TestClock when their time comes.

const layer = Layer.mergeAll(TestRuntime.storage, Events.layer)

describe("Snoozes.run", () => {
  it.effect("reopens a snoozed chat once its snoozed_until comes, publishing ChatChanged", () =>
    Effect.gen(function*() {
      const bots = yield* BotStore.BotStore
      const messages = yield* MessageStore.MessageStore
      const chats = yield* ChatStore.ChatStore
      const events = yield* Events.Events
      const bot = yield* bots.insertBot(TestRuntime.botInput("1:token", { manage_enabled: true }))
      yield* messages.saveMessage({
        id: 1,
        chat_id: 10,
        bot_id: bot.id,
        user_id: 10,
        username: "",
        first_name: "Ann",
        last_name: "",
        text: "hi",
        date: 1,
        direction: "in",
        edit_date: 0
      })
      const snoozed = { ...Chat.openConversation, status: "snoozed" as const, snoozed_until: 120 }
      assert.isTrue(yield* chats.replaceConversation(bot.id, 10, Chat.openConversation, snoozed))
      const changed = yield* events.subscribe("ChatChanged")
      const status = Effect.map(chats.findChat(bot.id, 10), (found) => Option.getOrThrow(found).status)

      const fiber = yield* Effect.fork(Snoozes.run({ interval: "15 seconds" }))
      yield* TestRuntime.until(() => false)
      yield* TestClock.adjust("105 seconds")
      yield* TestRuntime.until(() => false)
      assert.strictEqual(yield* status, "snoozed", "15 s before its time")
      assert.isTrue(Option.isNone(yield* Queue.poll(changed)))
      yield* TestClock.adjust("15 seconds")
      yield* TestRuntime.until(() => false)
      assert.strictEqual(yield* status, "open", "at its time")
      const event = yield* Queue.take(changed)
      assert.deepInclude(event, { bot_id: bot.id, chat_id: 10 })
      yield* TestClock.adjust("1 minute")
      yield* TestRuntime.until(() => false)
      assert.isTrue(Option.isNone(yield* Queue.poll(changed)), "reopened once")
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(layer), Effect.scoped, Effect.provide(Logger.remove(Logger.defaultLogger))))
})
