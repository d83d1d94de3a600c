import { SecretKey, type SqliteStores } from "@botrelay/sqlite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { forwardingBot, open } from "./Open.js"

/** What a WAL checkpoint found, and whether a transaction was open when it ran. */
interface Checkpoint {
  readonly log: number
  readonly inTransaction: boolean
}

/** The stores on a WAL database in a temporary folder, with every passive checkpoint they run recorded. */
const onFile = Effect.gen(function*() {
  const folder = mkdtempSync(join(tmpdir(), "botrelay-checkpoints-"))
  const host = new Database(join(folder, "botrelay.db"))
  yield* Effect.addFinalizer(() =>
    Effect.sync(() => {
      host.close()
      rmSync(folder, { recursive: true, force: true })
    })
  )
  host.pragma("journal_mode = WAL")
  host.pragma("synchronous = NORMAL")
  const checkpoints: Array<Checkpoint> = []
  const database: SqliteStores.SqliteDatabase = {
    name: host.name,
    prepare: (sql) => {
      const statement = host.prepare(sql)
      if (sql !== "PRAGMA wal_checkpoint(PASSIVE)") return statement
      return Object.assign(Object.create(statement) as typeof statement, {
        all: () => {
          const inTransaction = host.inTransaction
          const rows = statement.all() as Array<{ readonly log: number }>
          checkpoints.push({ log: rows[0]!.log, inTransaction })
          return rows
        }
      })
    },
    transaction: (fn) => host.transaction(fn),
    close: () => host.close()
  }
  const storage = yield* open({ database, secretKey: SecretKey.generate() })
  const bot = yield* storage.insertBot(forwardingBot(1))
  return { host, storage, bot: bot.id, checkpoints }
})

/** An update whose JSON fills most of a page, so that each commit adds a few WAL frames. */
const update = (updateId: number) => ({
  update_id: updateId,
  payload: JSON.stringify({ update_id: updateId, message: { text: "x".repeat(3000) } }),
  received_at: "2025-01-01T00:00:01.000Z"
})

describe("SQLite WAL checkpoints", () => {
  it.scoped("run after the commits that filled the WAL, outside any transaction, and keep it near 250 frames", () =>
    Effect.gen(function*() {
      const { bot, checkpoints, host, storage } = yield* onFile
      assert.strictEqual(host.pragma("wal_autocheckpoint", { simple: true }), 4000)
      for (let id = 1; id <= 1500; id++) yield* storage.commitUpdates(bot, [update(id)], id + 1)
      // a checkpoint runs on the event loop's next turn after the commit that made it due
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      assert.isAtLeast(checkpoints.length, 2)
      assert.isTrue(checkpoints.every((checkpoint) => !checkpoint.inTransaction))
      // the first is due after 25 commits; the later ones after as many as fill about 250 frames
      for (const { log } of checkpoints) {
        assert.isAtLeast(log, 100)
        assert.isAtMost(log, 400)
      }
      assert.strictEqual(
        (host.prepare("SELECT count(*) AS n FROM botrelay_inbox WHERE bot_id = ?").get(bot) as { n: number }).n,
        1500
      )
    }), { timeout: 60_000 })

  it.scoped("are left to SQLite on a database that is not in WAL mode", () =>
    Effect.gen(function*() {
      const host = new Database(":memory:")
      yield* Effect.addFinalizer(() => Effect.sync(() => host.close()))
      const storage = yield* open({ database: host, secretKey: SecretKey.generate() })
      const bot = yield* storage.insertBot(forwardingBot(1))
      for (let id = 1; id <= 200; id++) yield* storage.commitUpdates(bot.id, [update(id)], id + 1)
      assert.strictEqual(host.pragma("wal_autocheckpoint", { simple: true }), 1000)
      assert.strictEqual(yield* storage.ingressOffset(bot.id), 201)
    }))
})
