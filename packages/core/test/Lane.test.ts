import { assert, describe, it } from "@effect/vitest"
import { Lane } from "@botrelay/core"
import { Deferred, Duration, Effect, Fiber, FiberSet, Option, TestClock } from "effect"
import { nextTurn } from "./TestRuntime.js"

// A lane holds a fiber only while it has work; wakes during a pass coalesce into one more pass (each empty
// pass is followed by `idle`); a job due
// later is waited for on the clock, or passed at once when woken.

/** A lane over scripted passes: each pass takes the next answer (the last repeats), counting passes and idles. */
const scripted = (answers: ReadonlyArray<Option.Option<Duration.Duration>>, gate?: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const set = yield* FiberSet.make()
    const fork = yield* FiberSet.runtime(set)()
    const counts = { passes: 0, idles: 0 }
    const pass = Effect.suspend(() => {
      const answer = answers[Math.min(counts.passes, answers.length - 1)]!
      counts.passes++
      return gate === undefined ? Effect.succeed(answer) : Effect.as(Deferred.await(gate), answer)
    })
    const lane = Lane.make(() => pass, Effect.sync(() => void counts.idles++), fork)
    return { lane, counts, fibers: FiberSet.size(set) }
  })

describe("Lane", () => {
  it.scoped("runs a pass when woken, then idles and holds no fiber", () =>
    Effect.gen(function*() {
      const { counts, fibers, lane } = yield* scripted([Option.none()])
      assert.strictEqual(yield* fibers, 0)
      lane.wake()
      yield* nextTurn
      assert.deepStrictEqual(counts, { passes: 1, idles: 1 })
      assert.strictEqual(yield* fibers, 0)
      lane.wake()
      yield* nextTurn
      assert.deepStrictEqual(counts, { passes: 2, idles: 2 })
      assert.strictEqual(yield* fibers, 0)
    }))

  it.scoped("wakes during a pass coalesce into one more pass", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { counts, fibers, lane } = yield* scripted([Option.none()], gate)
      lane.wake()
      yield* nextTurn
      assert.strictEqual(counts.passes, 1)
      lane.wake()
      lane.wake()
      lane.wake()
      assert.strictEqual(yield* fibers, 1)
      yield* Deferred.succeed(gate, undefined)
      yield* nextTurn
      assert.deepStrictEqual(counts, { passes: 2, idles: 2 })
      assert.strictEqual(yield* fibers, 0)
    }))

  it.scoped("waits for a job due later on the clock, or passes at once when woken", () =>
    Effect.gen(function*() {
      const { counts, fibers, lane } = yield* scripted([
        Option.some(Duration.seconds(5)),
        Option.some(Duration.seconds(5)),
        Option.none()
      ])
      lane.wake()
      yield* nextTurn
      assert.strictEqual(counts.passes, 1)
      yield* TestClock.adjust(Duration.seconds(4))
      assert.strictEqual(counts.passes, 1)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* nextTurn
      assert.strictEqual(counts.passes, 2)
      lane.wake()
      yield* nextTurn
      assert.deepStrictEqual(counts, { passes: 3, idles: 1 })
      assert.strictEqual(yield* fibers, 0)
    }))

  it.scoped("is idle only while no pass runs or waits for a due job, and not once stopped", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { lane } = yield* scripted([Option.some(Duration.seconds(1)), Option.none()], gate)
      assert.isTrue(lane.idle)
      lane.wake()
      assert.isFalse(lane.idle, "a pass is on its way")
      yield* nextTurn
      assert.isFalse(lane.idle, "a pass runs")
      yield* Deferred.succeed(gate, undefined)
      yield* nextTurn
      assert.isFalse(lane.idle, "it waits for the job due in a second")
      yield* TestClock.adjust("1 second")
      yield* nextTurn
      assert.isTrue(lane.idle, "the line is empty")
      yield* lane.stop
      assert.isFalse(lane.idle)
    }))

  it.scoped("stop interrupts the pass in progress, and wakes after it do nothing", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { counts, fibers, lane } = yield* scripted([Option.none()], gate)
      lane.wake()
      yield* nextTurn
      assert.strictEqual(yield* fibers, 1)
      yield* lane.stop
      assert.strictEqual(yield* fibers, 0)
      lane.wake()
      yield* Deferred.succeed(gate, undefined)
      yield* nextTurn
      assert.deepStrictEqual(counts, { passes: 1, idles: 0 })
    }))

  it.scoped("finish lets the pass in progress end, and runs no pass after it", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { counts, fibers, lane } = yield* scripted([Option.some(Duration.seconds(5))], gate)
      lane.wake()
      yield* nextTurn
      lane.wake()
      const finished = yield* Effect.fork(lane.finish)
      yield* nextTurn
      assert.strictEqual(yield* fibers, 1)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(finished)
      assert.strictEqual(yield* fibers, 0)
      lane.wake()
      yield* nextTurn
      assert.deepStrictEqual(counts, { passes: 1, idles: 0 })
    }))

  it.scoped("finish ends a wait for a job due later at once", () =>
    Effect.gen(function*() {
      const { counts, fibers, lane } = yield* scripted([Option.some(Duration.hours(1))])
      lane.wake()
      yield* nextTurn
      assert.strictEqual(yield* fibers, 1)
      yield* lane.finish
      assert.strictEqual(yield* fibers, 0)
      assert.deepStrictEqual(counts, { passes: 1, idles: 0 })
    }))
})
