import { BotStore, InboxStore, MappingStore, OutboxStore, type RouteSend } from "@botrelay/core"
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
  newSend,
  queuedSend,
  newMapping,
  completion,
  ids
} from "./Fixtures.js"

/** The conformance tests for route sends and route mappings. */
export const routeSends = (run: Runner): void => {
  const test = run(BotStore.BotStore, MappingStore.MappingStore, InboxStore.InboxStore, OutboxStore.OutboxStore)
  describe("route sends", () => {
    /** Completes a fresh update of `sourceBotId` that queues `sends`, received at t2 so pruning keeps it. */
    const queue = (
      storage: InboxStore.InboxStoreService,
      sourceBotId: number,
      sends: ReadonlyArray<RouteSend.NewRouteSend>
    ) =>
      Effect.gen(function*() {
        const updateIds = [...new Set(sends.map((send) => send.update_id))]
        const offset = Math.max(yield* storage.ingressOffset(sourceBotId), ...updateIds.map((id) => id + 1))
        yield* storage.commitUpdates(sourceBotId, updateIds.map((id) => update(id, { received_at: t2 })), offset)
        yield* storage.completeUpdates(
          updateIds.map((id) => completion(sourceBotId, id, { sends: sends.filter((send) => send.update_id === id) }))
        )
      })

    const sent = (at: string): RouteSend.SendOutcome => ({ status: "sent", at })

    const sendIds = (storage: OutboxStore.OutboxStoreService, filter: Parameters<OutboxStore.OutboxStoreService["listSends"]>[0]) =>
      storage.listSends(filter).pipe(Effect.map(ids))

    const produced = (storage: MappingStore.MappingStoreService, chatId: number, messageId: number) =>
      storage.findProduced(chatId, messageId).pipe(Effect.map(Option.map((m) => m.id)))

    test("completeUpdates queues route sends as pending, and completing again queues none", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.commitUpdates(a.id, [update(1), update(2)], 3)
        const inputs = [
          newSend(b.id, a.id, 1),
          newSend(b.id, a.id, 1, { kind: "copy", route_id: 2, chat_id: 300, reply_to_message_id: 5, hop: 1 }),
          newSend(a.id, a.id, 2, { kind: "reply", route_id: 3, from_chat_id: 300, chat_id: 100, created_at: t2 })
        ]
        yield* storage.completeUpdates([
          completion(a.id, 1, { sends: inputs.slice(0, 2), deliveries: [newDelivery(a.id, 1)] }),
          completion(a.id, 2, { sends: inputs.slice(2) })
        ])
        const all = [queuedSend(3, inputs[2]!), queuedSend(2, inputs[1]!), queuedSend(1, inputs[0]!)]
        assert.deepStrictEqual(yield* storage.listSends({ limit: 10 }), all)

        yield* storage.completeUpdates([
          completion(a.id, 1, { sends: [newSend(b.id, a.id, 1)] }),
          completion(a.id, 99, { sends: [newSend(b.id, a.id, 99)] }),
          completion(b.id, 1, { sends: [newSend(a.id, b.id, 1)] })
        ])
        assert.deepStrictEqual(yield* storage.listSends({ limit: 10 }), all)
        assert.deepStrictEqual(ids(yield* storage.listDeliveries({ limit: 10 })), [1])

        yield* storage.commitUpdates(a.id, [update(3)], 4)
        yield* storage.completeUpdates([completion(a.id, 3, { sends: [newSend(b.id, a.id, 3)] })])
        assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [4, 3, 2, 1])
      }))

    test("nextSends are the bot's pending sends in id order, due or not, at most limit", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        assert.deepStrictEqual(yield* storage.nextSends(b.id, 10), [])
        const inputs = [b.id, b.id, c.id, b.id].map((botId) => newSend(botId, a.id, 1))
        yield* queue(storage, a.id, inputs)
        const later = "2099-01-01T00:00:00.000Z"
        yield* storage.recordSend(1, sent(t2), [])
        yield* storage.recordSend(2, { status: "pending", at: t2, next_attempt_at: later, last_error: "429" }, [])
        assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 10)), [2, 4])
        assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 1)), [2])
        assert.deepStrictEqual(yield* storage.nextSends(c.id, 10), [queuedSend(3, inputs[2]!)])
        assert.deepStrictEqual(yield* storage.nextSends(a.id, 10), [])
        assert.deepStrictEqual(yield* storage.nextSends(99, 10), [])

        yield* storage.recordSend(2, { status: "dead", at: t2, last_error: "403" }, [])
        assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 10)), [4])
        yield* storage.recordSend(4, sent(t2), [])
        assert.deepStrictEqual(yield* storage.nextSends(b.id, 10), [])
      }))

    test("recordSend records sent, pending and dead outcomes and counts every attempt", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const inputs = [newSend(b.id, a.id, 1), newSend(b.id, a.id, 2), newSend(b.id, a.id, 3)]
        yield* queue(storage, a.id, inputs)
        const find = (id: number) =>
          storage.listSends({ limit: 10 }).pipe(Effect.map((all) => all.find((r) => r.id === id)))

        const retryAt = "2025-03-04T05:07:07.000Z"
        yield* storage.recordSend(1, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 500" }, [])
        yield* storage.recordSend(
          1,
          { status: "pending", at: t2, next_attempt_at: retryAt, last_error: "timeout" },
          []
        )
        const retried = {
          ...queuedSend(1, inputs[0]!),
          attempts: 2,
          next_attempt_at: retryAt,
          last_error: "timeout",
          updated_at: t2
        }
        assert.deepStrictEqual(yield* find(1), retried)
        const sentAt = "2025-03-04T05:08:00.000Z"
        yield* storage.recordSend(1, sent(sentAt), [])
        assert.deepStrictEqual(yield* find(1), {
          ...retried,
          status: "sent",
          attempts: 3,
          last_error: "",
          updated_at: sentAt
        })

        yield* storage.recordSend(2, { status: "pending", at: t1, next_attempt_at: t2, last_error: "HTTP 502" }, [])
        const deadError = "Forbidden: bot was blocked by the user"
        yield* storage.recordSend(2, { status: "dead", at: sentAt, last_error: deadError }, [])
        assert.deepStrictEqual(yield* find(2), {
          ...queuedSend(2, inputs[1]!),
          status: "dead",
          attempts: 2,
          next_attempt_at: t2,
          last_error: deadError,
          updated_at: sentAt
        })

        yield* storage.recordSend(3, sent(t2), [])
        assert.deepStrictEqual(yield* find(3), {
          ...queuedSend(3, inputs[2]!),
          status: "sent",
          attempts: 1,
          updated_at: t2
        })
      }))

    test("recordSend adds the mappings with the attempt; an unknown id records nothing", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
        const first = newMapping(a.id, b.id, 10, { route_id: 7, source_chat_id: 101, source_message_id: 3, hop: 2 })
        const second = newMapping(a.id, b.id, 11, { reversible: false, target_chat_id: 201, created_at: t2 })
        yield* storage.recordSend(1, sent(t2), [first, second])
        assert.deepStrictEqual(yield* storage.findProduced(200, 10), Option.some({ id: 1, ...first }))
        assert.deepStrictEqual(yield* storage.findProduced(201, 11), Option.some({ id: 2, ...second }))
        assert.deepStrictEqual(yield* storage.findReverse(b.id, 200, 10, t0), Option.some({ id: 1, ...first }))

        yield* storage.recordSend(99, sent(t2), [newMapping(a.id, b.id, 12)])
        yield* storage.recordSend(99, { status: "dead", at: t2, last_error: "x" }, [newMapping(a.id, b.id, 12)])
        assert.isTrue(Option.isNone(yield* storage.findProduced(200, 12)))
        assert.deepStrictEqual(
          (yield* storage.listSends({ limit: 10 })).map((r) => [r.id, r.status, r.attempts]),
          [[1, "sent", 1]]
        )

        yield* storage.recordSend(1, sent(t2), [newMapping(a.id, b.id, 13)])
        assert.deepStrictEqual(yield* produced(storage, 200, 13), Option.some(3))
      }))

    test("listSends is newest first, filters by sending bot and status and honours the limit", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        yield* queue(storage, a.id, [newSend(b.id, a.id, 1), newSend(b.id, a.id, 1), newSend(c.id, a.id, 1)])
        yield* queue(storage, c.id, [newSend(a.id, c.id, 1), newSend(b.id, c.id, 1)])
        yield* queue(storage, a.id, [newSend(b.id, a.id, 2)])
        yield* storage.recordSend(2, { status: "dead", at: t2, last_error: "x" }, [])
        yield* storage.recordSend(4, { status: "dead", at: t2, last_error: "x" }, [])
        yield* storage.recordSend(1, sent(t2), [])

        assert.deepStrictEqual(yield* sendIds(storage, { limit: 100 }), [6, 5, 4, 3, 2, 1])
        assert.deepStrictEqual(yield* sendIds(storage, { limit: 2 }), [6, 5])
        assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, limit: 100 }), [6, 5, 2, 1])
        assert.deepStrictEqual(yield* sendIds(storage, { bot_id: a.id, limit: 100 }), [4])
        assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, limit: 1 }), [6])
        assert.deepStrictEqual(yield* sendIds(storage, { status: "dead", limit: 100 }), [4, 2])
        assert.deepStrictEqual(yield* sendIds(storage, { status: "sent", limit: 100 }), [1])
        assert.deepStrictEqual(yield* sendIds(storage, { status: "pending", limit: 100 }), [6, 5, 3])
        assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, status: "pending", limit: 100 }), [6, 5])
        assert.deepStrictEqual(yield* sendIds(storage, { bot_id: b.id, status: "pending", limit: 1 }), [6])
        assert.deepStrictEqual(yield* sendIds(storage, { bot_id: c.id, status: "dead", limit: 100 }), [])
        assert.deepStrictEqual(yield* sendIds(storage, { bot_id: 99, limit: 100 }), [])
        const [newest] = yield* storage.listSends({ limit: 1 })
        assert.deepStrictEqual(newest, queuedSend(6, newSend(b.id, a.id, 2)))
      }))

    test("findReverse is the newest reversible mapping of the bot's message created since a time", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
        yield* storage.recordSend(1, sent(t2), [
          newMapping(a.id, b.id, 10, { created_at: t0 }),
          newMapping(a.id, b.id, 10, { route_id: 2, created_at: t1 }),
          newMapping(a.id, b.id, 10, { reversible: false, created_at: t2 }),
          newMapping(a.id, c.id, 10, { created_at: t1 }),
          newMapping(a.id, b.id, 11, { created_at: t1 }),
          newMapping(a.id, b.id, 10, { target_chat_id: 201, created_at: t1 })
        ])
        const reverse = (botId: number, chatId: number, messageId: number, since: string) =>
          storage.findReverse(botId, chatId, messageId, since).pipe(Effect.map(Option.map((m) => m.id)))

        assert.deepStrictEqual(
          yield* storage.findReverse(b.id, 200, 10, t0),
          Option.some({ id: 2, ...newMapping(a.id, b.id, 10, { route_id: 2, created_at: t1 }) })
        )
        assert.deepStrictEqual(yield* reverse(b.id, 200, 10, t1), Option.some(2))
        assert.isTrue(Option.isNone(yield* reverse(b.id, 200, 10, "2025-02-03T04:05:06.001Z")))
        assert.isTrue(Option.isNone(yield* reverse(b.id, 200, 10, t2)))
        assert.deepStrictEqual(yield* reverse(c.id, 200, 10, t0), Option.some(4))
        assert.deepStrictEqual(yield* reverse(b.id, 200, 11, t0), Option.some(5))
        assert.deepStrictEqual(yield* reverse(b.id, 201, 10, t0), Option.some(6))
        assert.isTrue(Option.isNone(yield* reverse(a.id, 200, 10, t0)))
        assert.isTrue(Option.isNone(yield* reverse(b.id, 200, 12, t0)))
        assert.isTrue(Option.isNone(yield* reverse(b.id, 202, 10, t0)))

        yield* storage.recordSend(1, sent(t2), [newMapping(a.id, b.id, 10, { created_at: t0 })])
        assert.deepStrictEqual(yield* reverse(b.id, 200, 10, t0), Option.some(7))
        assert.deepStrictEqual(yield* reverse(b.id, 200, 10, t1), Option.some(2))
      }))

    test("findProduced is the newest mapping of any bot whose target is the message", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
        assert.isTrue(Option.isNone(yield* storage.findProduced(200, 10)))
        const last = newMapping(b.id, c.id, 10, { reversible: false, created_at: t0 })
        yield* storage.recordSend(1, sent(t2), [
          newMapping(a.id, b.id, 10, { created_at: t2 }),
          last,
          newMapping(a.id, b.id, 10, { target_chat_id: 300 })
        ])
        assert.deepStrictEqual(yield* storage.findProduced(200, 10), Option.some({ id: 2, ...last }))
        assert.deepStrictEqual(yield* produced(storage, 300, 10), Option.some(3))
        assert.isTrue(Option.isNone(yield* storage.findProduced(200, 11)))
        assert.isTrue(Option.isNone(yield* storage.findProduced(100, 10)))
      }))

    test("pruneMappings deletes at most limit mappings created before the cutoff", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* queue(storage, a.id, [newSend(b.id, a.id, 1)])
        assert.strictEqual(yield* storage.pruneMappings(t2, 10), 0)
        yield* storage.recordSend(1, sent(t2), [
          newMapping(a.id, b.id, 1, { created_at: t0 }),
          newMapping(a.id, b.id, 2, { created_at: t1 }),
          newMapping(a.id, b.id, 3, { created_at: t0 }),
          newMapping(a.id, b.id, 4, { created_at: t2 }),
          newMapping(a.id, b.id, 5, { created_at: t0 })
        ])
        const left = Effect.forEach([1, 2, 3, 4, 5], (n) => produced(storage, 200, n)).pipe(
          Effect.map((found) => found.flatMap(Option.toArray))
        )
        assert.strictEqual(yield* storage.pruneMappings(t1, 2), 2)
        assert.strictEqual((yield* left).length, 3)
        assert.strictEqual(yield* storage.pruneMappings(t1, 2), 1)
        assert.deepStrictEqual(yield* left, [2, 4])
        assert.strictEqual(yield* storage.pruneMappings(t1, 2), 0)
        assert.strictEqual(yield* storage.pruneMappings(t2, 10), 1)
        assert.deepStrictEqual(yield* left, [4])
      }))

    test("pruneFinished deletes old sent route sends, at most limit, and keeps pending and dead ones", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const inputs = Array.from({ length: 7 }, (_, i) => newSend(b.id, a.id, i + 1, { created_at: t0 }))
        yield* queue(storage, a.id, inputs)
        yield* storage.recordSend(1, sent(t0), [])
        yield* storage.recordSend(2, { status: "dead", at: t0, last_error: "403" }, [])
        yield* storage.recordSend(3, { status: "pending", at: t0, next_attempt_at: t0, last_error: "429" }, [])
        yield* storage.recordSend(4, sent(t2), [])
        yield* storage.recordSend(5, sent(t0), [])
        yield* storage.recordSend(6, sent(t0), [])
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 0, deliveries: 0, sends: 2 })
        assert.deepStrictEqual(yield* sendIds(storage, { status: "sent", limit: 10 }), [6, 4])
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 0, deliveries: 0, sends: 1 })
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 2), { updates: 0, deliveries: 0, sends: 0 })
        assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [7, 4, 3, 2])
        assert.deepStrictEqual(ids(yield* storage.nextSends(b.id, 10)), [3, 7])
      }))

    test("a send reads its payload from the receiving bot's inbox, and reads \"\" once the inbox dropped it", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const payload = "{\"update_id\":1,\"message\":{\"message_id\":1,\"text\":\"привет\"}}"
        yield* storage.commitUpdates(a.id, [update(1, { payload, received_at: t0 })], 2)
        yield* storage.completeUpdates([completion(a.id, 1, { sends: [newSend(b.id, a.id, 1)] })])
        assert.deepStrictEqual((yield* storage.nextSends(b.id, 10)).map((r) => r.payload), [payload])
        assert.deepStrictEqual(yield* storage.pruneFinished(t1, 10), { updates: 1, deliveries: 0, sends: 0 })
        assert.deepStrictEqual((yield* storage.nextSends(b.id, 10)).map((r) => r.payload), [""])
        assert.deepStrictEqual((yield* storage.listSends({ limit: 10 })).map((r) => r.payload), [""])
      }))

    test("botsWithWork includes bots with pending route sends only", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        yield* queue(storage, a.id, [newSend(c.id, a.id, 1), newSend(b.id, a.id, 1)])
        assert.deepStrictEqual(yield* storage.botsWithWork, [b.id, c.id])
        yield* storage.recordSend(1, { status: "pending", at: t2, next_attempt_at: t2, last_error: "429" }, [])
        assert.deepStrictEqual(yield* storage.botsWithWork, [b.id, c.id])
        yield* storage.recordSend(1, sent(t2), [])
        assert.deepStrictEqual(yield* storage.botsWithWork, [b.id])
        yield* storage.recordSend(2, { status: "dead", at: t2, last_error: "403" }, [])
        assert.deepStrictEqual(yield* storage.botsWithWork, [])
        assert.strictEqual(yield* storage.backlog(b.id), 0)
      }))

    test("deleteBot removes the sends the bot makes and the mappings it is source or target of", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3))
        yield* queue(storage, a.id, [newSend(b.id, a.id, 1), newSend(c.id, a.id, 1), newSend(b.id, a.id, 2)])
        yield* queue(storage, b.id, [newSend(c.id, b.id, 1)])
        yield* storage.recordSend(1, sent(t2), [newMapping(a.id, b.id, 1), newMapping(c.id, a.id, 4)])
        yield* storage.recordSend(2, sent(t2), [newMapping(a.id, c.id, 2), newMapping(b.id, c.id, 3)])

        assert.isTrue(yield* storage.deleteBot(b.id))
        assert.deepStrictEqual(yield* storage.listSends({ bot_id: b.id, limit: 10 }), [])
        assert.deepStrictEqual(yield* storage.nextSends(b.id, 10), [])
        assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [4, 2])
        assert.deepStrictEqual(yield* storage.botsWithWork, [c.id])
        assert.isTrue(Option.isNone(yield* storage.findProduced(200, 1)))
        assert.isTrue(Option.isNone(yield* storage.findProduced(200, 3)))
        assert.deepStrictEqual(yield* produced(storage, 200, 2), Option.some(3))
        assert.deepStrictEqual(yield* produced(storage, 200, 4), Option.some(2))
        assert.isTrue(Option.isNone(yield* storage.findReverse(b.id, 200, 1, t0)))

        const d = yield* storage.insertBot(botInput(4))
        yield* queue(storage, a.id, [newSend(d.id, a.id, 3)])
        assert.deepStrictEqual(yield* sendIds(storage, { limit: 10 }), [5, 4, 2])
      }))
  })
}
