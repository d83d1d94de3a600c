import { assert, describe, it } from "@effect/vitest"
import { LongPoll, Pipeline } from "@botrelay/core"
import { Clock, Effect, Fiber, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// Held getUpdates and buffer retention against the TestClock: exact deadlines, conflicts, and the age boundary.
// (LongPoll.test.ts covers the getUpdates parameters, the clamped 50 s timeout and retention by count.)

const botInput = (n: number) => TestRuntime.botInput(`${n}:token`, { long_poll_enabled: true })

const setup = (options: LongPoll.Options = LongPoll.defaults) =>
  Effect.gen(function*() {
    const storage = yield* TestRuntime.store
    const longPoll = yield* LongPoll.make(options)
    let next = 900_000_001
    /** A bot with long polling; `arrive` buffers updates of the given types as the pipeline does. */
    const bot = (n: number) =>
      Effect.gen(function*() {
        const stored = yield* storage.insertBot(botInput(n))
        const arrive = (...types: ReadonlyArray<string>) =>
          Effect.gen(function*() {
            const received_at = new Date(yield* Clock.currentTimeMillis).toISOString()
            const updates = types.map((type) => {
              const update_id = next++
              return { update_id, payload: `{"update_id":${update_id},"${type}":{}}`, received_at }
            })
            yield* storage.commitUpdates(stored.id, updates, next)
            yield* Pipeline.drain(stored.id, { current: () => stored })
            yield* TestRuntime.followed
            return updates.map((u) => u.update_id)
          })
        const poll = (params: LongPoll.GetUpdates) =>
          Effect.map(longPoll.getUpdates(stored, params), (updates) => updates.map((u) => u.update_id))
        /** Lets forked polls run until `count` of the bot's polls wait. */
        const waiting = (count: number) =>
          Effect.gen(function*() {
            yield* TestRuntime.until(() => longPoll.waiting(stored.id) === count)
            assert.strictEqual(longPoll.waiting(stored.id), count)
          })
        return { id: stored.id, arrive, poll, waiting }
      })
    return { storage, longPoll, bot }
  })

describe("LongPoll on a TestClock", () => {
  it.scoped("a held poll ends empty exactly at its timeout; wake-ups it skips do not extend it", () =>
    Effect.provide(
      Effect.gen(function*() {
        const { bot } = yield* setup()
        const one = yield* bot(1)
        const poll = yield* Effect.fork(one.poll({ timeout: 10, allowed_updates: ["message"] }))
        yield* one.waiting(1)
        yield* TestClock.adjust("6 seconds")
        yield* one.arrive("callback_query")
        yield* one.waiting(1)
        yield* TestClock.adjust("3999 millis")
        assert.isNull(poll.unsafePoll(), "still held 1 ms before the deadline")
        yield* TestClock.adjust("1 millis")
        assert.deepStrictEqual(yield* Fiber.join(poll), [])
        assert.strictEqual(yield* Clock.currentTimeMillis, 10_000)
      }),
      TestRuntime.stores
    ))

  it.scoped("a held poll ends at the moment an update arrives, well before its timeout", () =>
    Effect.provide(
      Effect.gen(function*() {
        const { bot } = yield* setup()
        const one = yield* bot(1)
        const poll = yield* Effect.fork(Effect.zip(one.poll({ timeout: 30 }), Clock.currentTimeMillis))
        yield* one.waiting(1)
        yield* TestClock.adjust("12 seconds")
        assert.isNull(poll.unsafePoll())
        const sent = yield* one.arrive("message")
        assert.deepStrictEqual(yield* Fiber.join(poll), [sent, 12_000])
      }),
      TestRuntime.stores
    ))

  it.scoped("a newer poll ends the older with PollConflict before its timeout, then holds for its own", () =>
    Effect.provide(
      Effect.gen(function*() {
        const { bot } = yield* setup()
        const one = yield* bot(1)
        const older = yield* Effect.fork(Effect.either(one.poll({ timeout: 30 })))
        yield* one.waiting(1)
        yield* TestClock.adjust("10 seconds")
        const newer = yield* Effect.fork(one.poll({ timeout: 5 }))
        const conflict = yield* Fiber.join(older)
        assert.strictEqual(conflict._tag === "Left" && conflict.left._tag, "PollConflict")
        assert.strictEqual(yield* Clock.currentTimeMillis, 10_000)
        yield* one.waiting(1)
        yield* TestClock.adjust("4999 millis")
        assert.isNull(newer.unsafePoll())
        yield* TestClock.adjust("1 millis")
        assert.deepStrictEqual(yield* Fiber.join(newer), [])
      }),
      TestRuntime.stores
    ))

  it.scoped("polls of different bots neither end nor answer each other", () =>
    Effect.provide(
      Effect.gen(function*() {
        const { bot } = yield* setup()
        const one = yield* bot(1)
        const two = yield* bot(2)
        const first = yield* Effect.fork(one.poll({ timeout: 20 }))
        const second = yield* Effect.fork(two.poll({ timeout: 20 }))
        yield* one.waiting(1)
        yield* two.waiting(1)
        const sent = yield* two.arrive("message")
        assert.deepStrictEqual(yield* Fiber.join(second), sent)
        assert.isNull(first.unsafePoll())
        yield* one.waiting(1)
        yield* TestClock.adjust("20 seconds")
        assert.deepStrictEqual(yield* Fiber.join(first), [])
      }),
      TestRuntime.stores
    ))

  it.scoped("an update is kept until it is exactly maxAge old and trimmed 1 ms later, counted once", () =>
    Effect.provide(
      Effect.gen(function*() {
        const { bot, longPoll, storage } = yield* setup({ maxUpdates: 100, maxAge: "1 hour" })
        const one = yield* bot(1)
        const [early] = yield* one.arrive("message")
        yield* TestClock.adjust("30 minutes")
        const [late] = yield* one.arrive("message")
        yield* TestClock.adjust("30 minutes")
        assert.deepStrictEqual(yield* one.poll({}), [early, late])
        yield* TestClock.adjust("1 millis")
        assert.deepStrictEqual(yield* one.poll({}), [late])
        assert.deepStrictEqual(yield* one.poll({}), [late])
        assert.strictEqual((yield* storage.bufferState(one.id)).trimmed, 1)
        yield* TestClock.adjust("30 minutes")
        assert.deepStrictEqual(yield* one.poll({}), [])
        const status = yield* longPoll.status(one.id)
        assert.strictEqual(status.trimmed, 2)
        assert.strictEqual(status.last_trimmed_date, 5_400)
      }),
      TestRuntime.stores
    ))
})
