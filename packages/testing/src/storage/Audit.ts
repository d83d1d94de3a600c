import { type Audit, AuditStore, BotStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { botInput, type Runner, t0, t1, t2 } from "./Fixtures.js"

const entry = (n: number, overrides: Partial<Audit.NewAuditEntry> = {}): Audit.NewAuditEntry => ({
  at: t0,
  actor_type: "key",
  actor_id: 1,
  actor_name: "admin",
  ip: "127.0.0.1",
  action: "bots.add",
  target_type: "bot",
  target_id: String(n),
  bot_id: null,
  chat_id: null,
  outcome: "ok",
  details: { n },
  ...overrides
})

/** The `n`s of entries made by `entry`, in the order read. */
const ns = (entries: ReadonlyArray<Audit.AuditEntry>) => entries.map((e) => e.details.n)

/** The conformance tests for the audit log. */
export const audit = (run: Runner): void => {
  const test = run(AuditStore.AuditStore)
  const withBots = run(AuditStore.AuditStore, BotStore.BotStore)
  describe("audit log", () => {
    test("appends in order with increasing ids and reads back every field, newest first", (storage) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* storage.appendAudit([]), [])
        assert.deepStrictEqual(yield* storage.listAudit({ limit: 10 }), [])
        const details = { name: "Shop — магазин 🛒", nested: { list: [1, "two", null, { deep: true }] }, empty: {} }
        const first = entry(1, { details, bot_id: 7, chat_id: -1001234567890, at: t1, outcome: "failed" })
        const second = entry(2, { actor_type: "system", actor_id: 0, actor_name: "", ip: "", target_type: "" })
        const ids = yield* storage.appendAudit([first, second])
        const more = yield* storage.appendAudit([entry(3, { outcome: "denied" })])
        assert.strictEqual(ids.length, 2)
        assert.isAbove(ids[1]!, ids[0]!)
        assert.isAbove(more[0]!, ids[1]!)
        assert.deepStrictEqual(yield* storage.listAudit({ limit: 10 }), [
          { id: more[0]!, ...entry(3, { outcome: "denied" }) },
          { id: ids[1]!, ...second },
          { id: ids[0]!, ...first }
        ])
      }))

    test("filters by actor, action and bot, alone and together", (storage) =>
      Effect.gen(function*() {
        yield* storage.appendAudit([
          entry(1),
          entry(2, { actor_type: "account", actor_id: 1, action: "chats.ban", bot_id: 5, chat_id: 9 }),
          entry(3, { actor_id: 2, bot_id: 5 }),
          entry(4, { actor_type: "account", actor_id: 2, action: "chats.ban", bot_id: 6 }),
          entry(5, { actor_type: "cli", actor_id: 0, action: "keys.create" })
        ])
        const list = (query: Omit<Audit.AuditQuery, "limit">) => Effect.map(storage.listAudit({ limit: 10, ...query }), ns)
        assert.deepStrictEqual(yield* list({}), [5, 4, 3, 2, 1])
        assert.deepStrictEqual(yield* list({ actor_type: "key" }), [3, 1])
        assert.deepStrictEqual(yield* list({ actor_type: "account", actor_id: 2 }), [4])
        assert.deepStrictEqual(yield* list({ actor_id: 1 }), [2, 1])
        assert.deepStrictEqual(yield* list({ action: "chats.ban" }), [4, 2])
        assert.deepStrictEqual(yield* list({ bot_id: 5 }), [3, 2])
        assert.deepStrictEqual(yield* list({ action: "chats.ban", bot_id: 5 }), [2])
        assert.deepStrictEqual(yield* list({ actor_type: "key", actor_id: 1, action: "bots.add" }), [1])
        assert.deepStrictEqual(yield* list({ action: "bots" }), [], "actions match whole")
        assert.deepStrictEqual(yield* list({ bot_id: 99 }), [])
      }))

    test("pages newest first from a cursor id, with filters", (storage) =>
      Effect.gen(function*() {
        const ids = yield* storage.appendAudit([1, 2, 3, 4, 5, 6].map((n) => entry(n, { bot_id: n % 2 })))
        assert.deepStrictEqual(ns(yield* storage.listAudit({ limit: 2 })), [6, 5])
        assert.deepStrictEqual(ns(yield* storage.listAudit({ limit: 2, before_id: ids[4]! })), [4, 3])
        assert.deepStrictEqual(ns(yield* storage.listAudit({ limit: 2, before_id: ids[2]! })), [2, 1])
        assert.deepStrictEqual(yield* storage.listAudit({ limit: 2, before_id: ids[0]! }), [])
        assert.deepStrictEqual(ns(yield* storage.listAudit({ limit: 2, bot_id: 0, before_id: ids[5]! })), [4, 2])
      }))

    test("reads a time range: from inclusive, to exclusive", (storage) =>
      Effect.gen(function*() {
        yield* storage.appendAudit([entry(1), entry(2, { at: t1 }), entry(3, { at: t2 })])
        const list = (query: Omit<Audit.AuditQuery, "limit">) => Effect.map(storage.listAudit({ limit: 10, ...query }), ns)
        assert.deepStrictEqual(yield* list({ from: t1 }), [3, 2])
        assert.deepStrictEqual(yield* list({ to: t1 }), [1])
        assert.deepStrictEqual(yield* list({ from: t0, to: t2 }), [2, 1])
        assert.deepStrictEqual(yield* list({ from: t2, to: t2 }), [])
        assert.deepStrictEqual(yield* list({ from: t1, action: "bots.add", before_id: 1_000_000 }), [3, 2])
      }))

    test("prunes entries from before a time, oldest first, at most the limit; ids are never reused", (storage) =>
      Effect.gen(function*() {
        const ids = yield* storage.appendAudit([
          entry(1),
          entry(2),
          entry(3, { at: t1 }),
          entry(4, { at: t2 })
        ])
        assert.strictEqual(yield* storage.pruneAudit(t0, 100), 0, "nothing is before t0")
        assert.strictEqual(yield* storage.pruneAudit(t2, 1), 1, "at most limit")
        assert.deepStrictEqual(ns(yield* storage.listAudit({ limit: 10 })), [4, 3, 2])
        assert.strictEqual(yield* storage.pruneAudit(t2, 100), 2, "entries of t2 are not before t2")
        assert.deepStrictEqual(ns(yield* storage.listAudit({ limit: 10 })), [4])
        assert.strictEqual(yield* storage.pruneAudit("9999-12-31T00:00:00.000Z", 100), 1)
        const [next] = yield* storage.appendAudit([entry(5)])
        assert.isAbove(next!, ids[3]!)
      }))

    withBots("entries outlive the bot they name", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.appendAudit([entry(1, { bot_id: bot.id, chat_id: 10 })])
        assert.isTrue(yield* storage.deleteBot(bot.id))
        assert.deepStrictEqual(ns(yield* storage.listAudit({ limit: 10, bot_id: bot.id })), [1])
      }))
  })
}
