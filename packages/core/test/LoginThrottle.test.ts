import { LoginThrottle } from "@botrelay/core"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"

const throttle = (options: Partial<LoginThrottle.Options> = {}) => LoginThrottle.make(options)

/** Seconds until `check` lets the attempt through; 0 when it does now. */
const retryAfter = (t: LoginThrottle.LoginThrottleService, username: string, ip: string) =>
  t.check(username, ip).pipe(
    Effect.as(0),
    Effect.catchTag("TooManyAttempts", (e) => Effect.succeed(e.retry_after_seconds))
  )

const failTimes = (t: LoginThrottle.LoginThrottleService, n: number, username: string, ip: string) =>
  Effect.repeatN(t.fail(username, ip), n - 1)

describe("LoginThrottle", () => {
  it.effect("5 failures for a username, whatever its case, block it until the oldest leaves 15 minutes", () =>
    Effect.gen(function*() {
      const t = yield* throttle()
      for (let i = 0; i < 4; i++) {
        yield* t.fail("Alice", `10.0.0.${i}`)
        yield* TestClock.adjust("1 minute")
      }
      assert.strictEqual(yield* retryAfter(t, "alice", "10.0.1.1"), 0)
      yield* t.fail("ALICE", "10.0.0.9")
      assert.strictEqual(yield* retryAfter(t, " alice ", "10.0.1.1"), 11 * 60)
      const error = yield* Effect.flip(t.check("alice", "10.0.1.1"))
      assert.strictEqual(error._tag, "TooManyAttempts")
      assert.strictEqual(error.message, "too many failed logins; try again in 660 seconds")
      assert.strictEqual(yield* retryAfter(t, "bob", "10.0.0.9"), 0)
      yield* TestClock.adjust(Duration.millis(11 * 60_000 - 1))
      assert.strictEqual(yield* retryAfter(t, "alice", "10.0.1.1"), 1)
      yield* TestClock.adjust("1 millis")
      assert.strictEqual(yield* retryAfter(t, "alice", "10.0.1.1"), 0)
      yield* t.fail("alice", "10.0.1.1")
      assert.strictEqual(yield* retryAfter(t, "alice", "10.0.1.1"), 60)
    }))

  it.effect("refused attempts are not failures: the block ends on time however often it is tried", () =>
    Effect.gen(function*() {
      const t = yield* throttle()
      yield* failTimes(t, 5, "alice", "10.0.0.1")
      for (let i = 0; i < 14; i++) {
        yield* TestClock.adjust("1 minute")
        assert.isAbove(yield* retryAfter(t, "alice", "10.0.0.1"), 0)
      }
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* retryAfter(t, "alice", "10.0.0.1"), 0)
    }))

  it.effect("20 failures from one address block it for every username; other addresses go on", () =>
    Effect.gen(function*() {
      const t = yield* throttle()
      for (let i = 0; i < 19; i++) yield* t.fail(`user${i}`, "192.0.2.7")
      assert.strictEqual(yield* retryAfter(t, "someone", "192.0.2.7"), 0)
      yield* TestClock.adjust("5 minutes")
      yield* t.fail("user19", "192.0.2.7")
      assert.strictEqual(yield* retryAfter(t, "someone", "192.0.2.7"), 10 * 60)
      assert.strictEqual(yield* retryAfter(t, "someone", "192.0.2.8"), 0)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* retryAfter(t, "someone", "192.0.2.7"), 0)
    }))

  it.effect("a success clears the username's failures, not the address's", () =>
    Effect.gen(function*() {
      const t = yield* throttle({ perIp: 6 })
      yield* failTimes(t, 5, "alice", "10.0.0.1")
      yield* t.succeed("ALICE")
      assert.strictEqual(yield* retryAfter(t, "alice", "10.0.0.2"), 0)
      yield* t.fail("bob", "10.0.0.1")
      assert.strictEqual(yield* retryAfter(t, "carol", "10.0.0.1"), 15 * 60)
    }))

  it.effect("stays bounded: entries whose failures all left the window go first, then the oldest", () =>
    Effect.gen(function*() {
      const t = yield* throttle({ perUsername: 1, perIp: 1000, maxEntries: 2 })
      yield* t.fail("old", "10.0.0.1")
      yield* TestClock.adjust("16 minutes")
      yield* t.fail("a", "10.0.0.1")
      yield* t.fail("b", "10.0.0.1")
      assert.isAbove(yield* retryAfter(t, "a", "10.0.0.1"), 0)
      assert.isAbove(yield* retryAfter(t, "b", "10.0.0.1"), 0)
      yield* t.fail("c", "10.0.0.1")
      assert.strictEqual(yield* retryAfter(t, "a", "10.0.0.1"), 0)
      assert.isAbove(yield* retryAfter(t, "b", "10.0.0.1"), 0)
      assert.isAbove(yield* retryAfter(t, "c", "10.0.0.1"), 0)
    }))
})
