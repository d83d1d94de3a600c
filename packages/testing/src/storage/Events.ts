import { BotStore, EventStore, type LiveEvent } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { botInput, type Runner, t0, t1, t2 } from "./Fixtures.js"

const entry = (
  botId: number,
  chatId: number,
  n: number,
  overrides: Partial<LiveEvent.NewLogEntry> = {}
): LiveEvent.NewLogEntry => ({
  bot_id: botId,
  chat_id: chatId,
  type: "message",
  data: JSON.stringify({ type: "message", bot_id: botId, chat_id: chatId, n }),
  created_at: t0,
  ...overrides
})

/** The `n`s of entries made by `entry`, in the order read. */
const ns = (entries: ReadonlyArray<LiveEvent.LogEntry>) =>
  entries.map((e) => e.type === "message" ? (JSON.parse(e.data) as { n: number }).n : e.type)

/** The conformance tests for the event log. */
export const events = (run: Runner): void => {
  const test = run(EventStore.EventStore)
  const withBots = run(EventStore.EventStore, BotStore.BotStore)
  describe("event log", () => {
    test("appends in order with increasing ids and reads back what it appended", (storage) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* storage.appendEvents([]), [])
        assert.isTrue(Option.isNone(yield* storage.oldestEventId))
        assert.isTrue(Option.isNone(yield* storage.newestEvent))
        const ids = yield* storage.appendEvents([entry(1, 10, 1), entry(2, 20, 2, { type: "chat", created_at: t1 })])
        const more = yield* storage.appendEvents([entry(1, 10, 3)])
        assert.strictEqual(ids.length, 2)
        assert.isAbove(ids[1]!, ids[0]!)
        assert.isAbove(more[0]!, ids[1]!)
        const all = yield* storage.readEvents({ after: 0, limit: 10 })
        assert.deepStrictEqual(all, [
          { id: ids[0]!, ...entry(1, 10, 1) },
          { id: ids[1]!, ...entry(2, 20, 2, { type: "chat", created_at: t1 }) },
          { id: more[0]!, ...entry(1, 10, 3) }
        ])
        assert.deepStrictEqual(yield* storage.oldestEventId, Option.some(ids[0]!))
        assert.deepStrictEqual(yield* storage.newestEvent, Option.some({ id: more[0]!, ...entry(1, 10, 3) }))
      }))

    test("reads after an id, a page at a time", (storage) =>
      Effect.gen(function*() {
        const ids = yield* storage.appendEvents([1, 2, 3, 4, 5].map((n) => entry(1, 10, n)))
        assert.deepStrictEqual(ns(yield* storage.readEvents({ after: ids[1]!, limit: 2 })), [3, 4])
        assert.deepStrictEqual(ns(yield* storage.readEvents({ after: ids[3]!, limit: 2 })), [5])
        assert.deepStrictEqual(yield* storage.readEvents({ after: ids[4]!, limit: 2 }), [])
      }))

    test("reads the bots and chat a query names, and the log's markers (bot 0) whatever it names", (storage) =>
      Effect.gen(function*() {
        yield* storage.appendEvents([
          entry(1, 10, 1),
          entry(2, 10, 2),
          entry(1, 11, 3),
          entry(0, 0, 0, { type: "reset", data: "{}" }),
          entry(3, 10, 4)
        ])
        const read = (query: Omit<LiveEvent.LogQuery, "after" | "limit">) =>
          Effect.map(storage.readEvents({ after: 0, limit: 10, ...query }), ns)
        assert.deepStrictEqual(yield* read({}), [1, 2, 3, "reset", 4])
        assert.deepStrictEqual(yield* read({ bot_ids: [1] }), [1, 3, "reset"])
        assert.deepStrictEqual(yield* read({ bot_ids: [1, 3] }), [1, 3, "reset", 4])
        assert.deepStrictEqual(yield* read({ bot_ids: [] }), ["reset"])
        assert.deepStrictEqual(yield* read({ chat_id: 10 }), [1, 2, "reset", 4])
        assert.deepStrictEqual(yield* read({ bot_ids: [1], chat_id: 11 }), [3, "reset"])
      }))

    test("prunes only entries both older than the time and not among the newest kept, oldest first", (storage) =>
      Effect.gen(function*() {
        const ids = yield* storage.appendEvents([
          entry(1, 10, 1),
          entry(1, 10, 2),
          entry(1, 10, 3),
          entry(1, 10, 4, { created_at: t1 }),
          entry(1, 10, 5, { created_at: t2 }),
          entry(1, 10, 6, { created_at: t2 })
        ])
        assert.strictEqual(yield* storage.pruneEvents(t0, 0, 100), 0, "nothing is older than t0")
        assert.strictEqual(yield* storage.pruneEvents(t2, 4, 100), 2, "the newest 4 stay though older")
        assert.deepStrictEqual(ns(yield* storage.readEvents({ after: 0, limit: 10 })), [3, 4, 5, 6])
        assert.deepStrictEqual(yield* storage.oldestEventId, Option.some(ids[2]!))
        assert.strictEqual(yield* storage.pruneEvents(t2, 0, 1), 1, "at most limit")
        assert.strictEqual(yield* storage.pruneEvents(t2, 0, 100), 1, "entries of t2 are not older than t2")
        assert.deepStrictEqual(ns(yield* storage.readEvents({ after: 0, limit: 10 })), [5, 6])
        const [next] = yield* storage.appendEvents([entry(1, 10, 7)])
        assert.isAbove(next!, ids[5]!, "ids are never reused")
      }))

    test("ids are never reused once the newest entries are pruned", (storage) =>
      Effect.gen(function*() {
        const ids = yield* storage.appendEvents([entry(1, 10, 1), entry(1, 10, 2)])
        assert.strictEqual(yield* storage.pruneEvents(t2, 0, 100), 2)
        assert.isTrue(Option.isNone(yield* storage.oldestEventId))
        const [next] = yield* storage.appendEvents([entry(1, 10, 3)])
        assert.isAbove(next!, ids[1]!)
      }))

    withBots("deleting a bot removes its entries and no other", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.appendEvents([entry(a.id, 10, 1), entry(b.id, 10, 2), entry(0, 0, 0, { type: "stop" }), entry(a.id, 11, 3)])
        assert.isTrue(yield* storage.deleteBot(a.id))
        assert.deepStrictEqual(ns(yield* storage.readEvents({ after: 0, limit: 10 })), [2, "stop"])
      }))
  })
}
