import { assert, describe, it } from "@effect/vitest"
import { FloodControl } from "@botrelay/core"
import { TelegramError } from "@botrelay/telegram"
import { Clock, Effect, Fiber, TestClock } from "effect"

const sendAt = (log: Array<number>) => Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => void log.push(now)))

describe("FloodControl", () => {
  it.effect("paces a private chat to about one message a second after a short burst", () =>
    Effect.gen(function*() {
      const flood = yield* FloodControl.make()
      const log: Array<number> = []
      const fiber = yield* Effect.fork(Effect.forEach([1, 2, 3, 4, 5], () => flood.send(1, 42, sendAt(log))))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(log, [0, 0, 0, 1000, 2000])
    }))

  it.effect("paces a group to 20 a minute, and chats apart from each other", () =>
    Effect.gen(function*() {
      const flood = yield* FloodControl.make()
      const group: Array<number> = []
      const other: Array<number> = []
      const fiber = yield* Effect.fork(Effect.all([
        Effect.forEach([1, 2, 3, 4], () => flood.send(1, -100, sendAt(group))),
        flood.send(1, 7, sendAt(other))
      ], { concurrency: "unbounded" }))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(group, [0, 0, 0, 3000])
      assert.deepStrictEqual(other, [0])
    }))

  it.effect("waits retry_after on 429, and gives up after the retries", () =>
    Effect.gen(function*() {
      const flood = yield* FloodControl.make({ ...FloodControl.defaults, retries429: 2 })
      const log: Array<number> = []
      const limited = sendAt(log).pipe(
        Effect.zipRight(Effect.fail(new TelegramError.TelegramApiError({
          method: "sendMessage",
          error_code: 429,
          description: "Too Many Requests: retry after 5",
          retry_after: 5
        })))
      )
      const fiber = yield* Effect.fork(Effect.flip(flood.send(1, -5, limited)))
      yield* TestClock.adjust("1 minute")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error.error_code, 429)
      assert.deepStrictEqual(log, [0, 5000, 10000])
    }))

  it.effect("paces a bot to 30 a second across its chats; another bot is not held up", () =>
    Effect.gen(function*() {
      const flood = yield* FloodControl.make()
      const busy: Array<number> = []
      const other: Array<number> = []
      const fiber = yield* Effect.fork(Effect.all([
        Effect.forEach(Array.from({ length: 40 }, (_, i) => i + 1), (chat) => flood.send(1, chat, sendAt(busy))),
        flood.send(2, 1, sendAt(other))
      ], { concurrency: "unbounded" }))
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(busy.slice(0, 30), Array.from({ length: 30 }, () => 0))
      const gaps = busy.slice(30).map((at, i) => at - busy[29 + i]!)
      for (const gap of gaps) assert.approximately(gap, 1000 / 30, 1)
      assert.isAtMost(busy.at(-1)!, 1000)
      assert.deepStrictEqual(other, [0])
    }))

  it.effect("a chat has its burst again after a quiet spell", () =>
    Effect.gen(function*() {
      const flood = yield* FloodControl.make()
      const log: Array<number> = []
      const five = Effect.forEach([1, 2, 3, 4, 5], () => flood.send(1, 42, sendAt(log)))
      const first = yield* Effect.fork(five)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(first)
      const second = yield* Effect.fork(five)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(second)
      assert.deepStrictEqual(log, [0, 0, 0, 1000, 2000, 10000, 10000, 10000, 11000, 12000])
    }))

  it.effect("a chat named by @username is paced as a group", () =>
    Effect.gen(function*() {
      const flood = yield* FloodControl.make()
      const log: Array<number> = []
      const fiber = yield* Effect.fork(Effect.forEach([1, 2, 3, 4], () => flood.send(1, "@channel", sendAt(log))))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(log, [0, 0, 0, 3000])
    }))

  it.effect("a 429 without retry_after waits a second; other errors are not retried", () =>
    Effect.gen(function*() {
      const flood = yield* FloodControl.make()
      const log: Array<number> = []
      const failing = (error_code: number) =>
        sendAt(log).pipe(Effect.zipRight(Effect.fail(
          new TelegramError.TelegramApiError({ method: "sendMessage", error_code, description: "no" })
        )))
      const limited = yield* Effect.fork(Effect.flip(flood.send(1, -5, failing(429))))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual((yield* Fiber.join(limited)).error_code, 429)
      assert.deepStrictEqual(log, [0, 1000, 2000, 3000])
      log.length = 0
      const forbidden = yield* Effect.fork(Effect.flip(flood.send(1, 9, failing(403))))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual((yield* Fiber.join(forbidden)).error_code, 403)
      assert.deepStrictEqual(log, [60_000], "tried once")
    }))
})
