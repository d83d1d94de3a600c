import { EventStore } from "@botrelay/core"
import { SecretKey, SqliteStores } from "@botrelay/sqlite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { migrateBefore } from "./Open.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "botrelay-event-ids-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("0018_event_ids", () => {
  it.scoped("keeps the entries and goes on above every id AUTOINCREMENT handed out, pruned ones too", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const key = SecretKey.generate()
      const host = new Database(file)
      yield* migrateBefore(host, key, "0018_event_ids")
      const insert = host.prepare(
        "INSERT INTO botrelay_events (bot_id, chat_id, type, data, created_at) VALUES (1, 10, 'message', ?, ?)"
      )
      for (const n of [1, 2, 3]) insert.run(JSON.stringify({ n }), `2025-01-0${n}T00:00:00.000Z`)
      host.prepare("DELETE FROM botrelay_events WHERE id = 3").run()
      host.close()

      const stores = yield* SqliteStores.make({ filename: file, secretKey: key })
      const events = Context.get(stores, EventStore.EventStore)
      assert.deepStrictEqual(
        (yield* events.readEvents({ after: 0, limit: 10 })).map((e) => [e.id, e.data, e.created_at]),
        [[1, "{\"n\":1}", "2025-01-01T00:00:00.000Z"], [2, "{\"n\":2}", "2025-01-02T00:00:00.000Z"]]
      )
      const entry = { bot_id: 1, chat_id: 10, type: "message" as const, data: "{}", created_at: "2025-01-04T00:00:00.000Z" }
      assert.deepStrictEqual(yield* events.appendEvents([entry, entry]), [4, 5])
      assert.strictEqual(yield* events.pruneEvents("2025-01-03T00:00:00.000Z", 0, 100), 2)
      assert.deepStrictEqual(yield* events.appendEvents([entry]), [6])
    }))
})
