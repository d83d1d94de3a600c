import type { Delivery, Inbox } from "@botrelay/core"
import { SecretKey, type SqliteStores } from "@botrelay/sqlite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Either, Option } from "effect"
import { forwardingBot, open } from "./Open.js"

/**
 * The stores on a database this test also reads directly, for what the stores must agree with; while
 * `failing.commits`, every transaction rolls back at its end, as when its COMMIT fails.
 */
const adopted = Effect.gen(function*() {
  const host = new Database(":memory:")
  yield* Effect.addFinalizer(() => Effect.sync(() => host.close()))
  const failing = { commits: false }
  let depth = 0
  const database: SqliteStores.SqliteDatabase = {
    name: host.name,
    prepare: (sql) => host.prepare(sql),
    transaction: (fn) =>
      host.transaction((...args: Array<any>) => {
        depth++
        try {
          const result = fn(...args)
          if (failing.commits && depth === 1) throw new Error("disk I/O error")
          return result
        } finally {
          depth--
        }
      }),
    close: () => host.close()
  }
  const storage = yield* open({ database, secretKey: SecretKey.generate() })
  const bots = yield* Effect.forEach([1, 2], (n) => storage.insertBot(forwardingBot(n)))
  /** The bot's pending deliveries as the database holds them. */
  const pendingRows = (botId: number): Array<Delivery.Delivery> =>
    host.prepare("SELECT * FROM botrelay_deliveries WHERE bot_id = ? AND status = 'pending' ORDER BY id")
      .all(botId) as Array<Delivery.Delivery>
  /** The bot's backlog as the database holds it: unprocessed updates and pending deliveries. */
  const backlogRows = (botId: number): number =>
    (host.prepare("SELECT count(*) AS n FROM botrelay_inbox WHERE bot_id = ? AND processed = 0").get(botId) as {
      n: number
    }).n + pendingRows(botId).length
  /**
   * Asserts that the outbox reads exactly the database's pending rows, whole and at a smaller limit, and that
   * the bot's backlog counts them, before and after the reads make its line known.
   */
  const agrees = (botId: number) =>
    Effect.gen(function*() {
      const rows = pendingRows(botId)
      assert.strictEqual(yield* storage.backlog(botId), backlogRows(botId))
      assert.deepStrictEqual(yield* storage.nextDeliveries(botId, 50), rows)
      assert.deepStrictEqual(yield* storage.nextDeliveries(botId, 2), rows.slice(0, 2))
      assert.strictEqual(yield* storage.backlog(botId), backlogRows(botId))
      return rows
    })
  return { failing, storage, bots: bots.map((bot) => bot.id), pendingRows, agrees }
})

const payload = (updateId: number) => `{"update_id":${updateId},"message":{"text":"hi"}}`

const completion = (botId: number, updateId: number, deliveries = 1): Inbox.UpdateCompletion => ({
  bot_id: botId,
  update_id: updateId,
  messages: [],
  deliveries: Array.from({ length: deliveries }, () => ({
    bot_id: botId,
    update_id: updateId,
    url: "https://backend.example/hook",
    payload: payload(updateId),
    created_at: `2025-01-01T00:00:0${updateId % 10}.000Z`
  }))
})

const inbox = (updateId: number) => ({
  update_id: updateId,
  payload: payload(updateId),
  received_at: "2025-01-01T00:00:01.000Z"
})

