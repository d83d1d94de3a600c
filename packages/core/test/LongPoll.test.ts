import { assert, describe, it } from "@effect/vitest"
import { BotStore, BufferStore, Events, InboxStore, LongPoll, Pipeline, type Stores } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import type { Scope } from "effect"
import * as TestRuntime from "./TestRuntime.js"
import { Clock, Effect, Exit, Fiber, Layer, Logger, TestClock } from "effect"

const botInput = (n: number, longPoll = true) => TestRuntime.botInput(`${n}:token`, { long_poll_enabled: longPoll })

const first = 900_000_001

/** One turn of the event loop: SQLite commits writes on the next turn. */
const nextTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Lets the buffer's event subscription take what the pipeline published, and its writes commit. */
const followed = Effect.repeatN(nextTurn, 2)

const setup = (options: LongPoll.Options = LongPoll.defaults) =>
  Effect.gen(function*() {
    const storage = { ...yield* BotStore.BotStore, ...yield* InboxStore.InboxStore, ...yield* BufferStore.BufferStore }
    const longPoll = yield* LongPoll.make(options)
    const bot = yield* storage.insertBot(botInput(1))
    /** Telegram sends updates of these types; the pipeline processes them into the buffer. */
    const arrive = (...types: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const held = yield* storage.ingressOffset(bot.id)
        const next = Math.max(held, first)
        const updates = types.map((type, i) => ({
          update_id: next + i,
          payload: `{"update_id":${next + i},"${type}":{"n":${next + i}}}`,
          received_at: new Date(now).toISOString()
        }))
        yield* storage.commitUpdates(bot.id, updates, next + types.length)
        yield* Pipeline.drain(bot.id, { current: () => bot })
        yield* followed
        return updates.map((u) => u.update_id)
      })
    const ids = (params: LongPoll.GetUpdates) =>
      Effect.map(longPoll.getUpdates(bot, params), (updates) => updates.map((u) => u.update_id))
    /** Lets forked polls run (whole event-loop turns: the stores commit writes in one) until one of the bot's polls waits. */
    const untilWaiting = Effect.gen(function*() {
      for (let i = 0; i < 1000 && longPoll.waiting(bot.id) === 0; i++) yield* nextTurn
      assert.strictEqual(longPoll.waiting(bot.id), 1)
    })
    return { storage, longPoll, bot, arrive, ids, untilWaiting }
  })

const stores = Layer.merge(SqliteStores.layer({ filename: ":memory:" }), Events.layer)

const run = <A, E>(effect: Effect.Effect<A, E, Stores.Stores | Events.Events | Scope.Scope>) =>
  effect.pipe(Effect.scoped, Effect.provide(stores))

