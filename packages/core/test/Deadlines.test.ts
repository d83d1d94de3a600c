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
})
