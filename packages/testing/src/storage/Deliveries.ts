import { BotStore, type Delivery, InboxStore, OutboxStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import {
  type Runner,
  t0,
  t1,
  t2,
  botInput,
  update,
  newDelivery,
  queued,
  completion,
  some,
  ids,
  nextDelivery
} from "./Fixtures.js"

/** The conformance tests for deliveries to the bots' backends. */
export const deliveries = (run: Runner): void => {
  const test = run(BotStore.BotStore, InboxStore.InboxStore, OutboxStore.OutboxStore)
  describe("deliveries", () => {
    const queue = (storage: InboxStore.InboxStoreService, inputs: ReadonlyArray<Delivery.NewDelivery>) =>
      Effect.gen(function*() {
        for (const botId of new Set(inputs.map((d) => d.bot_id))) {
          const offset = yield* storage.ingressOffset(botId)
          yield* storage.commitUpdates(botId, [update(offset + 1)], offset + 2)
          yield* storage.completeUpdates([completion(botId, offset + 1, {
            deliveries: inputs.filter((d) => d.bot_id === botId)
          })])
        }
      })

    test("nextDeliveries are the bot's pending deliveries in id order, due or not, at most limit", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        assert.deepStrictEqual(yield* storage.nextDeliveries(a.id, 10), [])
        yield* queue(storage, [newDelivery(a.id, 1), newDelivery(b.id, 1), newDelivery(a.id, 2), newDelivery(a.id, 3)])
        const later = "2099-01-01T00:00:00.000Z"
        yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
        yield* storage.recordAttempts([[2, { status: "pending", at: t2, next_attempt_at: later, last_error: "HTTP 502" }]])
        assert.deepStrictEqual(ids(yield* storage.nextDeliveries(a.id, 10)), [2, 3])
        assert.deepStrictEqual(ids(yield* storage.nextDeliveries(a.id, 1)), [2])
        assert.deepStrictEqual(ids(yield* storage.nextDeliveries(b.id, 10)), [4])
      }))

    test("nextDelivery is the bot's pending delivery with the smallest id, due or not", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        assert.isTrue(Option.isNone(yield* nextDelivery(storage, a.id)))
        const inputs = [newDelivery(a.id, 1), newDelivery(a.id, 2), newDelivery(a.id, 3), newDelivery(b.id, 1)]
        yield* queue(storage, inputs)
        assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [4, 3, 2, 1])

        const later = "2099-01-01T00:00:00.000Z"
        yield* storage.recordAttempts([[1, { status: "pending", at: t2, next_attempt_at: later, last_error: "HTTP 502" }]])
        assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some({
          ...queued(1, inputs[0]!),
          attempts: 1,
          next_attempt_at: later,
          last_error: "HTTP 502",
          updated_at: t2
        }))
        yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
        assert.strictEqual(some(yield* nextDelivery(storage, a.id)).id, 2)
        yield* storage.recordAttempts([[2, { status: "dead", at: t2, last_error: "HTTP 410" }]])
        assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some(queued(3, inputs[2]!)))
        assert.deepStrictEqual(yield* nextDelivery(storage, b.id), Option.some(queued(4, inputs[3]!)))
        yield* storage.recordAttempts([[3, { status: "delivered", at: t2 }]])
        assert.isTrue(Option.isNone(yield* nextDelivery(storage, a.id)))
        assert.isTrue(Option.isNone(yield* nextDelivery(storage, 99)))
        assert.strictEqual(some(yield* storage.retryDelivery(2, t2)).id, 2)
        assert.strictEqual(some(yield* nextDelivery(storage, a.id)).id, 2)
      }))

    test("pruneFinished deletes old processed updates and old delivered deliveries, nothing else", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3, { received_at: t2 })], 4)
        yield* storage.completeUpdates([
          completion(bot.id, 1, { deliveries: [newDelivery(bot.id, 1), newDelivery(bot.id, 1)] }),
          completion(bot.id, 3, { deliveries: [newDelivery(bot.id, 3)] })
        ])
        yield* storage.recordAttempts([
          [1, { status: "delivered", at: t0 }],
          [2, { status: "dead", at: t0, last_error: "HTTP 410" }],
          [3, { status: "delivered", at: t2 }]
        ])
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 100), { updates: 1, deliveries: 1, sends: 0 })
        assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [3, 2])
        assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [2])
        yield* storage.commitUpdates(bot.id, [update(1)], 4)
        assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [1, 2])
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 100), { updates: 0, deliveries: 0, sends: 0 })
      }))

    test("pruneFinished deletes at most limit rows of each kind", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4)
        yield* storage.completeUpdates([completion(bot.id, 1), completion(bot.id, 2), completion(bot.id, 3)])
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 2, deliveries: 0, sends: 0 })
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 1, deliveries: 0, sends: 0 })
      }))

    test("recordAttempts records several outcomes at once and skips unknown ids", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* queue(storage, [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3)])
        yield* storage.recordAttempts([
          [1, { status: "delivered", at: t2 }],
          [99, { status: "delivered", at: t2 }],
          [2, { status: "dead", at: t2, last_error: "HTTP 410" }],
          [3, { status: "pending", at: t2, next_attempt_at: t2, last_error: "HTTP 502" }]
        ])
        const statuses = (yield* storage.listDeliveries({ limit: 10 })).map((d) => [d.id, d.status, d.attempts])
        assert.deepStrictEqual(statuses, [[3, "pending", 1], [2, "dead", 1], [1, "delivered", 0]])
      }))

    test("recordAttempt counts failed attempts and records the outcome", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const inputs = [newDelivery(bot.id, 1), newDelivery(bot.id, 2)]
        yield* queue(storage, inputs)
        const find = (id: number) =>
          storage.listDeliveries({ bot_id: bot.id, limit: 10 }).pipe(
            Effect.map((all) => all.find((d) => d.id === id))
          )

        yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 500" }]])
        yield* storage.recordAttempts([[1, {
          status: "pending",
          at: t2,
          next_attempt_at: "2025-03-04T05:07:07.000Z",
          last_error: "timeout after 10 s"
        }]])
        const retried = {
          ...queued(1, inputs[0]!),
          attempts: 2,
          next_attempt_at: "2025-03-04T05:07:07.000Z",
          last_error: "timeout after 10 s",
          updated_at: t2
        }
        assert.deepStrictEqual(yield* find(1), retried)
        const deliveredAt = "2025-03-04T05:08:00.000Z"
        yield* storage.recordAttempts([[1, { status: "delivered", at: deliveredAt }]])
        assert.deepStrictEqual(yield* find(1), { ...retried, status: "delivered", updated_at: deliveredAt })

        yield* storage.recordAttempts([[2, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 503" }]])
        const deadError = "gave up after 24 h: HTTP 503"
        yield* storage.recordAttempts([[2, { status: "dead", at: deliveredAt, last_error: deadError }]])
        assert.deepStrictEqual(yield* find(2), {
          ...queued(2, inputs[1]!),
          status: "dead",
          attempts: 2,
          next_attempt_at: t2,
          last_error: deadError,
          updated_at: deliveredAt
        })

        yield* storage.recordAttempts([[99, { status: "delivered", at: t2 }]])
        assert.strictEqual((yield* storage.listDeliveries({ limit: 10 })).length, 2)
      }))

    test("retryDelivery puts only a dead delivery back in line", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const inputs = [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3)]
        yield* queue(storage, inputs)
        yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 500" }]])
        yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "HTTP 500 for 24 h" }]])
        yield* storage.recordAttempts([[2, { status: "delivered", at: t2 }]])

        const at = "2025-04-01T00:00:00.000Z"
        const retried = some(yield* storage.retryDelivery(1, at))
        const expected: Delivery.Delivery = {
          ...queued(1, inputs[0]!),
          attempts: 0,
          next_attempt_at: at,
          last_error: "HTTP 500 for 24 h",
          updated_at: at
        }
        assert.deepStrictEqual(retried, expected)
        assert.deepStrictEqual(yield* nextDelivery(storage, bot.id), Option.some(expected))
        assert.deepStrictEqual(yield* storage.listDeliveries({ status: "dead", limit: 10 }), [])
        assert.isTrue(Option.isNone(yield* storage.retryDelivery(1, at)))
        assert.isTrue(Option.isNone(yield* storage.retryDelivery(2, at)))
        assert.isTrue(Option.isNone(yield* storage.retryDelivery(3, at)))
        assert.isTrue(Option.isNone(yield* storage.retryDelivery(99, at)))
        assert.deepStrictEqual(yield* storage.listDeliveries({ status: "delivered", limit: 10 }), [
          { ...queued(2, inputs[1]!), status: "delivered", updated_at: t2 }
        ])
        assert.deepStrictEqual(yield* storage.listDeliveries({ status: "pending", limit: 10 }), [
          queued(3, inputs[2]!),
          expected
        ])
      }))

    test("discardDelivery gives up only a dead delivery: it stays, discarded, and is never next", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const inputs = [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3)]
        yield* queue(storage, inputs)
        yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "HTTP 500 for 24 h" }]])
        yield* storage.recordAttempts([[2, { status: "delivered", at: t2 }]])

        const at = "2025-04-01T00:00:00.000Z"
        const discarded = some(yield* storage.discardDelivery(1, at))
        const expected: Delivery.Delivery = {
          ...queued(1, inputs[0]!),
          status: "discarded",
          attempts: 1,
          last_error: "HTTP 500 for 24 h",
          updated_at: at
        }
        assert.deepStrictEqual(discarded, expected)
        assert.deepStrictEqual(yield* storage.getDelivery(1), Option.some(expected))
        assert.deepStrictEqual(yield* storage.listDeliveries({ status: "dead", limit: 10 }), [])
        assert.deepStrictEqual(yield* storage.listDeliveries({ status: "discarded", limit: 10 }), [expected])
        assert.isTrue(Option.isNone(yield* storage.discardDelivery(1, at)))
        assert.isTrue(Option.isNone(yield* storage.discardDelivery(2, at)))
        assert.isTrue(Option.isNone(yield* storage.discardDelivery(3, at)))
        assert.isTrue(Option.isNone(yield* storage.retryDelivery(1, at)))
        assert.isTrue(Option.isNone(yield* storage.getDelivery(99)))
        assert.deepStrictEqual((yield* storage.listDeliveries({ limit: 10 })).map((d) => d.id), [3, 2, 1])
        assert.deepStrictEqual(yield* nextDelivery(storage, bot.id), Option.some(queued(3, inputs[2]!)))
      }))

    test("retryDead and discardDead act on every dead delivery of one bot, nothing else", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* queue(storage, [newDelivery(a.id, 1), newDelivery(a.id, 2), newDelivery(a.id, 3), newDelivery(b.id, 1)])
        yield* queue(storage, [newDelivery(a.id, 4)])
        yield* storage.recordAttempts([
          [1, { status: "dead", at: t2, last_error: "HTTP 500" }],
          [3, { status: "dead", at: t2, last_error: "HTTP 502" }],
          [4, { status: "dead", at: t2, last_error: "HTTP 503" }],
          [2, { status: "delivered", at: t2 }]
        ])
        const at = "2025-04-01T00:00:00.000Z"
        const retried = yield* storage.retryDead(a.id, at)
        assert.deepStrictEqual(ids(retried).sort(), [1, 3])
        for (const d of retried) assert.deepInclude(d, { status: "pending", attempts: 0, next_attempt_at: at, updated_at: at })
        assert.deepStrictEqual(ids(yield* storage.nextDeliveries(a.id, 10)), [1, 3, 5])
        assert.deepStrictEqual(yield* storage.retryDead(a.id, at), [])

        const discarded = yield* storage.discardDead(b.id, at)
        assert.deepStrictEqual(ids(discarded), [4])
        assert.deepInclude(discarded[0], { status: "discarded", last_error: "HTTP 503", updated_at: at })
        assert.deepStrictEqual(yield* storage.discardDead(b.id, at), [])
        assert.deepStrictEqual(yield* storage.discardDead(a.id, at), [])
        assert.deepStrictEqual(ids(yield* storage.listDeliveries({ status: "dead", limit: 10 })), [])
      }))

    test("pruneFinished deletes old discarded deliveries like delivered ones, never dead ones", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* queue(storage, [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3)])
        yield* storage.recordAttempts([
          [1, { status: "dead", at: t0, last_error: "x" }],
          [2, { status: "dead", at: t0, last_error: "x" }]
        ])
        yield* storage.discardDelivery(1, t0)
        yield* storage.discardDelivery(3, t0)
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 100), { updates: 1, deliveries: 1, sends: 0 })
        assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [3, 2])
      }))

    test("replayUpdates appends processed, undropped updates of the range in update_id order, behind pending ones", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const other = yield* storage.insertBot(botInput(2))
        const received = (n: number) => `2025-01-02T03:0${n}:00.000Z`
        yield* storage.commitUpdates(
          bot.id,
          [1, 2, 3, 4, 5, 7].map((n) => update(n, { received_at: received(n) })),
          8
        )
        yield* storage.commitUpdates(other.id, [update(3)], 4)
        yield* storage.completeUpdates([
          completion(bot.id, 1, { deliveries: [newDelivery(bot.id, 1)] }),
          completion(bot.id, 2, { dropped: true }),
          completion(bot.id, 3),
          completion(bot.id, 4, { deliveries: [newDelivery(bot.id, 4)] }),
          completion(other.id, 3)
        ])
        const url = "https://replay.example/hook"
        const at = "2025-04-01T00:00:00.000Z"
        const byIds = yield* storage.replayUpdates({
          bot_id: bot.id,
          range: { _tag: "UpdateIds", from: 0, to: 9 },
          url,
          at,
          max: 100
        })
        assert.deepStrictEqual(byIds, Option.some({ queued: 3, held: 6 }))
        const line = yield* storage.nextDeliveries(bot.id, 10)
        assert.deepStrictEqual(line.map((d) => [d.id, d.update_id]), [[1, 1], [2, 4], [3, 1], [4, 3], [5, 4]])
        assert.deepStrictEqual(line[2], {
          id: 3,
          bot_id: bot.id,
          update_id: 1,
          url,
          payload: update(1).payload,
          status: "pending",
          attempts: 0,
          next_attempt_at: at,
          last_error: "",
          created_at: at,
          updated_at: at
        })

        const byTime = yield* storage.replayUpdates({
          bot_id: bot.id,
          range: { _tag: "Received", from: received(2), to: received(4) },
          url,
          at,
          max: 100
        })
        assert.deepStrictEqual(byTime, Option.some({ queued: 1, held: 2 }))
        assert.deepStrictEqual((yield* storage.nextDeliveries(bot.id, 10)).map((d) => d.update_id), [1, 4, 1, 3, 4, 3])

        const tooMany = yield* storage.replayUpdates({
          bot_id: bot.id,
          range: { _tag: "UpdateIds", from: 1, to: 7 },
          url,
          at,
          max: 5
        })
        assert.isTrue(Option.isNone(tooMany))
        assert.strictEqual((yield* storage.nextDeliveries(bot.id, 10)).length, 6)
        assert.deepStrictEqual(
          yield* storage.replayUpdates({ bot_id: other.id, range: { _tag: "UpdateIds", from: 1, to: 2 }, url, at, max: 5 }),
          Option.some({ queued: 0, held: 0 })
        )
      }))

    test("retargetDeliveries points only the bot's pending deliveries at the URL, due now, backoff reset", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const other = yield* storage.insertBot(botInput(2))
        const inputs = [newDelivery(bot.id, 1), newDelivery(bot.id, 2), newDelivery(bot.id, 3), newDelivery(other.id, 1)]
        yield* queue(storage, inputs)
        yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 401" }]])
        yield* storage.recordAttempts([[1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 401" }]])
        yield* storage.recordAttempts([[2, { status: "dead", at: t1, last_error: "HTTP 401" }]])
        const at = "2025-04-01T00:00:00.000Z"
        const url = "https://new.example/hook"
        assert.strictEqual(yield* storage.retargetDeliveries(bot.id, url, at), 2)
        const byId = new Map((yield* storage.listDeliveries({ limit: 10 })).map((d) => [d.id, d]))
        assert.deepStrictEqual(byId.get(1), {
          ...queued(1, inputs[0]!),
          url,
          attempts: 0,
          next_attempt_at: at,
          last_error: "HTTP 401",
          updated_at: at
        })
        assert.deepStrictEqual(byId.get(3), { ...queued(3, inputs[2]!), url, next_attempt_at: at, updated_at: at })
        assert.strictEqual(byId.get(2)!.url, inputs[1]!.url)
        assert.strictEqual(byId.get(2)!.status, "dead")
        assert.deepStrictEqual(byId.get(4), queued(4, inputs[3]!))
        assert.deepStrictEqual((yield* nextDelivery(storage, bot.id)).pipe(Option.map((d) => d.id)), Option.some(1))
        assert.strictEqual(yield* storage.retargetDeliveries(99, url, at), 0)
      }))

    test("listDeliveries is newest first, filters by bot and status and honours the limit", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* queue(storage, [newDelivery(a.id, 1), newDelivery(a.id, 1), newDelivery(a.id, 1)])
        yield* queue(storage, [newDelivery(b.id, 1), newDelivery(b.id, 1)])
        yield* queue(storage, [newDelivery(a.id, 2)])
        yield* storage.recordAttempts([[2, { status: "dead", at: t2, last_error: "x" }]])
        yield* storage.recordAttempts([[4, { status: "dead", at: t2, last_error: "x" }]])
        yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
        const list = (filter: Parameters<OutboxStore.OutboxStoreService["listDeliveries"]>[0]) =>
          storage.listDeliveries(filter).pipe(Effect.map(ids))

        assert.deepStrictEqual(yield* list({ limit: 100 }), [6, 5, 4, 3, 2, 1])
        assert.deepStrictEqual(yield* list({ limit: 2 }), [6, 5])
        assert.deepStrictEqual(yield* list({ bot_id: a.id, limit: 100 }), [6, 3, 2, 1])
        assert.deepStrictEqual(yield* list({ bot_id: b.id, limit: 1 }), [5])
        assert.deepStrictEqual(yield* list({ status: "dead", limit: 100 }), [4, 2])
        assert.deepStrictEqual(yield* list({ status: "pending", limit: 100 }), [6, 5, 3])
        assert.deepStrictEqual(yield* list({ bot_id: a.id, status: "pending", limit: 100 }), [6, 3])
        assert.deepStrictEqual(yield* list({ bot_id: a.id, status: "pending", limit: 1 }), [6])
        assert.deepStrictEqual(yield* list({ bot_id: b.id, status: "delivered", limit: 100 }), [])
        assert.deepStrictEqual(yield* list({ bot_id: 99, limit: 100 }), [])
        const [newest] = yield* storage.listDeliveries({ limit: 1 })
        assert.deepStrictEqual(newest, queued(6, newDelivery(a.id, 2)))
      }))
  })
}
