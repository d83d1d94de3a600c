import { assert, describe, it } from "@effect/vitest"
import { Events, Inbox } from "@botrelay/core"
import { Chunk, Effect, Layer, Option, Queue, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

const botInput = TestRuntime.botInput("7:token", { manage_enabled: true })

const update = (id: number) => ({ update_id: id, payload: `{"update_id":${id},"message":{}}` })

const layer = Inbox.layer.pipe(Layer.provideMerge(Layer.merge(TestRuntime.storage, Events.layer)))

const lastUpdateAt = (botId: number) =>
  Effect.flatMap(TestRuntime.store, (storage) => storage.findBot(botId)).pipe(
    Effect.map((bot) => Option.getOrThrow(bot).last_update_at)
  )

describe("Inbox.accept", () => {
  it.scoped("stores new updates with the offset, skips ones it holds, and tells the bus each time", () =>
    Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const inbox = yield* Inbox.Inbox
      const events = yield* (yield* Events.Events).subscribe("UpdatesReceived")
      const bot = yield* storage.insertBot(botInput)

      assert.strictEqual(yield* inbox.accept(bot.id, [update(10), update(11)], 12), 2)
      assert.strictEqual(yield* inbox.offset(bot.id), 12)
      assert.strictEqual(yield* inbox.accept(bot.id, [update(11), update(12)], 0), 1)
      assert.strictEqual(yield* inbox.offset(bot.id), 12)
      assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [10, 11, 12])
      assert.strictEqual(yield* inbox.accept(bot.id, [], 50), 0)
      assert.strictEqual(yield* inbox.offset(bot.id), 12)

      const published = Chunk.toReadonlyArray(yield* Queue.takeAll(events))
      assert.deepStrictEqual(published, [
        Events.Event.UpdatesReceived({ bot_id: bot.id }),
        Events.Event.UpdatesReceived({ bot_id: bot.id })
      ])
    }).pipe(Effect.provide(layer)))

  it.effect("records last_update_at at most once a second per bot", () =>
    Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const inbox = yield* Inbox.Inbox
      const bot = yield* storage.insertBot(botInput)
      yield* TestClock.setTime(Date.parse("2025-06-01T00:00:00.000Z"))

      yield* inbox.accept(bot.id, [update(1)], 2)
      assert.strictEqual(yield* lastUpdateAt(bot.id), "2025-06-01T00:00:00.000Z")
      yield* TestClock.adjust("999 millis")
      yield* inbox.accept(bot.id, [update(2)], 3)
      assert.strictEqual(yield* lastUpdateAt(bot.id), "2025-06-01T00:00:00.000Z")
      yield* TestClock.adjust("1 millis")
      yield* inbox.accept(bot.id, [update(3)], 4)
      assert.strictEqual(yield* lastUpdateAt(bot.id), "2025-06-01T00:00:01.000Z")
    }).pipe(Effect.provide(layer)))
})
