import { assert, describe, it } from "@effect/vitest"
import { Audit, AuditLog, AuditStore, Errors } from "@botrelay/core"
import { Duration, Effect, Either, Layer, Logger, Redacted, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// The audit log: details without secrets, entries stamped from the Clock, pages, and retention on a TestClock.

const botToken = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
const apiKey = `brk_${"A".repeat(20)}-${"b".repeat(22)}`

describe("safeDetails", () => {
  it("drops every key that names a secret, at any depth and in any case", () => {
    const details = {
      name: "shop",
      token: "x",
      Password: "x",
      old_password: "x",
      NEW_PASSWORD: "x",
      secret: "x",
      secret_token: "x",
      api_key: "x",
      key: "x",
      Authorization: "x",
      cookie: "x",
      session: "x",
      csrf_token: "x",
      signing_secret: "x",
      webhook_secret: "x",
      refresh_token: "x",
      admin_password: "x",
      "X-CSRF-Token": "x",
      keys: 2,
      key_prefix: "brk_abcd",
      tokens_used: 3,
      nested: { bot: { id: 1, token: "x", backend: { url: "https://b.example", secret_token: "x" } } },
      list: [{ password: "x", ok: true }, "plain", 3, null]
    }
    assert.deepStrictEqual(Audit.safeDetails(details), {
      name: "shop",
      keys: 2,
      key_prefix: "brk_abcd",
      tokens_used: 3,
      nested: { bot: { id: 1, backend: { url: "https://b.example" } } },
      list: [{ ok: true }, "plain", 3, null]
    })
  })

  it("redacts bot tokens and API keys inside strings, and Redacted values", () => {
    assert.deepStrictEqual(
      Audit.safeDetails({
        url: `https://api.telegram.org/bot${botToken}/getMe`,
        note: `tried ${apiKey} then ${botToken}`,
        deep: [{ text: botToken }],
        hidden: Redacted.make("s3cret"),
        short: "12345:abc",
        prefix: "brk_abc"
      }),
      {
        url: "https://api.telegram.org/bot[redacted]/getMe",
        note: "tried [redacted] then [redacted]",
        deep: [{ text: "[redacted]" }],
        hidden: "[redacted]",
        short: "12345:abc",
        prefix: "brk_abc"
      }
    )
  })

  it("gives JSON-safe details: big integers as text, dates as ISO 8601, cycles cut", () => {
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = cyclic
    const safe = Audit.safeDetails({ big: 10n ** 20n, when: new Date(0), cyclic })
    assert.deepStrictEqual(safe, {
      big: "100000000000000000000",
      when: "1970-01-01T00:00:00.000Z",
      cyclic: { a: 1, self: "[circular]" }
    })
    assert.doesNotThrow(() => JSON.stringify(safe))
  })
})

describe("instant", () => {
  it("normalises ISO 8601 date-times with a zone and refuses the rest", () => {
    assert.strictEqual(Audit.instant("2025-01-31T12:00:00Z"), "2025-01-31T12:00:00.000Z")
    assert.strictEqual(Audit.instant("2025-01-31T14:30+02:00"), "2025-01-31T12:30:00.000Z")
    assert.strictEqual(Audit.instant("2025-01-31T12:00:00.123456Z"), "2025-01-31T12:00:00.123Z")
    for (const bad of ["2025-01-31", "2025-01-31T12:00:00", "2025-02-30T00:00:00Z", "2025-13-01T00:00:00Z", "yesterday", "1738324800"]) {
      assert.isUndefined(Audit.instant(bad), bad)
    }
  })
})

const entry = (n: number, overrides: Partial<AuditLog.AuditRecord> = {}): AuditLog.AuditRecord => ({
  actor_type: "key",
  actor_id: 1,
  actor_name: "admin",
  ip: "127.0.0.1",
  action: "bots.add",
  target_type: "bot",
  target_id: String(n),
  bot_id: n,
  chat_id: null,
  outcome: "ok",
  details: { n },
  ...overrides
})

const withLog = <A, E>(effect: Effect.Effect<A, E, AuditLog.AuditLog | AuditStore.AuditStore>) =>
  effect.pipe(Effect.provide(AuditLog.layer.pipe(Layer.provideMerge(TestRuntime.storage))))

describe("AuditLog", () => {
  it.effect("record stamps the time from the Clock, drops secrets, and list pages newest first", () =>
    withLog(Effect.gen(function*() {
      const log = yield* AuditLog.AuditLog
      yield* TestClock.setTime(Date.parse("2025-03-01T10:00:00.000Z"))
      yield* log.record(entry(1, { details: { n: 1, token: botToken, url: `https://x/bot${botToken}/` } }))
      yield* TestClock.adjust("1 minute")
      for (const n of [2, 3, 4, 5]) yield* log.record(entry(n))
      const first = yield* log.list({ limit: 2 })
      assert.deepStrictEqual(first.items.map((e) => e.details.n), [5, 4])
      assert.strictEqual(first.items[0]!.at, "2025-03-01T10:01:00.000Z")
      assert.isString(first.next_cursor)
      const second = yield* log.list({ limit: 2, cursor: first.next_cursor! })
      assert.deepStrictEqual(second.items.map((e) => e.details.n), [3, 2])
      const last = yield* log.list({ limit: 2, cursor: second.next_cursor! })
      assert.deepStrictEqual(last.items.map((e) => e.details.n), [1])
      assert.isNull(last.next_cursor)
      assert.deepStrictEqual(last.items[0], {
        id: last.items[0]!.id,
        at: "2025-03-01T10:00:00.000Z",
        ...entry(1, { details: { n: 1, url: "https://x/bot[redacted]/" } })
      })
      assert.deepStrictEqual((yield* log.list({})).items.length, 5, "50 by default")
      const range = yield* log.list({ from: "2025-03-01T11:00:30+01:00", to: "2025-03-01T10:01:00Z" })
      assert.deepStrictEqual(range.items.map((e) => e.details.n), [], "from is normalised before comparing")
      const early = yield* log.list({ to: "2025-03-01T10:01:00Z" })
      assert.deepStrictEqual(early.items.map((e) => e.details.n), [1], "to is exclusive")
    })))

  it.effect("list refuses a bad limit, cursor or time with a sentence naming the field", () =>
    withLog(Effect.gen(function*() {
      const log = yield* AuditLog.AuditLog
      const problem = (request: AuditLog.AuditRequest) =>
        Effect.map(Effect.flip(log.list(request)), (e) => e._tag === "InvalidInput" ? e.details[0] : e._tag)
      assert.deepStrictEqual(yield* problem({ limit: 0 }), { path: "limit", message: "limit must be an integer from 1 to 200" })
      assert.deepStrictEqual(yield* problem({ limit: 201 }), { path: "limit", message: "limit must be an integer from 1 to 200" })
      assert.deepInclude(yield* problem({ cursor: "nope!" }), { path: "cursor" })
      assert.deepInclude(yield* problem({ cursor: "WzAsMV0" }), { path: "cursor" }, "two numbers are not an audit cursor")
      assert.deepInclude(yield* problem({ from: "2025-01-01" }), { path: "from" })
      assert.deepInclude(yield* problem({ to: "soon" }), { path: "to" })
    })))

  it.effect("a storage failure never reaches the caller: a warning is logged, without the details", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const failing = Layer.succeed(AuditStore.AuditStore, {
        appendAudit: () => Effect.fail(new Errors.StorageError({ operation: "appendAudit", cause: new Error("disk full") })),
        listAudit: () => Effect.succeed([]),
        pruneAudit: () => Effect.succeed(0)
      })
      const log = yield* AuditLog.AuditLog.pipe(Effect.provide(AuditLog.layer.pipe(Layer.provide(failing))))
      const logger = Logger.make(({ annotations, logLevel, message }) =>
        lines.push(`${logLevel.label} ${String(message)} ${JSON.stringify(Object.fromEntries(annotations))}`)
      )
      const result = yield* Effect.either(
        log.record(entry(1, { details: { reason: "very private text" } })).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
      )
      assert.isTrue(Either.isRight(result))
      assert.strictEqual(lines.length, 1)
      assert.match(lines[0]!, /^WARN could not record an audit entry/)
      assert.include(lines[0]!, "bots.add")
      assert.notInclude(lines[0]!, "very private text")
    }))

  it.effect("sweep deletes entries older than the retention, a chunk at a time", () =>
    withLog(Effect.gen(function*() {
      const log = yield* AuditLog.AuditLog
      const store = yield* AuditStore.AuditStore
      yield* store.appendAudit(Array.from({ length: 2500 }, (_, n) => ({ ...entry(n), at: "2024-01-01T00:00:00.000Z" })))
      yield* TestClock.setTime(Date.parse("2025-01-01T00:00:00.000Z"))
      yield* log.record(entry(9999))
      yield* TestClock.adjust("1 day")
      assert.strictEqual(yield* AuditLog.sweep(Duration.days(400)), 0)
      assert.strictEqual(yield* AuditLog.sweep(Duration.days(360)), 2500)
      assert.deepStrictEqual((yield* log.list({})).items.map((e) => e.details.n), [9999])
      assert.strictEqual(yield* AuditLog.sweep(Duration.infinity), 0)
    })))

  it.effect("run sweeps at once and then every interval; an entry exactly as old as the retention stays", () =>
    Effect.gen(function*() {
      const sweeps = { count: 0 }
      const counted = Layer.effect(
        AuditStore.AuditStore,
        Effect.map(AuditStore.AuditStore, (store) => ({
          ...store,
          pruneAudit: (before: string, limit: number) =>
            Effect.tap(store.pruneAudit(before, limit), () => Effect.sync(() => void sweeps.count++))
        }))
      )
      yield* Effect.gen(function*() {
        const log = yield* AuditLog.AuditLog
        const kept = Effect.map(log.list({}), (page) => page.items.map((e) => e.details.n))
        const sweepsReach = (count: number) =>
          Effect.zipRight(TestRuntime.until(() => sweeps.count >= count), TestRuntime.followed)
        yield* TestClock.setTime(Date.parse("2025-01-01T00:00:00.000Z"))
        yield* log.record(entry(1))
        yield* TestClock.adjust("2 days")
        yield* log.record(entry(2))
        yield* Effect.forkScoped(AuditLog.run({ retention: Duration.days(3), sweepInterval: Duration.days(1) }))
        yield* sweepsReach(1)
        assert.deepStrictEqual(yield* kept, [2, 1])
        yield* TestClock.adjust("1 day")
        yield* sweepsReach(2)
        assert.deepStrictEqual(yield* kept, [2, 1], "the first entry is exactly 3 days old")
        yield* TestClock.adjust("1 day")
        yield* sweepsReach(3)
        assert.deepStrictEqual(yield* kept, [2])
        yield* TestClock.adjust("2 days")
        yield* sweepsReach(5)
        assert.deepStrictEqual(yield* kept, [])
      }).pipe(Effect.provide(AuditLog.layer.pipe(Layer.provideMerge(counted), Layer.provide(TestRuntime.storage))))
    }).pipe(Effect.scoped))

  it("keeps entries 365 days and sweeps hourly by default", () => {
    assert.strictEqual(Duration.toMillis(AuditLog.defaults.retention), Duration.toMillis(Duration.days(365)))
    assert.strictEqual(Duration.toMillis(AuditLog.defaults.sweepInterval), Duration.toMillis(Duration.hours(1)))
  })
})