describe("LongPoll", () => {
  it.effect("offset confirms everything below it; 0 and 1 confirm nothing", () =>
    run(Effect.gen(function*() {
      const { arrive, ids, longPoll, bot } = yield* setup()
      const [a, b, c] = yield* arrive("message", "message", "edited_message")
      assert.deepStrictEqual(yield* ids({}), [a, b, c])
      assert.deepStrictEqual(yield* ids({ offset: 0 }), [a, b, c])
      assert.deepStrictEqual(yield* ids({ offset: 1 }), [a, b, c])
      assert.deepStrictEqual(yield* ids({ offset: b! }), [b, c])
      assert.deepStrictEqual(yield* ids({}), [b, c])
      assert.strictEqual((yield* longPoll.status(bot.id)).pending, 2)
      assert.deepStrictEqual(yield* ids({ offset: c! + 1 }), [])
      assert.strictEqual((yield* longPoll.status(bot.id)).pending, 0)
    })))

  it.effect("the payload is returned exactly as Telegram sent it", () =>
    run(Effect.gen(function*() {
      const { storage, longPoll, bot } = yield* setup()
      const payload = `{"update_id":${first},  "message":{"text":"привет 👋","id":12345678901234567890123}}`
      yield* storage.commitUpdates(bot.id, [{ update_id: first, payload, received_at: "" }], first + 1)
      yield* Pipeline.drain(bot.id, { current: () => bot })
      assert.deepStrictEqual(yield* longPoll.getUpdates(bot, {}), [{ update_id: first, payload }])
    })))

  it.effect("a negative offset returns the last updates and forgets the earlier ones", () =>
    run(Effect.gen(function*() {
      const { arrive, ids, longPoll, bot } = yield* setup()
      const sent = yield* arrive("message", "message", "message", "message", "message")
      assert.deepStrictEqual(yield* ids({ offset: -2 }), sent.slice(3))
      assert.strictEqual((yield* longPoll.status(bot.id)).pending, 2)
      assert.deepStrictEqual(yield* ids({ offset: -5 }), sent.slice(3))
      assert.deepStrictEqual(yield* ids({ offset: -2, limit: 1 }), sent.slice(3, 4))
      assert.deepStrictEqual(yield* ids({}), sent.slice(3))
    })))

  it.effect("limit is clamped to 1..100 and defaults to 100", () =>
    run(Effect.gen(function*() {
      const { arrive, ids } = yield* setup()
      const sent = [...yield* arrive(...Array.from({ length: 60 }, () => "message")), ...yield* arrive(
        ...Array.from({ length: 60 }, () => "message")
      )]
      assert.deepStrictEqual(yield* ids({}), sent.slice(0, 100))
      assert.deepStrictEqual(yield* ids({ limit: 500 }), sent.slice(0, 100))
      assert.deepStrictEqual(yield* ids({ limit: 0 }), sent.slice(0, 1))
      assert.deepStrictEqual(yield* ids({ limit: -4 }), sent.slice(0, 1))
      assert.deepStrictEqual(yield* ids({ limit: 3 }), sent.slice(0, 3))
      assert.deepStrictEqual(yield* ids({ limit: 2.9 }), sent.slice(0, 2))
    })))

  it.effect("a held request is answered as soon as an update is buffered", () =>
    run(Effect.gen(function*() {
      const { arrive, ids, untilWaiting, longPoll, bot } = yield* setup()
      const poll = yield* Effect.fork(ids({ timeout: 30 }))
      yield* untilWaiting
      const sent = yield* arrive("message")
      assert.deepStrictEqual(yield* Fiber.join(poll), sent)
      assert.strictEqual(longPoll.waiting(bot.id), 0)
    })))

  it.effect("a held request ends empty after its timeout, clamped to 50 s; timeout 0 answers at once", () =>
    run(Effect.gen(function*() {
      const { ids, untilWaiting } = yield* setup()
      assert.deepStrictEqual(yield* ids({ timeout: 0 }), [])
      const poll = yield* Effect.fork(ids({ timeout: 600 }))
      yield* untilWaiting
      yield* TestClock.adjust("49 seconds")
      assert.isNull(poll.unsafePoll())
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Fiber.join(poll), [])
    })))

  it.effect("a newer getUpdates ends the pending one with PollConflict at once", () =>
    run(Effect.gen(function*() {
      const { arrive, ids, untilWaiting, longPoll, bot } = yield* setup()
      const older = yield* Effect.fork(ids({ timeout: 30 }))
      yield* untilWaiting
      assert.deepStrictEqual(yield* ids({ offset: 5, limit: 1, timeout: 0 }), [])
      const exit = yield* Fiber.await(older)
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(Fiber.join(older))
      assert.strictEqual(error._tag, "PollConflict")
      assert.include(error.message, "terminated by other getUpdates request")
      assert.strictEqual(longPoll.waiting(bot.id), 0)
      const sent = yield* arrive("message")
      assert.deepStrictEqual(yield* ids({}), sent)
    })))

  it.effect("a start followed late ends a pending poll only when another instance made it", () =>
    run(Effect.gen(function*() {
      const { ids, untilWaiting, bot } = yield* setup()
      const bus = yield* Events.Events
      const pending = yield* Effect.fork(ids({ timeout: 30 }))
      yield* untilWaiting
      yield* bus.publish(Events.Event.LongPollStarted({ bot_id: bot.id, poll: "an earlier poll of this instance" }))
      yield* followed
      assert.isNull(pending.unsafePoll())
      yield* bus.receive(Events.Event.LongPollStarted({ bot_id: bot.id, poll: "a poll of another instance" }))
      yield* followed
      const error = yield* Effect.flip(Fiber.join(pending))
      assert.strictEqual(error._tag, "PollConflict")
    })))

  it.effect("an interrupted request leaves no waiter behind", () =>
    run(Effect.gen(function*() {
      const { arrive, ids, untilWaiting, longPoll, bot } = yield* setup()
      const poll = yield* Effect.fork(ids({ timeout: 30 }))
      yield* untilWaiting
      yield* Fiber.interrupt(poll)
      assert.strictEqual(longPoll.waiting(bot.id), 0)
      const sent = yield* arrive("message")
      assert.deepStrictEqual(yield* ids({ timeout: 30 }), sent)
    })))

  it.effect("allowed_updates is remembered; [] means all but chat_member and reactions; skipped ones confirmed", () =>
    run(Effect.gen(function*() {
      const { arrive, ids, untilWaiting, longPoll, bot } = yield* setup()
      const [message, member, callback, reaction, count] = yield* arrive(
        "message",
        "chat_member",
        "callback_query",
        "message_reaction",
        "message_reaction_count"
      )
      assert.deepStrictEqual(yield* ids({}), [message, callback])
      assert.deepStrictEqual(yield* ids({ allowed_updates: ["chat_member", "message_reaction"] }), [member, reaction])
      assert.deepStrictEqual(yield* ids({}), [member, reaction])
      assert.deepStrictEqual((yield* longPoll.status(bot.id)).allowed_updates, ["chat_member", "message_reaction"])
      assert.deepStrictEqual(yield* ids({ allowed_updates: [] }), [message, callback])
      assert.deepStrictEqual(yield* ids({ offset: callback! + 1 }), [])
      assert.strictEqual((yield* longPoll.status(bot.id)).pending, 2)
      assert.deepStrictEqual(yield* ids({ allowed_updates: ["message_reaction_count"] }), [count])

      const poll = yield* Effect.fork(ids({ allowed_updates: ["message"], timeout: 30 }))
      yield* untilWaiting
      yield* arrive("callback_query")
      yield* untilWaiting
      const [next] = yield* arrive("message")
      assert.deepStrictEqual(yield* Fiber.join(poll), [next])
    })))

  it.effect("a bot without long_poll_enabled gets LongPollDisabled and buffers nothing", () =>
    run(Effect.gen(function*() {
      const { storage, longPoll } = yield* setup()
      const off = yield* storage.insertBot(botInput(2, false))
      const update = { update_id: 5, payload: `{"update_id":5,"message":{}}`, received_at: "" }
      yield* storage.commitUpdates(off.id, [update], 6)
      yield* Pipeline.drain(off.id, { current: () => off })
      yield* followed
      assert.strictEqual(yield* storage.countBuffered(off.id), 0)
      const error = yield* Effect.flip(longPoll.getUpdates(off, {}))
      assert.strictEqual(error._tag, "LongPollDisabled")
      assert.include(error.message, "long_poll_enabled")
    })))

  it.effect("retention trims by count on write and by age on read, reports it in status and logs it", () =>
    Effect.gen(function*() {
      const logs: Array<{ readonly message: unknown; readonly level: string; readonly annotations: unknown }> = []
      const logger = Logger.make(({ annotations, logLevel, message }) =>
        void logs.push({ message, level: logLevel.label, annotations: Object.fromEntries(annotations) })
      )
      yield* Effect.gen(function*() {
        const { arrive, ids, longPoll, bot } = yield* setup({ maxUpdates: 3, maxAge: "1 hour" })
        yield* TestClock.setTime(Date.parse("2025-06-01T00:00:00.000Z"))
        const sent = yield* arrive("message", "message", "message", "message", "message")
        assert.deepStrictEqual(yield* longPoll.status(bot.id), {
          pending: 3,
          trimmed: 2,
          last_trimmed_date: Date.parse("2025-06-01T00:00:00.000Z") / 1000,
          allowed_updates: []
        })
        assert.deepStrictEqual(yield* ids({}), sent.slice(2))
        const warning = logs.find((l) => l.level === "WARN")
        assert.isDefined(warning)
        assert.include(String(warning.message), "dropped 2 unconfirmed updates")
        assert.deepInclude(warning.annotations as object, { bot_id: bot.id, dropped: 2 })
        assert.notInclude(JSON.stringify(logs), "token")

        yield* TestClock.adjust("2 hours")
        const [fresh] = yield* arrive("message")
        assert.deepStrictEqual(yield* ids({}), [fresh])
        const status = yield* longPoll.status(bot.id)
        assert.strictEqual(status.trimmed, 5)
        assert.strictEqual(status.last_trimmed_date, Date.parse("2025-06-01T02:00:00.000Z") / 1000)
        yield* TestClock.adjust("61 minutes")
        assert.strictEqual((yield* longPoll.status(bot.id)).pending, 0)
        assert.strictEqual((yield* longPoll.status(bot.id)).trimmed, 6)
      }).pipe(Effect.scoped, Effect.provide(Layer.merge(stores, Logger.replace(Logger.defaultLogger, logger))))
    }))

  it.effect("shutdown answers pending requests at once and holds no new ones", () =>
    run(Effect.gen(function*() {
      const { ids, untilWaiting, longPoll, bot } = yield* setup()
      const poll = yield* Effect.fork(ids({ timeout: 30 }))
      yield* untilWaiting
      yield* longPoll.shutdown
      assert.deepStrictEqual(yield* Fiber.join(poll), [])
      assert.deepStrictEqual(yield* ids({ timeout: 30 }), [])
      assert.strictEqual(longPoll.waiting(bot.id), 0)
    })))

  it.effect("drop forgets every buffered update without counting it as trimmed", () =>
    run(Effect.gen(function*() {
      const { arrive, ids, longPoll, bot } = yield* setup()
      yield* arrive("message", "message")
      yield* longPoll.drop(bot.id)
      assert.deepStrictEqual(yield* ids({}), [])
      assert.deepStrictEqual(yield* longPoll.status(bot.id), {
        pending: 0,
        trimmed: 0,
        last_trimmed_date: 0,
        allowed_updates: []
      })
    })))
})