describe("SQLite delivery lines", () => {
  it.scoped("the outbox reads what the database holds through every change to a bot's line", () =>
    Effect.gen(function*() {
      const { agrees, bots: [a, b], storage } = yield* adopted
      yield* agrees(a!)
      yield* agrees(b!)

      yield* storage.commitUpdates(a!, [inbox(1), inbox(2), inbox(3)], 4)
      yield* storage.completeUpdates([completion(a!, 1), completion(a!, 2), completion(a!, 3)])
      const queued = yield* agrees(a!)
      assert.deepStrictEqual(queued.map((d) => d.update_id), [1, 2, 3])

      const completed = yield* storage.commitCompleting!(b!, [{ bot_id: b!, ...inbox(7) }, { bot_id: b!, ...inbox(8) }], 9, (updates) =>
        updates.map((u) => completion(b!, u.update_id)))
      assert.strictEqual(completed.added, 2)
      yield* agrees(b!)

      yield* storage.recordAttempts([[queued[0]!.id, { status: "delivered", at: "2025-01-01T00:01:00.000Z" }]])
      yield* agrees(a!)
      yield* storage.recordAttempts([[queued[1]!.id, {
        status: "pending",
        at: "2025-01-01T00:01:00.000Z",
        next_attempt_at: "2025-01-01T00:01:05.000Z",
        last_error: "HTTP 502"
      }]])
      const retrying = yield* agrees(a!)
      assert.deepStrictEqual(retrying.map((d) => [d.attempts, d.last_error]), [[1, "HTTP 502"], [0, ""]])

      yield* storage.recordAttempts([[queued[1]!.id, { status: "dead", at: "2025-01-01T00:02:00.000Z", last_error: "x" }]])
      assert.deepStrictEqual((yield* agrees(a!)).map((d) => d.update_id), [3])
      assert.isTrue(Option.isSome(yield* storage.retryDelivery(queued[1]!.id, "2025-01-01T00:03:00.000Z")))
      assert.deepStrictEqual((yield* agrees(a!)).map((d) => d.update_id), [2, 3])

      assert.strictEqual(yield* storage.retargetDeliveries(a!, "https://elsewhere.example/hook", "2025-01-01T00:04:00.000Z"), 2)
      assert.deepStrictEqual((yield* agrees(a!)).map((d) => d.url), [
        "https://elsewhere.example/hook",
        "https://elsewhere.example/hook"
      ])

      yield* storage.recordAttempts([[queued[1]!.id, { status: "dead", at: "2025-01-01T00:05:00.000Z", last_error: "x" }]])
      assert.strictEqual((yield* storage.retryDead(a!, "2025-01-01T00:06:00.000Z")).length, 1)
      yield* agrees(a!)

      const replayed = yield* storage.replayUpdates({
        bot_id: a!,
        range: { _tag: "UpdateIds", from: 1, to: 3 },
        url: "https://backend.example/hook",
        at: "2025-01-01T00:07:00.000Z",
        max: 10
      })
      assert.deepStrictEqual(replayed, Option.some({ queued: 3, held: 3 }))
      assert.strictEqual((yield* agrees(a!)).length, 5)
      yield* agrees(b!)

      assert.isTrue(yield* storage.deleteBot(b!))
      assert.deepStrictEqual(yield* storage.nextDeliveries(b!, 50), [])
    }))

  it.scoped("a write that fails or rolls back changes nothing in the line", () =>
    Effect.gen(function*() {
      const { agrees, bots: [a], failing, storage } = yield* adopted
      yield* agrees(a!)
      yield* storage.commitUpdates(a!, [inbox(1), inbox(2), inbox(3)], 4)
      // the second delivery names a bot that does not exist: the write fails after the first was inserted,
      // in the same transaction as a write that succeeds
      const broken: Inbox.UpdateCompletion = {
        ...completion(a!, 1),
        deliveries: [...completion(a!, 1).deliveries, { ...completion(a!, 1).deliveries[0]!, bot_id: 999 }]
      }
      const [failed, succeeded] = yield* Effect.all([
        Effect.either(storage.completeUpdates([broken])),
        Effect.either(storage.completeUpdates([completion(a!, 2)]))
      ], { concurrency: "unbounded" })
      assert.isTrue(Either.isLeft(failed))
      assert.isTrue(Either.isRight(succeeded))
      const [queued] = yield* agrees(a!)
      assert.strictEqual(queued!.update_id, 2)

      failing.commits = true
      assert.isTrue(Either.isLeft(yield* Effect.either(storage.completeUpdates([completion(a!, 3)]))))
      assert.isTrue(Either.isLeft(yield* Effect.either(storage.recordAttempts([[queued!.id, { status: "delivered", at: "" }]]))))
      failing.commits = false
      assert.deepStrictEqual((yield* agrees(a!)).map((d) => d.update_id), [2])
    }))

  it.scoped("a line longer than memory keeps is read from the database", () =>
    Effect.gen(function*() {
      const { agrees, bots: [a], pendingRows, storage } = yield* adopted
      yield* agrees(a!)
      const updates = Array.from({ length: 2_100 }, (_, i) => inbox(i + 1))
      yield* storage.commitUpdates(a!, updates, 2_101)
      yield* storage.completeUpdates(updates.map((u) => completion(a!, u.update_id)))
      assert.strictEqual(pendingRows(a!).length, 2_100)
      const rows = pendingRows(a!)
      assert.deepStrictEqual(yield* storage.nextDeliveries(a!, 50), rows.slice(0, 50))
      yield* storage.recordAttempts(rows.slice(0, 2_080).map((d) => [d.id, { status: "delivered", at: "" }] as const))
      yield* agrees(a!)
    }))
})
