import { InboxStore, MessageStore } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect } from "effect"

/** The query plan of each DELETE that `pruneFinished` runs, by table. */
const prunePlans = Effect.gen(function*() {
  const statements: Array<string> = []
  const database = new Database(":memory:", { verbose: (sql) => statements.push(String(sql)) })
  yield* Effect.addFinalizer(() => Effect.sync(() => database.open && database.close()))
  const inbox = Context.get(yield* SqliteStores.make({ database }), InboxStore.InboxStore)
  statements.length = 0
  yield* inbox.pruneFinished("2025-01-01T00:00:00.000Z", 1000)
  const plans = new Map<string, ReadonlyArray<string>>()
  for (const sql of statements) {
    const table = /^delete from "(\w+)"/i.exec(sql)?.[1]
    if (table === undefined) continue
    const rows = database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ readonly detail: string }>
    plans.set(table, rows.map((row) => row.detail))
  }
  return plans
})

describe("pruning finished work", () => {
  it.scoped("finds old rows by an index search in the order it deletes them: no scan, no sort", () =>
    Effect.gen(function*() {
      const plans = yield* prunePlans
      const expected = {
        botrelay_inbox: "botrelay_inbox_processed_received (received_at<?)",
        botrelay_route_sends: "botrelay_route_sends_sent_updated (updated_at<?)"
      }
      assert.deepStrictEqual([...plans.keys()].sort(), [...Object.keys(expected), "botrelay_deliveries"].sort())
      for (const [table, index] of Object.entries(expected)) {
        const plan = plans.get(table)!
        assert.isTrue(plan.some((step) => step.startsWith("SEARCH") && step.endsWith(index)), `${table}: ${plan.join("; ")}`)
        assert.isFalse(plan.some((step) => step.startsWith("SCAN") || step.includes("TEMP B-TREE")), `${table}: ${plan.join("; ")}`)
      }
    }))

  it.scoped("walks deliveries oldest first, in the order it deletes them, without a sort or an index it must keep up", () =>
    Effect.gen(function*() {
      // Marking a delivery delivered changes no index but the pending one's (0029): the prune reads the table in id
      // order, where the oldest finished deliveries come first, and stops at its limit.
      const plan = (yield* prunePlans).get("botrelay_deliveries")!
      assert.deepStrictEqual(plan.filter((step) => step.startsWith("SCAN")), ["SCAN botrelay_deliveries"], plan.join("; "))
      assert.isFalse(plan.some((step) => step.includes("TEMP B-TREE") || step.includes("USING INDEX")), plan.join("; "))
    }))
})

describe("finding a file in a bot's history", () => {
  it.scoped("is an index search on (bot_id, file_id), not a scan of the history", () =>
    Effect.gen(function*() {
      const statements: Array<string> = []
      const database = new Database(":memory:", { verbose: (sql) => statements.push(String(sql)) })
      yield* Effect.addFinalizer(() => Effect.sync(() => database.open && database.close()))
      const messages = Context.get(yield* SqliteStores.make({ database }), MessageStore.MessageStore)
      statements.length = 0
      assert.isFalse(yield* messages.hasFile(1, "BQACAgIAAxkBAAI"))
      const sql = statements.find((s) => /from "botrelay_messages"/i.test(s))!
      const plan = (database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ readonly detail: string }>)
        .map((row) => row.detail)
      assert.isTrue(plan.some((step) => /^SEARCH .*botrelay_messages_file \(bot_id=\? AND file_id=\?\)/.test(step)), plan.join("; "))
      assert.isFalse(plan.some((step) => step.startsWith("SCAN")), plan.join("; "))
    }))
})
