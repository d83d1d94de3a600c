import { BotStore, type Inbox, MessageStore, InboxStore, OutboxStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Either, Option, Redacted } from "effect"
import {
  type Runner,
  t1,
  t2,
  botInput,
  message,
  update,
  held,
  newDelivery,
  queued,
  completion,
  ids,
  nextDelivery
} from "./Fixtures.js"

/** The conformance tests for the inbox: committed updates, the ingress offset and completions. */
export const inbox = (run: Runner): void => {
  const test = run(BotStore.BotStore, MessageStore.MessageStore, InboxStore.InboxStore, OutboxStore.OutboxStore)
  describe("inbox", () => {
    test("ingressOffset is 0 until a batch is committed; commitUpdates stores the batch and raises it", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        assert.strictEqual(yield* storage.ingressOffset(a.id), 0)
        assert.strictEqual(yield* storage.ingressOffset(99), 0)
        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), [])

        const batch = [update(500, { received_at: t1 }), update(501, { received_at: t2 })]
        assert.strictEqual(yield* storage.commitUpdates(a.id, batch, 502), 2)
        assert.strictEqual(yield* storage.ingressOffset(a.id), 502)
        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, ...batch))
        assert.strictEqual(yield* storage.ingressOffset(b.id), 0)
        assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 100), [])

        const other = update(500, { payload: "{\"update_id\":500}" })
        assert.strictEqual(yield* storage.commitUpdates(b.id, [other], 501), 1)
        assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 100), held(b.id, other))
        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, ...batch))
      }))

    test("committing the same updates again counts them once and keeps the first payload", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const batch = [update(10), update(11)]
        assert.strictEqual(yield* storage.commitUpdates(bot.id, batch, 12), 2)
        assert.strictEqual(yield* storage.commitUpdates(bot.id, batch, 12), 0)
        assert.strictEqual(
          yield* storage.commitUpdates(bot.id, [update(11, { payload: "{\"changed\":true}", received_at: t2 })], 12),
          0
        )
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(11), update(12), update(12)], 13), 1)
        assert.deepStrictEqual(
          yield* storage.pendingUpdates(bot.id, 100),
          held(bot.id, update(10), update(11), update(12))
        )
        assert.strictEqual(yield* storage.ingressOffset(bot.id), 13)
      }))

    test("the ingress offset is never lowered; updates below it are still stored", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [], 20), 0)
        assert.strictEqual(yield* storage.ingressOffset(bot.id), 20)
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(5)], 15), 1)
        assert.strictEqual(yield* storage.ingressOffset(bot.id), 20)
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [], 0), 0)
        assert.strictEqual(yield* storage.ingressOffset(bot.id), 20)
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), held(bot.id, update(5)))
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(21)], 22), 1)
        assert.strictEqual(yield* storage.ingressOffset(bot.id), 22)
      }))

    test("pendingUpdates is ordered by update_id and honours the limit", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(3), update(1)], 4)
        yield* storage.commitUpdates(bot.id, [update(2), update(1_000_000_000), update(900)], 4)
        const updateIds = (limit: number) =>
          storage.pendingUpdates(bot.id, limit).pipe(Effect.map((us) => us.map((u) => u.update_id)))
        assert.deepStrictEqual(yield* updateIds(100), [1, 2, 3, 900, 1_000_000_000])
        assert.deepStrictEqual(yield* updateIds(2), [1, 2])
        assert.deepStrictEqual(yield* updateIds(1), [1])
        yield* storage.completeUpdates([completion(bot.id, 1)])
        yield* storage.completeUpdates([completion(bot.id, 3)])
        assert.deepStrictEqual(yield* updateIds(2), [2, 900])
      }))

    test("a processed update committed again stays processed", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(1), update(2)], 3)
        yield* storage.completeUpdates([completion(bot.id, 1)])
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), held(bot.id, update(2)))
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4), 1)
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), held(bot.id, update(2), update(3)))
        yield* storage.completeUpdates([completion(bot.id, 2)])
        yield* storage.completeUpdates([completion(bot.id, 3)])
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4), 0)
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 100), [])
        assert.deepStrictEqual(yield* storage.botsWithWork, [])
      }))

    test("payloads are kept byte for byte", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const payloads = [
          "{\"update_id\":1,\"message\":{\"text\":\"héllo wörld ✓ 👋🏽 中文 \\u00e9 \\\"quoted\\\" \\\\ \\n\"}}",
          "{ \"update_id\" : 2 ,\n\t\"big\": 123456789012345678901234567890, \"id\": 9007199254740993,\n" +
          "  \"float\": 1.0e3, \"neg\": -0, \"order\": {\"z\": 1, \"a\": 2} }\n",
          "{\"update_id\":3,\"text\":\"" + "x".repeat(70_000) + "\"}"
        ]
        const batch = payloads.map((payload, i) => update(i + 1, { payload }))
        assert.strictEqual(yield* storage.commitUpdates(bot.id, batch, 4), 3)
        const found = yield* storage.pendingUpdates(bot.id, 10)
        assert.deepStrictEqual(found.map((u) => u.payload), payloads)
        for (const [i, u] of found.entries()) assert.strictEqual(u.payload.length, payloads[i]!.length)

        yield* storage.completeUpdates([completion(bot.id, 2, {
          deliveries: [
            newDelivery(bot.id, 2, { payload: payloads[1]! }),
            newDelivery(bot.id, 1, { payload: payloads[0]! })
          ]
        })])
        assert.deepStrictEqual(
          (yield* storage.listDeliveries({ bot_id: bot.id, limit: 10 })).map((d) => d.payload),
          [payloads[0], payloads[1]]
        )
      }))

    test("completeUpdates saves the messages, queues the deliveries and marks the update processed", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.saveMessage(message(a.id, 10, 7, { text: "before edit" }))
        yield* storage.commitUpdates(a.id, [update(1), update(2)], 3)
        const edited = message(a.id, 10, 7, { text: "after edit", edit_date: 1_700_000_900 })
        const routed = message(b.id, -100, 3, { direction: "out", media_type: "photo", file_id: "f" })
        const toBackend = newDelivery(a.id, 1)
        const toTarget = newDelivery(b.id, 1, { url: "https://backend.example/other", created_at: t2 })
        yield* storage.completeUpdates([completion(a.id, 1, {
          messages: [message(a.id, 10, 8), edited, routed],
          deliveries: [toBackend, toTarget]
        })])

        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, update(2)))
        assert.deepStrictEqual(
          yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }),
          [message(a.id, 10, 8), edited]
        )
        assert.deepStrictEqual(
          yield* storage.listMessages({ bot_id: b.id, chat_id: -100, limit: 50, offset: 0 }),
          [routed]
        )
        assert.deepStrictEqual(
          yield* storage.listDeliveries({ limit: 10 }),
          [queued(2, toTarget), queued(1, toBackend)]
        )
        assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some(queued(1, toBackend)))
        assert.deepStrictEqual(yield* nextDelivery(storage, b.id), Option.some(queued(2, toTarget)))
      }))

    test("completing an update twice changes nothing the second time", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(1)], 2)
        const first = completion(bot.id, 1, {
          messages: [message(bot.id, 10, 1)],
          deliveries: [newDelivery(bot.id, 1)]
        })
        yield* storage.completeUpdates([first])
        yield* storage.completeUpdates([first])
        yield* storage.completeUpdates([completion(bot.id, 1, {
          messages: [message(bot.id, 10, 1, { text: "replayed" }), message(bot.id, 10, 2)],
          deliveries: [newDelivery(bot.id, 1, { url: "https://backend.example/replayed" })]
        })])
        assert.deepStrictEqual(
          yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 }),
          [message(bot.id, 10, 1)]
        )
        assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [queued(1, newDelivery(bot.id, 1))])
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(1)], 2), 0)
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [])
      }))

    test("completing an update the inbox does not hold does nothing", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.commitUpdates(a.id, [update(1)], 2)
        yield* storage.completeUpdates([completion(a.id, 2, {
          messages: [message(a.id, 10, 1)],
          deliveries: [newDelivery(a.id, 2)]
        })])
        yield* storage.completeUpdates([completion(b.id, 1, { deliveries: [newDelivery(b.id, 1)] })])
        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 10), held(a.id, update(1)))
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }), [])
        assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [])

        assert.isTrue(yield* storage.deleteBot(a.id))
        yield* storage.completeUpdates([completion(a.id, 1, {
          messages: [message(a.id, 10, 1)],
          deliveries: [newDelivery(a.id, 1)]
        })])
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }), [])
        assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [])
        assert.deepStrictEqual(yield* storage.botsWithWork, [])
      }))

    test("a completion that fails leaves no trace", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(1)], 2)
        const result = yield* Effect.either(storage.completeUpdates([completion(bot.id, 1, {
          messages: [message(bot.id, 10, 1)],
          deliveries: [newDelivery(bot.id, 1), newDelivery(999, 1)]
        })]))
        const messages = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 })
        const deliveries = yield* storage.listDeliveries({ limit: 10 })
        const pending = yield* storage.pendingUpdates(bot.id, 10)
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "StorageError")
          assert.deepStrictEqual(pending, held(bot.id, update(1)))
          assert.deepStrictEqual(messages, [])
          assert.deepStrictEqual(deliveries, [])
        } else {
          assert.deepStrictEqual(pending, [])
          assert.deepStrictEqual(messages, [message(bot.id, 10, 1)])
          assert.strictEqual(deliveries.length, 2)
        }
      }))

    test("completeUpdates applies a batch of several updates in order, in one go", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.saveMessage(message(a.id, 10, 7, { text: "before edit" }))
        yield* storage.commitUpdates(a.id, [update(1), update(2), update(3), update(4)], 5)
        yield* storage.commitUpdates(b.id, [update(1)], 2)
        const firstEdit = message(a.id, 10, 7, { text: "first edit", edit_date: 1_700_000_100 })
        const secondEdit = message(a.id, 10, 7, { text: "second edit", edit_date: 1_700_000_200 })
        const fromB = message(b.id, -100, 1, { direction: "out" })
        const d1 = newDelivery(a.id, 1)
        const d2 = newDelivery(a.id, 2)
        const d3 = newDelivery(b.id, 2, { url: "https://backend.example/other", created_at: t2 })
        const d4 = newDelivery(a.id, 3)
        yield* storage.completeUpdates([
          completion(a.id, 1, { messages: [firstEdit], deliveries: [d1] }),
          completion(a.id, 2, { messages: [secondEdit, message(a.id, 10, 8)], deliveries: [d2, d3] }),
          completion(b.id, 1, { messages: [fromB] }),
          completion(a.id, 3, { deliveries: [d4] })
        ])

        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), held(a.id, update(4)))
        assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 100), [])
        assert.deepStrictEqual(
          yield* storage.listMessages({ bot_id: a.id, chat_id: 10, limit: 50, offset: 0 }),
          [message(a.id, 10, 8), secondEdit]
        )
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: b.id, chat_id: -100, limit: 50, offset: 0 }), [
          fromB
        ])
        assert.deepStrictEqual(
          yield* storage.listDeliveries({ limit: 10 }),
          [queued(4, d4), queued(3, d3), queued(2, d2), queued(1, d1)]
        )
        assert.deepStrictEqual(yield* nextDelivery(storage, a.id), Option.some(queued(1, d1)))
        assert.deepStrictEqual(yield* nextDelivery(storage, b.id), Option.some(queued(3, d3)))
      }))

    test("a batch mixing processed and unprocessed updates applies only the unprocessed ones", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4)
        const done = newDelivery(bot.id, 2)
        yield* storage.completeUpdates([
          completion(bot.id, 2, { messages: [message(bot.id, 10, 2)], deliveries: [done] })
        ])

        const d1 = newDelivery(bot.id, 1)
        const d3 = newDelivery(bot.id, 3, { created_at: t2 })
        const replayed = { url: "https://backend.example/replayed" }
        yield* storage.completeUpdates([
          completion(bot.id, 1, { messages: [message(bot.id, 10, 1)], deliveries: [d1] }),
          completion(bot.id, 2, {
            messages: [message(bot.id, 10, 2, { text: "replayed" })],
            deliveries: [newDelivery(bot.id, 2, replayed)]
          }),
          completion(bot.id, 5, { messages: [message(bot.id, 10, 5)], deliveries: [newDelivery(bot.id, 5)] }),
          completion(bot.id, 3, { deliveries: [d3] }),
          completion(bot.id, 1, {
            messages: [message(bot.id, 10, 1, { text: "twice in one batch" })],
            deliveries: [newDelivery(bot.id, 1, replayed)]
          })
        ])

        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [])
        assert.deepStrictEqual(
          yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 50, offset: 0 }),
          [message(bot.id, 10, 2), message(bot.id, 10, 1)]
        )
        assert.deepStrictEqual(
          yield* storage.listDeliveries({ limit: 10 }),
          [queued(3, d3), queued(2, d1), queued(1, done)]
        )

        yield* storage.completeUpdates([])
        assert.strictEqual((yield* storage.listDeliveries({ limit: 10 })).length, 3)
      }))

    test("commitCompleting completes new updates in the commit while none wait, else leaves them for processing", (storage) =>
      Effect.gen(function*() {
        const commitCompleting = storage.commitCompleting
        // a driver without it leaves every update for processing (PostgreSQL)
        if (commitCompleting === undefined) return
        const a = yield* storage.insertBot(botInput(1))
        const given: Array<ReadonlyArray<number>> = []
        const complete = (updates: ReadonlyArray<Inbox.InboxUpdate>) => {
          given.push(updates.map((u) => u.update_id))
          return updates.map((u) => completion(u.bot_id, u.update_id, { deliveries: [newDelivery(u.bot_id, u.update_id)] }))
        }
        const first = yield* commitCompleting(a.id, held(a.id, update(1), update(2)), 3, complete)
        assert.strictEqual(first.added, 2)
        assert.deepStrictEqual(first.completed?.map((c) => c.update_id), [1, 2])
        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 100), [])
        assert.strictEqual(yield* storage.ingressOffset(a.id), 3)
        assert.deepStrictEqual((yield* storage.nextDeliveries(a.id, 10)).map((d) => d.update_id), [1, 2])

        // an update the inbox holds already is neither added nor completed again
        const again = yield* commitCompleting(a.id, held(a.id, update(2), update(3)), 4, complete)
        assert.strictEqual(again.added, 1)
        assert.deepStrictEqual(again.completed?.map((c) => c.update_id), [3])
        assert.deepStrictEqual((yield* storage.nextDeliveries(a.id, 10)).map((d) => d.update_id), [1, 2, 3])

        // an update waiting for processing keeps the new ones behind it
        yield* storage.commitUpdates(a.id, [update(10)], 11)
        const behind = yield* commitCompleting(a.id, held(a.id, update(11)), 12, complete)
        assert.deepStrictEqual(behind, { added: 1, completed: undefined })
        assert.deepStrictEqual((yield* storage.pendingUpdates(a.id, 100)).map((u) => u.update_id), [10, 11])
        assert.strictEqual(yield* storage.ingressOffset(a.id), 12)

        // completions declined: the updates wait
        const b = yield* storage.insertBot(botInput(2))
        const declined = yield* commitCompleting(b.id, held(b.id, update(5)), 6, () => undefined)
        assert.deepStrictEqual(declined, { added: 1, completed: undefined })
        assert.deepStrictEqual((yield* storage.pendingUpdates(b.id, 100)).map((u) => u.update_id), [5])
        assert.deepStrictEqual(given, [[1, 2], [2, 3]])
      }))

    test("backlog counts the bot's unprocessed updates and pending deliveries", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const backlogs = Effect.all([storage.backlog(a.id), storage.backlog(b.id)])
        assert.deepStrictEqual(yield* backlogs, [0, 0])
        assert.strictEqual(yield* storage.backlog(99), 0)

        yield* storage.commitUpdates(a.id, [update(1), update(2), update(3)], 4)
        assert.deepStrictEqual(yield* backlogs, [3, 0])
        yield* storage.completeUpdates([
          completion(a.id, 1, { deliveries: [newDelivery(a.id, 1), newDelivery(a.id, 1), newDelivery(b.id, 1)] })
        ])
        assert.deepStrictEqual(yield* backlogs, [4, 1])

        yield* storage.recordAttempts([[1, { status: "delivered", at: t2 }]])
        assert.deepStrictEqual(yield* backlogs, [3, 1])
        yield* storage.recordAttempts([[2, { status: "pending", at: t2, next_attempt_at: t2, last_error: "timeout" }]])
        assert.deepStrictEqual(yield* backlogs, [3, 1])
        yield* storage.recordAttempts([[2, { status: "dead", at: t2, last_error: "timeout" }]])
        assert.deepStrictEqual(yield* backlogs, [2, 1])

        yield* storage.completeUpdates([completion(a.id, 2), completion(a.id, 3)])
        assert.deepStrictEqual(yield* backlogs, [0, 1])
        assert.strictEqual(yield* storage.commitUpdates(a.id, [update(1), update(2), update(3)], 4), 0)
        assert.deepStrictEqual(yield* backlogs, [0, 1])
        yield* storage.retryDelivery(2, t2)
        assert.deepStrictEqual(yield* backlogs, [1, 1])

        assert.isTrue(yield* storage.deleteBot(b.id))
        assert.deepStrictEqual(yield* backlogs, [1, 0])
      }))

    test("botsWithWork lists bots with unprocessed updates or pending deliveries, ascending", (storage) =>
      Effect.gen(function*() {
        for (const n of [1, 2, 3, 4, 5]) yield* storage.insertBot(botInput(n))
        assert.deepStrictEqual(yield* storage.botsWithWork, [])
        yield* storage.commitUpdates(4, [update(1), update(2)], 3)
        yield* storage.commitUpdates(1, [update(1)], 2)
        yield* storage.completeUpdates([completion(1, 1, { deliveries: [newDelivery(1, 1)] })])
        yield* storage.commitUpdates(2, [update(1)], 2)
        yield* storage.completeUpdates([completion(2, 1, { deliveries: [newDelivery(2, 1), newDelivery(2, 1)] })])
        yield* storage.recordAttempts([[2, { status: "delivered", at: t2 }]])
        yield* storage.recordAttempts([[3, { status: "dead", at: t2, last_error: "HTTP 500" }]])
        yield* storage.commitUpdates(5, [], 10)
        yield* storage.completeUpdates([completion(4, 1, { deliveries: [newDelivery(4, 1)] })])
        assert.deepStrictEqual(yield* storage.botsWithWork, [1, 4])

        yield* storage.completeUpdates([completion(4, 2)])
        assert.deepStrictEqual(yield* storage.botsWithWork, [1, 4])
        yield* storage.recordAttempts([[4, { status: "delivered", at: t2 }]])
        assert.deepStrictEqual(yield* storage.botsWithWork, [1])
        yield* storage.recordAttempts([[1, { status: "pending", at: t2, next_attempt_at: t2, last_error: "timeout" }]])
        assert.deepStrictEqual(yield* storage.botsWithWork, [1])
        yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "timeout" }]])
        assert.deepStrictEqual(yield* storage.botsWithWork, [])
        yield* storage.retryDelivery(3, t2)
        assert.deepStrictEqual(yield* storage.botsWithWork, [2])
      }))

    test("changing a bot's token resets its ingress offset and keeps its inbox", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.commitUpdates(a.id, [update(50)], 51)
        yield* storage.commitUpdates(b.id, [update(70)], 71)
        yield* storage.updateBot(a.id, { name: "renamed", secret_token: Redacted.make("x"), updated_at: t1 })
        assert.strictEqual(yield* storage.ingressOffset(a.id), 51)
        yield* storage.updateBot(a.id, { token: Redacted.make(Redacted.value(a.token)) })
        assert.strictEqual(yield* storage.ingressOffset(a.id), 51)

        const error = yield* Effect.flip(storage.updateBot(a.id, { token: b.token }))
        assert.strictEqual(error._tag, "DuplicateToken")
        assert.strictEqual(yield* storage.ingressOffset(a.id), 51)

        assert.isTrue(Option.isNone(yield* storage.updateBot(99, { token: Redacted.make("99:new") })))
        yield* storage.updateBot(a.id, { token: Redacted.make("300:another-bot") })
        assert.strictEqual(yield* storage.ingressOffset(a.id), 0)
        assert.strictEqual(yield* storage.ingressOffset(b.id), 71)
        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 10), held(a.id, update(50)))

        assert.strictEqual(yield* storage.commitUpdates(a.id, [update(7)], 8), 1)
        assert.strictEqual(yield* storage.ingressOffset(a.id), 8)
      }))

    test("deleteBot removes the bot's inbox, ingress offset and deliveries", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.commitUpdates(a.id, [update(1), update(2)], 3)
        yield* storage.commitUpdates(b.id, [update(1), update(2)], 3)
        yield* storage.completeUpdates([completion(a.id, 1, {
          deliveries: [newDelivery(a.id, 1), newDelivery(b.id, 1)]
        })])
        yield* storage.completeUpdates([
          completion(b.id, 1, { deliveries: [newDelivery(b.id, 1, { created_at: t2 })] })
        ])
        yield* storage.recordAttempts([[1, { status: "dead", at: t2, last_error: "gone" }]])

        assert.isTrue(yield* storage.deleteBot(a.id))
        assert.strictEqual(yield* storage.ingressOffset(a.id), 0)
        assert.deepStrictEqual(yield* storage.pendingUpdates(a.id, 10), [])
        assert.isTrue(Option.isNone(yield* nextDelivery(storage, a.id)))
        assert.deepStrictEqual(yield* storage.listDeliveries({ bot_id: a.id, limit: 10 }), [])
        assert.isTrue(Option.isNone(yield* storage.retryDelivery(1, t2)))
        assert.deepStrictEqual(yield* storage.botsWithWork, [b.id])

        assert.strictEqual(yield* storage.ingressOffset(b.id), 3)
        assert.deepStrictEqual(yield* storage.pendingUpdates(b.id, 10), held(b.id, update(2)))
        assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [3, 2])

        const c = yield* storage.insertBot(botInput(3))
        assert.strictEqual(yield* storage.ingressOffset(c.id), 0)
        assert.deepStrictEqual(yield* storage.pendingUpdates(c.id, 10), [])
        yield* storage.commitUpdates(c.id, [update(1)], 2)
        yield* storage.completeUpdates([completion(c.id, 1, { deliveries: [newDelivery(c.id, 1)] })])
        assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [4, 3, 2])
      }))
  })
}
