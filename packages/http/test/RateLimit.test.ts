import { it } from "@effect/vitest"
import { RateLimit } from "@botrelay/http"
import { Effect, TestClock } from "effect"
import { assert, describe } from "vitest"

describe("RateLimit.buckets", () => {
  it.effect("allows a burst, refuses the next with Retry-After, refills at the rate", () =>
    Effect.gen(function*() {
      const buckets = RateLimit.buckets({ rate: 2, burst: 5 })
      for (let i = 4; i >= 0; i--) {
        const decision = yield* buckets.take("key:1")
        assert.deepStrictEqual(decision, { allowed: true, limit: 5, remaining: i, reset: Math.ceil((5 - i) / 2), retryAfter: 0 })
      }
      const refused = yield* buckets.take("key:1")
      assert.deepStrictEqual(refused, { allowed: false, limit: 5, remaining: 0, reset: 3, retryAfter: 1 })
      yield* TestClock.adjust("499 millis")
      assert.isFalse((yield* buckets.take("key:1")).allowed)
      yield* TestClock.adjust("1 millis")
      assert.deepInclude(yield* buckets.take("key:1"), { allowed: true, remaining: 0 })
      yield* TestClock.adjust("10 seconds")
      assert.deepInclude(yield* buckets.take("key:1"), { allowed: true, remaining: 4, reset: 1 })
    }))

  it.effect("keeps callers apart", () =>
    Effect.gen(function*() {
      const buckets = RateLimit.buckets({ rate: 1, burst: 1 })
      assert.isTrue((yield* buckets.take("key:1")).allowed)
      assert.isFalse((yield* buckets.take("key:1")).allowed)
      assert.isTrue((yield* buckets.take("account:1")).allowed)
      assert.isTrue((yield* buckets.take("ip:127.0.0.1")).allowed)
    }))

  it.effect("a slow rate waits whole seconds, at least 1", () =>
    Effect.gen(function*() {
      const buckets = RateLimit.buckets({ rate: 0.25, burst: 1 })
      yield* buckets.take("a")
      assert.deepInclude(yield* buckets.take("a"), { allowed: false, retryAfter: 4, reset: 4 })
      const fast = RateLimit.buckets({ rate: 1000, burst: 1 })
      yield* fast.take("a")
      assert.deepInclude(yield* fast.take("a"), { allowed: false, retryAfter: 1 })
    }))

  it.effect("forgets the least recently used callers beyond its bound", () =>
    Effect.gen(function*() {
      const buckets = RateLimit.buckets({ rate: 1, burst: 1 }, { maxCallers: 2 })
      yield* buckets.take("a")
      yield* buckets.take("b")
      yield* buckets.take("a")
      yield* buckets.take("c")
      assert.isTrue((yield* buckets.take("b")).allowed, "b was forgotten, so it starts full")
      assert.isFalse((yield* buckets.take("c")).allowed)
    }))
})

describe("RateLimit.limits", () => {
  it("limits /api but health and the OpenAPI document", () => {
    assert.isTrue(RateLimit.limits("/api/bots"))
    assert.isTrue(RateLimit.limits("/api/bots/validate?token=x"))
    for (const path of ["/api/health", "/api/health?x=1", "/api/openapi.json", "/tgapi/bot1:x/getMe", "/metrics", "/", "/telegram/webhook/1", "/apix"]) {
      assert.isFalse(RateLimit.limits(path), path)
    }
  })
})
