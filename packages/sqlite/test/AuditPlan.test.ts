import { AuditStore } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect } from "effect"

const t0 = "2025-01-01T00:00:00.000Z"

/** The audit store on a database that records every statement it runs, with the plan of one. */
const recording = Effect.gen(function*() {
  const statements: Array<string> = []
  const database = new Database(":memory:", { verbose: (sql) => statements.push(String(sql)) })
  yield* Effect.addFinalizer(() => Effect.sync(() => database.open && database.close()))
  const store = Context.get(yield* SqliteStores.make({ database }), AuditStore.AuditStore)
  const planOf = (sql: string) =>
    (database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...sql.split("?").slice(1).map(() => 1)) as Array<{
      readonly detail: string
    }>).map((row) => row.detail)
  return { store, statements, planOf }
})

describe("the audit log's queries", () => {
  it.scoped("a filtered page reads its filter's index in id order, and pruning finds old entries by `at`: no scan, no sort", () =>
    Effect.gen(function*() {
      const { planOf, statements, store } = yield* recording
      const cases: Array<readonly [Parameters<typeof store.listAudit>[0], string]> = [
        [{ actor_type: "key", actor_id: 1, before_id: 10, limit: 51 }, "botrelay_audit_actor (actor_type=? AND actor_id=? AND id<?)"],
        [{ action: "bots.add", limit: 51 }, "botrelay_audit_action (action=?)"],
        [{ bot_id: 3, before_id: 10, limit: 51 }, "botrelay_audit_bot (bot_id=? AND id<?)"]
      ]
      for (const [query, index] of cases) {
        statements.length = 0
        yield* store.listAudit(query)
        const plan = planOf(statements.find((s) => /from "botrelay_audit"/i.test(s))!)
        assert.isTrue(plan.some((step) => step.startsWith("SEARCH") && step.endsWith(index)), plan.join("; "))
        assert.isFalse(plan.some((step) => step.startsWith("SCAN") || step.includes("TEMP B-TREE")), plan.join("; "))
      }
      statements.length = 0
      yield* store.pruneAudit(t0, 1000)
      const plan = planOf(statements.find((s) => /^delete from "botrelay_audit"/i.test(s))!)
      assert.isTrue(plan.some((step) => step.includes("botrelay_audit_at (at<?)")), plan.join("; "))
      assert.isFalse(plan.some((step) => step.startsWith("SCAN") || step.includes("TEMP B-TREE")), plan.join("; "))
    }))
})
