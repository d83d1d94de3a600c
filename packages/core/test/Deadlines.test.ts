import { assert, describe, it } from "@effect/vitest"
import { Deadlines } from "@botrelay/core"
import { Effect, Fiber, Option, TestClock } from "effect"

/** Whether the fiber ended, once every fiber that can run has run. */
const ended = (fiber: Fiber.RuntimeFiber<void>) =>
  Effect.zipRight(Effect.yieldNow({ priority: -1 }), Effect.map(Fiber.poll(fiber), Option.isSome))

describe("Deadlines", () => {
  it.scoped("a wait ends at its deadline, not before", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make("50 millis")
      const waiting = yield* Effect.fork(deadlines.begin().await)
      yield* TestClock.adjust("49 millis")
      assert.isFalse(yield* ended(waiting))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(yield* ended(waiting))
    }))

  it.scoped("a released wait ends at once; the others still end at their own deadlines", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make("50 millis")
      const first = deadlines.begin()
      const firstWaiting = yield* Effect.fork(first.await)
      yield* TestClock.adjust("20 millis")
      const second = yield* Effect.fork(deadlines.begin().await)
      first.release()
      first.release()
      assert.isTrue(yield* ended(firstWaiting))
      yield* TestClock.adjust("49 millis")
      assert.isFalse(yield* ended(second))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(yield* ended(second))
    }))

  it.scoped("waits begun after the line emptied are timed again", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make("50 millis")
      yield* Effect.fork(deadlines.begin().await)
      yield* TestClock.adjust("1 second")
      const later = yield* Effect.fork(deadlines.begin().await)
      yield* TestClock.adjust("30 millis")
      const latest = yield* Effect.fork(deadlines.begin().await)
      yield* TestClock.adjust("20 millis")
      assert.isTrue(yield* ended(later))
      assert.isFalse(yield* ended(latest))
      yield* TestClock.adjust("30 millis")
      assert.isTrue(yield* ended(latest))
    }))

  it.scoped("a line of thousands: each wait ends at its own deadline or when released", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make("50 millis")
      const begin = () => Effect.sync(() => deadlines.begin())
      const early = yield* Effect.forEach(Array.from({ length: 1500 }), () => begin())
      yield* TestClock.adjust("10 millis")
      const late = yield* Effect.forEach(Array.from({ length: 1500 }), () => begin())
      const all = [...early, ...late]
      all.forEach((wait, i) => i % 2 === 1 && wait.release())
      const fibers = yield* Effect.forEach(all, (wait) => Effect.fork(wait.await))
      const endedCount = (from: number, to: number) =>
        Effect.map(Effect.forEach(fibers.slice(from, to), ended), (done) => done.filter(Boolean).length)
      assert.strictEqual(yield* endedCount(0, 3000), 1500)
      yield* TestClock.adjust("40 millis")
      assert.strictEqual(yield* endedCount(0, 1500), 1500)
      assert.strictEqual(yield* endedCount(1500, 3000), 750)
      yield* TestClock.adjust("10 millis")
      assert.strictEqual(yield* endedCount(0, 3000), 3000)
    }))

  it.scoped("waits of their own durations end in deadline order, a shorter one begun later first", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make("50 millis")
      const long = yield* Effect.fork(deadlines.begin("30 seconds").await)
      yield* TestClock.adjust("1 second")
      const middle = yield* Effect.fork(deadlines.begin("10 seconds").await)
      const short = yield* Effect.fork(deadlines.begin("2 seconds").await)
      const released = deadlines.begin("1 second")
      const releasedWaiting = yield* Effect.fork(released.await)
      const usual = yield* Effect.fork(deadlines.begin().await)
      released.release()
      assert.isTrue(yield* ended(releasedWaiting))
      yield* TestClock.adjust("49 millis")
      assert.isFalse(yield* ended(usual))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(yield* ended(usual))
      yield* TestClock.adjust("1949 millis")
      assert.isFalse(yield* ended(short))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(yield* ended(short))
      assert.isFalse(yield* ended(middle))
      yield* TestClock.adjust("8 seconds")
      assert.isTrue(yield* ended(middle))
      assert.isFalse(yield* ended(long))
      yield* TestClock.adjust("18999 millis")
      assert.isFalse(yield* ended(long))
      yield* TestClock.adjust("1 millis")
      assert.isTrue(yield* ended(long))
    }))

  it.scoped("a heap of mixed durations, some released: each wait ends at its own deadline", () =>
    Effect.gen(function*() {
      const deadlines = yield* Deadlines.make("50 millis")
      const durations = Array.from({ length: 600 }, (_, i) => (i * 7919) % 1000 + 1)
      const waits = durations.map((ms) => deadlines.begin(`${ms} millis`))
      waits.forEach((wait, i) => i % 3 === 0 && wait.release())
      const fibers = yield* Effect.forEach(waits, (wait) => Effect.fork(wait.await))
      for (let now = 0; now <= 1000; now += 100) {
        const done = yield* Effect.forEach(fibers, ended)
        done.forEach((isDone, i) => assert.strictEqual(isDone, i % 3 === 0 || durations[i]! <= now, `wait ${i} at ${now} ms`))
        yield* TestClock.adjust("100 millis")
      }
    }))
})
