import type { BacklogStore, LongPoll, Sighting } from "@botrelay/core"
import { BotStore } from "@botrelay/core"
import { Migrations, SecretKey, SqliteStores } from "@botrelay/sqlite"
import * as StoreSuite from "@botrelay/testing/StoreSuite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import { Kysely, Migrator, SqliteDialect } from "kysely"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { open } from "./Open.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "botrelay-sqlite-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const freshFile = Layer.unwrapScoped(
  Effect.map(tempDir, (dir) => SqliteStores.layer({ filename: join(dir, "botrelay.db") }))
)

StoreSuite.suite("sqlite", freshFile)
StoreSuite.suite("sqlite :memory:", SqliteStores.layer({ filename: ":memory:" }))

/** Bot `n`, managed, with a webhook secret; its token names it (`n:token-n`). */
const botInput = (n: number) =>
  StoreSuite.botInput(n, {
    token: Redacted.make(`${n}:token-${n}`),
    manage_enabled: true,
    secret_token: Redacted.make("secret")
  })

const message = (botId: number, chatId: number, id: number, date: number) => ({
  id,
  chat_id: chatId,
  bot_id: botId,
  user_id: 7,
  username: "u",
  first_name: "U",
  last_name: "",
  text: `m${id}`,
  date,
  direction: "in" as const,
  edit_date: 0
})

const withRaw = <A>(file: string, f: (db: Database.Database) => A): A => {
  const db = new Database(file, { readonly: true })
  try {
    return f(db)
  } finally {
    db.close()
  }
}

const tableNames = (db: Database.Database): Array<string> =>
  db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as Array<string>

const update = (updateId: number) => ({
  update_id: updateId,
  payload: `{"update_id":${updateId},"message":{"text":"привет 👋","id":123456789012345678901234567890}}`,
  received_at: "2025-01-01T00:00:01.000Z"
})

const bufferEntry = (updateId: number, type = "message") => ({
  type,
  payload: update(updateId).payload,
  created_at: "2025-01-01T00:00:02.000Z"
})

const newDelivery = (botId: number, updateId: number) => ({
  bot_id: botId,
  update_id: updateId,
  url: "https://backend.example/hook",
  payload: update(updateId).payload,
  created_at: "2025-01-01T00:00:02.000Z"
})

/** A database the host opened, recording every statement the driver prepares. */
const recorded = (file: string) =>
  Effect.gen(function*() {
    const host = new Database(file)
    yield* Effect.addFinalizer(() => Effect.sync(() => host.close()))
    const prepared: Array<string> = []
    /** Transactions begun, not counting those nested in another. */
    const transactions = { begun: 0 }
    const database: SqliteStores.SqliteDatabase = {
      name: host.name,
      prepare: (sql) => {
        prepared.push(sql)
        return host.prepare(sql)
      },
      transaction: (fn) => {
        const run = host.transaction(fn)
        return (...args) => {
          if (!host.inTransaction) transactions.begun++
          return run(...args)
        }
      },
      close: () => host.close()
    }
    return { host, prepared, database, transactions }
  })

const queryPlan = (host: Database.Database, sql: string): Array<string> =>
  (host.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...sql.split("?").slice(1).map(() => 1)) as Array<{
    detail: string
  }>).map((row) => row.detail)

describe("SqliteStores", () => {
  it.scoped("data survives closing and reopening the file", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const storage = yield* open({ filename: file })
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.saveMessage(message(bot.id, -100, 1, 10))
        yield* storage.insertApiKey({
          name: "k",
          role: "operator",
          scopes: [{ bot_id: bot.id, chat_ids: [], abilities: ["read"] }],
          prefix: "brk_x",
          created_at: "",
          hash: "h"
        })
        yield* storage.deleteBot((yield* storage.insertBot(botInput(2))).id)
      }))
      const storage = yield* open({ filename: file })
      const bot = Option.getOrThrow(yield* storage.findBotByToken("1:token-1"))
      assert.strictEqual(Redacted.value(bot.secret_token), "secret")
      assert.isTrue(bot.manage_enabled)
      assert.deepStrictEqual(yield* storage.listMessages({ bot_id: bot.id, chat_id: -100, limit: 10, offset: 0 }), [
        message(bot.id, -100, 1, 10)
      ])
      assert.deepStrictEqual(Option.getOrThrow(yield* storage.findApiKeyByHash("h")).bot_ids, [bot.id])
      assert.strictEqual((yield* storage.insertBot(botInput(3))).id, 3)
    }))

  it.scoped("saveMessages saves the others when one cannot be saved, and fails", () =>
    Effect.gen(function*() {
      const storage = yield* open({ filename: join(yield* tempDir, "botrelay.db") })
      const bot = yield* storage.insertBot(botInput(1))
      const gone = yield* storage.insertBot(botInput(2))
      yield* storage.deleteBot(gone.id)
      const saved = yield* Effect.either(storage.saveMessages([
        message(bot.id, 10, 1, 10),
        message(gone.id, 10, 2, 20),
        message(bot.id, 10, 3, 30)
      ]))
      assert.isTrue(Either.isLeft(saved))
      assert.strictEqual(Either.isLeft(saved) ? saved.left.operation : "", "saveMessages")
      const stored = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 10, offset: 0 })
      assert.deepStrictEqual(stored.map((m) => m.id), [3, 1])
    }))

  it.scoped("committed updates, the offset and queued deliveries survive closing and reopening the file", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const storage = yield* open({ filename: file })
        const bot = yield* storage.insertBot(botInput(1))
        assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(100), update(101), update(102)], 103), 3)
        yield* storage.completeUpdates([{
          bot_id: bot.id,
          update_id: 100,
          messages: [message(bot.id, -100, 1, 10)],
          deliveries: [newDelivery(bot.id, 100)]
        }])
      }))
      const storage = yield* open({ filename: file })
      assert.strictEqual(yield* storage.ingressOffset(1), 103)
      assert.deepStrictEqual(yield* storage.pendingUpdates(1, 10), [
        { bot_id: 1, ...update(101) },
        { bot_id: 1, ...update(102) }
      ])
      assert.deepStrictEqual(yield* storage.botsWithWork, [1])
      assert.deepStrictEqual(
        (yield* storage.nextDeliveries(1, 10)).map((d) => [d.id, d.update_id, d.status, d.payload]),
        [[1, 100, "pending", update(100).payload]]
      )
      assert.deepStrictEqual(yield* storage.listMessages({ bot_id: 1, chat_id: -100, limit: 10, offset: 0 }), [
        message(1, -100, 1, 10)
      ])
      assert.strictEqual(yield* storage.commitUpdates(1, [update(100), update(101)], 102), 0)
      assert.strictEqual(yield* storage.ingressOffset(1), 103)
    }))

  it.scoped("a database created before 0002_runtime is upgraded and keeps its data", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const host = new Database(file)
      yield* Effect.addFinalizer(() => Effect.sync(() => host.open && host.close()))
      const { error } = yield* Effect.promise(() =>
        new Migrator({
          db: new Kysely<unknown>({ dialect: new SqliteDialect({ database: host }) }),
          provider: { getMigrations: () => Promise.resolve({ "0001_init": Migrations.migrations(SecretKey.cipher(SecretKey.generate()))["0001_init"]! }) },
          migrationTableName: Migrations.migrationTableName,
          migrationLockTableName: Migrations.migrationLockTableName
        }).migrateToLatest()
      )
      assert.isUndefined(error)
      host.prepare("INSERT INTO botrelay_bots (token, source, created_at, updated_at) VALUES (?, 'cli', '', '')")
        .run("1:old")
      assert.isFalse(tableNames(host).includes("botrelay_inbox"))

      const storage = yield* open({ database: host })
      assert.deepStrictEqual(
        host.prepare("SELECT name FROM botrelay_migrations ORDER BY name").pluck().all(),
        Object.keys(Migrations.migrations(SecretKey.cipher(SecretKey.generate()))).sort()
      )
      const bot = Option.getOrThrow(yield* storage.findBotByToken("1:old"))
      assert.strictEqual(yield* storage.ingressOffset(bot.id), 0)
      assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(5)], 6), 1)
      assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [{ bot_id: bot.id, ...update(5) }])
    }))

  it.scoped("tags from before 0008_tag_bots go to the bot that has the chat's history, or to none", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const host = new Database(file)
      yield* Effect.addFinalizer(() => Effect.sync(() => host.open && host.close()))
      const before = Object.fromEntries(
        Object.entries(Migrations.migrations(SecretKey.cipher(SecretKey.generate()))).filter(([name]) =>
          name < "0008_tag_bots"
        )
      )
      const { error } = yield* Effect.promise(() =>
        new Migrator({
          db: new Kysely<unknown>({ dialect: new SqliteDialect({ database: host }) }),
          provider: { getMigrations: () => Promise.resolve(before) },
          migrationTableName: Migrations.migrationTableName,
          migrationLockTableName: Migrations.migrationLockTableName
        }).migrateToLatest()
      )
      assert.isUndefined(error)
      for (const token of ["1:a", "2:b", "3:c"]) {
        host.prepare("INSERT INTO botrelay_bots (token, source, created_at, updated_at) VALUES (?, 'web', '', '')")
          .run(token)
      }
      const insertMessage = host.prepare(
        "INSERT INTO botrelay_messages (bot_id, chat_id, id, user_id, username, first_name, last_name, text, date, " +
          "direction, edit_date) VALUES (?, ?, ?, 5, '', '', '', 'x', 1, 'in', 0)"
      )
      insertMessage.run(3, -100, 1)
      insertMessage.run(2, -100, 2)
      insertMessage.run(3, 55, 3)
      const insertTag = host.prepare(
        "INSERT INTO botrelay_tags (chat_id, user_id, username, tag, color, created_at) VALUES (?, 5, 'u', ?, '', 't')"
      )
      insertTag.run(-100, "vip")
      insertTag.run(55, "lead")
      insertTag.run(77, "orphan")

      const storage = yield* open({ database: host })
      assert.deepStrictEqual(
        [-100, 55, 77].flatMap((chat) =>
          host.prepare("SELECT id, bot_id, chat_id, tag FROM botrelay_tags WHERE chat_id = ?").all(chat)
        ),
        [
          { id: 1, bot_id: 2, chat_id: -100, tag: "vip" },
          { id: 2, bot_id: 3, chat_id: 55, tag: "lead" },
          { id: 3, bot_id: 0, chat_id: 77, tag: "orphan" }
        ]
      )
      const again = yield* storage.upsertTag({
        bot_id: 3, chat_id: -100, user_id: 5, username: "u", tag: "vip", color: "", created_at: "t"
      })
      assert.strictEqual(again.id, 4)
      assert.deepStrictEqual((yield* storage.listTags({ chat_id: -100, bot_id: 2 })).map((t) => t.id), [1])
    }))

  it.scoped("a completion that fails is a StorageError and is rolled back whole", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const storage = yield* open({ filename: file })
      const bot = yield* storage.insertBot(botInput(1))
      yield* storage.commitUpdates(bot.id, [update(1)], 2)
      const result = yield* Effect.either(storage.completeUpdates([{
        bot_id: bot.id,
        update_id: 1,
        messages: [message(bot.id, 5, 1, 10)],
        deliveries: [newDelivery(bot.id, 1), newDelivery(99, 1)]
      }]))
      assert.isTrue(Either.isLeft(result))
      assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [{ bot_id: bot.id, ...update(1) }])
      assert.deepStrictEqual(yield* storage.listMessages({ bot_id: bot.id, chat_id: 5, limit: 10, offset: 0 }), [])
      assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [])
      assert.strictEqual(
        withRaw(file, (db) => db.prepare("SELECT count(*) FROM botrelay_deliveries").pluck().get()),
        0
      )

      const commit = yield* Effect.either(storage.commitUpdates(99, [update(1)], 2))
      assert.isTrue(Either.isLeft(commit))
      assert.strictEqual(yield* storage.ingressOffset(99), 0)
    }))

  it.scoped("writes made together share a commit, and one that fails fails alone", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const storage = yield* open({ filename: file })
      const a = yield* storage.insertBot(botInput(1))
      const b = yield* storage.insertBot(botInput(2))
      const [first, failing, second] = yield* Effect.all([
        Effect.either(storage.commitUpdates(a.id, [update(1)], 2)),
        Effect.either(storage.commitUpdates(99, [update(1)], 2)),
        Effect.either(storage.commitUpdates(b.id, [update(7), update(8)], 9))
      ], { concurrency: "unbounded" })
      assert.isTrue(Either.isRight(first) && Either.isRight(second))
      assert.isTrue(Either.isLeft(failing))
      if (Either.isLeft(failing) && failing.left._tag === "StorageError") {
        assert.strictEqual(failing.left.operation, "commitUpdates")
      } else assert.fail("a storage failure was expected")
      assert.deepStrictEqual(
        withRaw(file, (db) => db.prepare("SELECT bot_id, update_id FROM botrelay_inbox ORDER BY bot_id, update_id").raw().all()),
        [[a.id, 1], [b.id, 7], [b.id, 8]]
      )
      assert.deepStrictEqual(
        [yield* storage.ingressOffset(a.id), yield* storage.ingressOffset(b.id), yield* storage.ingressOffset(99)],
        [2, 9, 0]
      )
    }))

  it.scoped("a batch that fails is a StorageError and nothing of it is applied", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const storage = yield* open({ filename: file })
      const bot = yield* storage.insertBot(botInput(1))
      yield* storage.commitUpdates(bot.id, [update(1), update(2), update(3)], 4)
      const batch = [
        { bot_id: bot.id, update_id: 1, messages: [message(bot.id, 5, 1, 10)], deliveries: [newDelivery(bot.id, 1)] },
        { bot_id: bot.id, update_id: 2, messages: [message(bot.id, 5, 2, 11)], deliveries: [], buffer: bufferEntry(2) },
        { bot_id: bot.id, update_id: 3, messages: [], deliveries: [newDelivery(bot.id, 3), newDelivery(99, 3)] }
      ]
      const result = yield* Effect.either(storage.completeUpdates(batch))
      assert.isTrue(Either.isLeft(result) && result.left._tag === "StorageError")
      assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [1, 2, 3])
      assert.deepStrictEqual(yield* storage.listMessages({ bot_id: bot.id, chat_id: 5, limit: 10, offset: 0 }), [])
      assert.deepStrictEqual(yield* storage.listDeliveries({ limit: 10 }), [])
      assert.strictEqual(yield* storage.backlog(bot.id), 3)
      assert.strictEqual(yield* storage.countBuffered(bot.id), 0)
      assert.strictEqual(
        withRaw(file, (db) => db.prepare("SELECT count(*) FROM botrelay_deliveries").pluck().get()),
        0
      )

      yield* storage.completeUpdates(batch.slice(0, 2))
      assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [3])
      assert.strictEqual(yield* storage.countBuffered(bot.id), 1)
      assert.deepStrictEqual((yield* storage.listDeliveries({ limit: 10 })).map((d) => [d.id, d.update_id]), [[1, 1]])
    }))

  it.scoped("migrations are recorded in botrelay_migrations and re-running them is a no-op", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(open({ filename: file }))
      const before = withRaw(file, (db) => ({
        applied: db.prepare("SELECT name FROM botrelay_migrations ORDER BY name").pluck().all(),
        schema: db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all()
      }))
      assert.deepStrictEqual(before.applied, Object.keys(Migrations.migrations(SecretKey.cipher(SecretKey.generate()))))
      yield* Effect.scoped(open({ filename: file }))
      yield* Effect.scoped(open({ filename: file }))
      const after = withRaw(file, (db) => ({
        applied: db.prepare("SELECT name FROM botrelay_migrations ORDER BY name").pluck().all(),
        schema: db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all()
      }))
      assert.deepStrictEqual(after, before)
      assert.deepStrictEqual(withRaw(file, tableNames), [
        "botrelay_account_bots",
        "botrelay_accounts",
        "botrelay_api_key_bots",
        "botrelay_api_keys",
        "botrelay_audit",
        "botrelay_bots",
        "botrelay_bridge_deliveries",
        "botrelay_bridges",
        "botrelay_canned_replies",
        "botrelay_chat_counts",
        "botrelay_chat_days",
        "botrelay_chat_members",
        "botrelay_chats",
        "botrelay_deliveries",
        "botrelay_event_state",
        "botrelay_events",
        "botrelay_idempotency",
        "botrelay_inbox",
        "botrelay_ingress",
        "botrelay_instances",
        "botrelay_leases",
        "botrelay_long_poll_buffer",
        "botrelay_long_poll_state",
        "botrelay_message_hours",
        "botrelay_messages",
        "botrelay_messages_fts",
        "botrelay_messages_fts_config",
        "botrelay_messages_fts_data",
        "botrelay_messages_fts_docsize",
        "botrelay_messages_fts_idx",
        "botrelay_migrations",
        "botrelay_migrations_lock",
        "botrelay_notes",
        "botrelay_notes_fts",
        "botrelay_notes_fts_config",
        "botrelay_notes_fts_data",
        "botrelay_notes_fts_docsize",
        "botrelay_notes_fts_idx",
        "botrelay_outgoing",
        "botrelay_people",
        "botrelay_route_mappings",
        "botrelay_route_sends",
        "botrelay_routes",
        "botrelay_search_state",
        "botrelay_secret_key",
        "botrelay_sessions",
        "botrelay_settings",
        "botrelay_tags",
        "botrelay_webhooks",
        "sqlite_sequence"
      ])
    }))

  it.scoped("a file is opened in WAL mode with foreign keys on", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const storage = yield* open({ filename: file })
      yield* storage.ping
      assert.strictEqual(withRaw(file, (db) => db.pragma("journal_mode", { simple: true })), "wal")
      const error = yield* Effect.flip(storage.insertRoute({
        source_bot_id: 98,
        target_bot_id: 99,
        condition_type: "all",
        condition_value: "",
        action: "forward",
        target_chat_id: 0,
        enabled: true,
        description: "",
        created_at: ""
      }))
      assert.strictEqual(error._tag, "StorageError")
      assert.deepStrictEqual(yield* storage.listRoutes({}), [])
    }))

  it.scoped("':memory:' works and each build is a fresh database", () =>
    Effect.gen(function*() {
      const first = yield* open({ filename: ":memory:" })
      yield* first.insertBot(botInput(1))
      const second = yield* open({ filename: ":memory:" })
      assert.deepStrictEqual(yield* second.listBots, [])
      assert.strictEqual((yield* first.listBots).length, 1)
    }))

  it.scoped("listing a chat's messages uses the index: no scan, no sort", () =>
    Effect.gen(function*() {
      const { host, prepared, database } = yield* recorded(join(yield* tempDir, "botrelay.db"))
      const storage = yield* open({ database })
      for (const n of [1, 2]) yield* storage.insertBot(botInput(n))
      for (let id = 1; id <= 300; id++) {
        yield* storage.saveMessage(message(1 + (id % 2), id % 3 === 0 ? -100 : 5, id, 1000 + (id % 17)))
      }
      const page = yield* storage.listMessages({ bot_id: 1, chat_id: 5, limit: 20, offset: 10 })
      assert.strictEqual(page.length, 20)
      const sql = prepared.find((s) => s.includes("from \"botrelay_messages\"") && s.includes("order by"))
      assert.isDefined(sql)
      const plan = queryPlan(host, sql)
      assert.isTrue(plan.some((d) => d.includes("USING INDEX botrelay_messages_chat_date")), plan.join("\n"))
      assert.isFalse(plan.some((d) => d.includes("SCAN")), plan.join("\n"))
      assert.isFalse(plan.some((d) => d.includes("TEMP B-TREE")), plan.join("\n"))

      const byToken = prepared.filter((s) => s.includes("from \"botrelay_bots\" where \"token_hash\" = ?"))
      assert.strictEqual(byToken.length, 1)
      prepared.length = 0
      yield* storage.findApiKeyByHash("x")
      yield* storage.findBotByToken("x")
      yield* storage.listTags({ chat_id: 1, user_id: 2 })
      assert.strictEqual(prepared.length, 2)
      for (const statement of [...prepared, ...byToken]) {
        const details = queryPlan(host, statement)
        assert.isFalse(details.some((d) => d.includes("SCAN") || d.includes("TEMP B-TREE")), details.join("\n"))
      }
      assert.isTrue(
        queryPlan(host, byToken[0]!).some((d) => d.includes("USING INDEX botrelay_bots_token_hash")),
        "findBotByToken uses the token hash index"
      )
    }))

  it.scoped("pending updates, the next delivery and the backlog are read through an index: no scan, no sort", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const { host, prepared, database } = yield* recorded(file)
      const storage = yield* open({ database })
      for (const n of [1, 2, 3]) yield* storage.insertBot(botInput(n))
      for (const botId of [1, 2, 3]) {
        const updates = Array.from({ length: 200 }, (_, i) => update(1000 + i))
        yield* storage.commitUpdates(botId, updates, 1200)
        yield* storage.completeUpdates(updates.slice(0, 150).map((u) => ({
          bot_id: botId,
          update_id: u.update_id,
          messages: [],
          deliveries: [newDelivery(botId, u.update_id)]
        })))
      }
      for (let id = 1; id <= 300; id += 2) yield* storage.recordAttempts([[id, { status: "delivered", at: "" }]])
      assert.strictEqual((yield* storage.pendingUpdates(2, 10))[0]!.update_id, 1150)
      assert.strictEqual((yield* storage.nextDeliveries(2, 1)).length, 1)
      assert.strictEqual(yield* storage.backlog(2), 50 + 75)

      const statement = (...parts: Array<string>) => {
        const found = prepared.filter((s) => parts.every((part) => s.includes(part)))
        assert.strictEqual(found.length, 1, parts.join(" "))
        return found[0]!
      }
      const expected: Array<readonly [string, ReadonlyArray<string>]> = [
        [statement("from \"botrelay_inbox\"", "order by \"update_id\""), ["botrelay_inbox_pending"]],
        [statement("select * from \"botrelay_deliveries\"", "order by \"id\" limit cast(? as integer)"), ["botrelay_deliveries_pending"]],
        [statement("as \"backlog\""), ["botrelay_inbox_pending", "botrelay_deliveries_pending"]]
      ]
      for (const [sql, indexes] of expected) {
        const plan = queryPlan(host, sql)
        for (const index of indexes) assert.isTrue(plan.some((d) => d.includes(`INDEX ${index} `)), plan.join("\n"))
        assert.isFalse(plan.some((d) => d.startsWith("SCAN botrelay_")), plan.join("\n"))
        assert.isFalse(plan.some((d) => d.includes("TEMP B-TREE")), plan.join("\n"))
      }
    }))

  it.scoped("pending and dead deliveries are found through their partial indexes, never a scan of all deliveries", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const { host, prepared, database } = yield* recorded(file)
      const storage = yield* open({ database })
      for (const n of [1, 2]) yield* storage.insertBot(botInput(n))
      for (const botId of [1, 2]) {
        const updates = Array.from({ length: 20 }, (_, i) => update(100 + i))
        yield* storage.commitUpdates(botId, updates, 120)
        yield* storage.completeUpdates(updates.map((u) => ({
          bot_id: botId,
          update_id: u.update_id,
          messages: [],
          deliveries: [newDelivery(botId, u.update_id)]
        })))
      }
      const at = "2025-01-02T00:00:00.000Z"
      yield* storage.recordAttempts([[1, { status: "delivered", at }], [2, { status: "dead", at, last_error: "HTTP 500" }]])
      prepared.length = 0
      assert.deepStrictEqual((yield* storage.listDeliveries({ status: "dead", limit: 10 })).map((d) => d.id), [2])
      assert.strictEqual((yield* storage.listDeliveries({ bot_id: 2, status: "pending", limit: 5 })).length, 5)
      assert.strictEqual((yield* storage.listDeliveries({ bot_id: 1, status: "delivered", limit: 5 })).length, 1)
      assert.strictEqual(yield* storage.retargetDeliveries(2, "https://other.example/hook", at), 20)
      assert.deepStrictEqual((yield* storage.retryDead(1, at)).map((d) => d.id), [2])
      assert.deepStrictEqual(yield* storage.discardDead(1, at), [])
      const backlog = yield* (storage as unknown as BacklogStore.BacklogStoreService).read(at)
      assert.deepStrictEqual(
        backlog.outbox.filter((o) => o.kind === "backend").map((o) => [o.bot_id, o.depth, o.dead]),
        [[1, 19, 0], [2, 20, 0]]
      )
      const backlogSql = prepared.find((sql) => sql.startsWith("select 'backend' as \"part\""))!
      const byStatus = prepared.filter((sql) =>
        sql !== backlogSql && /^(select|update) .*"botrelay_deliveries" .*where .*'(pending|dead)'/.test(sql)
      )
      assert.strictEqual(byStatus.length, 5)
      for (const sql of byStatus) {
        const plan = queryPlan(host, sql)
        assert.isFalse(plan.some((d) => d === "SCAN botrelay_deliveries" || d.includes("TEMP B-TREE")), `${sql}\n${plan.join("\n")}`)
        assert.isTrue(plan.some((d) => /USING (COVERING )?INDEX botrelay_deliveries_(pending|dead|dead_ids)\b/.test(d)), `${sql}\n${plan.join("\n")}`)
      }
      const backlogPlan = queryPlan(host, backlogSql)
      for (const index of ["botrelay_deliveries_pending", "botrelay_deliveries_dead"]) {
        assert.isTrue(backlogPlan.some((d) => d.includes(`INDEX ${index}`)), backlogPlan.join("\n"))
      }
    }))

  it.scoped("the long-poll buffer is read, confirmed and trimmed through its key and index: no scan, no sort", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const { host, prepared, database } = yield* recorded(file)
      const storage = yield* open({ database })
      for (const n of [1, 2, 3]) yield* storage.insertBot(botInput(n))
      for (const botId of [1, 2, 3]) {
        const updates = Array.from({ length: 300 }, (_, i) => update(900_000_000 + i))
        yield* storage.commitUpdates(botId, updates, 0)
        yield* storage.completeUpdates(updates.map((u, i) => ({
          bot_id: botId,
          update_id: u.update_id,
          messages: [],
          deliveries: [],
          buffer: bufferEntry(u.update_id, i % 3 === 0 ? "chat_member" : "message")
        })))
      }
      const page = (types: LongPoll.TypeFilter) =>
        storage.readBuffered(2, { offset: 900_000_100, limit: 10, types })
      assert.strictEqual((yield* page({ only: ["message"] }))[0]!.update_id, 900_000_100)
      assert.strictEqual((yield* page({ except: ["chat_member"] }))[0]!.update_id, 900_000_100)
      assert.strictEqual(yield* storage.confirmBuffered(2, 900_000_010), 10)
      assert.strictEqual(yield* storage.keepNewestBuffered(2, 250), 40)
      assert.strictEqual(
        yield* storage.trimBuffered(2, { max_updates: 200, before: "2025-01-01", at: "2025-01-02T00:00:00.000Z" }),
        50
      )
      assert.strictEqual(yield* storage.countBuffered(2), 200)

      const statement = (...parts: Array<string>) => {
        const found = prepared.filter((s) => parts.every((part) => s.includes(part)))
        assert.strictEqual(found.length, 1, parts.join(" "))
        return found[0]!
      }
      /** The one statement reading update ids of the buffer with this part (`trimBuffered`'s checks). */
      const selecting = (part: string) => {
        const found = prepared.filter((s) => s.startsWith("select \"update_id\" from \"botrelay_long_poll_buffer\"") && s.includes(part))
        assert.strictEqual(found.length, 1, part)
        return found[0]!
      }
      const primaryKey = "INDEX sqlite_autoindex_botrelay_long_poll_buffer_1"
      const expected: Array<readonly [string, string]> = [
        [statement("from \"botrelay_long_poll_buffer\"", "\"type\" in", "order by \"update_id\""), primaryKey],
        [statement("from \"botrelay_long_poll_buffer\"", "\"type\" not in", "order by \"update_id\""), primaryKey],
        [statement("delete from \"botrelay_long_poll_buffer\"", "\"update_id\" < ?"), primaryKey],
        [statement("delete from \"botrelay_long_poll_buffer\"", "order by \"update_id\" desc"), primaryKey],
        [
          statement("delete from \"botrelay_long_poll_buffer\"", "\"created_at\" < ?"),
          "INDEX botrelay_long_poll_buffer_age"
        ],
        [statement("count(*)", "from \"botrelay_long_poll_buffer\""), primaryKey],
        [selecting("order by \"update_id\" desc"), primaryKey],
        [selecting("\"created_at\" < ?"), "INDEX botrelay_long_poll_buffer_age"]
      ]
      for (const [sql, index] of expected) {
        const plan = queryPlan(host, sql)
        assert.isTrue(plan.some((d) => d.includes(index)), `${sql}\n${plan.join("\n")}`)
        assert.isFalse(plan.some((d) => d.startsWith("SCAN botrelay_")), `${sql}\n${plan.join("\n")}`)
        assert.isFalse(plan.some((d) => d.includes("TEMP B-TREE")), `${sql}\n${plan.join("\n")}`)
      }
    }))

  it.scoped("a bound LIMIT is one the planner does not read, so a statement is not prepared again on each run", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const { prepared, database } = yield* recorded(file)
      const storage = yield* open({ database })
      const bot = yield* storage.insertBot(botInput(1))
      const updates = Array.from({ length: 5 }, (_, i) => update(100 + i))
      yield* storage.commitUpdates(bot.id, updates, 105)
      yield* storage.completeUpdates(updates.slice(0, 3).map((u) => ({
        bot_id: bot.id,
        update_id: u.update_id,
        messages: [],
        deliveries: [],
        buffer: bufferEntry(u.update_id)
      })))
      assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 1)).map((u) => u.update_id), [103])
      assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 5)).map((u) => u.update_id), [103, 104])
      const page = (limit: number) => storage.readBuffered(bot.id, { offset: 0, limit, types: { except: [] } })
      assert.deepStrictEqual((yield* page(2)).map((u) => u.update_id), [100, 101])
      assert.deepStrictEqual((yield* page(100)).map((u) => u.update_id), [100, 101, 102])
      const limited = prepared.filter((s) => / limit /.test(s))
      assert.isAbove(limited.length, 10)
      assert.deepStrictEqual(limited.filter((s) => / limit \?/.test(s)), [])
      assert.isTrue(limited.some((s) => s.includes("\"botrelay_inbox\"") && s.endsWith("limit cast(? as integer)")))
    }))

  it.scoped("a trim with nothing to forget writes nothing; one with something to forget writes once", () =>
    Effect.gen(function*() {
      const { database, transactions } = yield* recorded(join(yield* tempDir, "botrelay.db"))
      const storage = yield* open({ database })
      const bot = yield* storage.insertBot(botInput(1))
      const updates = [1, 2, 3].map(update)
      yield* storage.commitUpdates(bot.id, updates, 4)
      yield* storage.completeUpdates(updates.map((u) => ({
        bot_id: bot.id,
        update_id: u.update_id,
        messages: [],
        deliveries: [],
        buffer: { ...bufferEntry(u.update_id, "message"), created_at: `2025-01-0${u.update_id}T00:00:00.000Z` }
      })))
      const trim = (maxUpdates: number, before: string) =>
        storage.trimBuffered(bot.id, { max_updates: maxUpdates, before, at: "2025-01-09T00:00:00.000Z" })

      const begun = transactions.begun
      assert.strictEqual(yield* trim(3, "2025-01-01T00:00:00.000Z"), 0)
      assert.strictEqual(yield* trim(10, ""), 0)
      assert.strictEqual(transactions.begun, begun)
      assert.strictEqual((yield* storage.bufferState(bot.id)).trimmed, 0)

      // one too many, then one too old: each forgotten in a write of its own, and recorded
      assert.strictEqual(yield* trim(2, ""), 1)
      assert.strictEqual(transactions.begun, begun + 1)
      assert.strictEqual(yield* trim(10, "2025-01-03T00:00:00.000Z"), 1)
      assert.strictEqual(transactions.begun, begun + 2)
      assert.deepStrictEqual((yield* storage.readBuffered(bot.id, { offset: 0, limit: 10, types: { except: [] } })).map((u) => u.update_id), [3])
      assert.strictEqual((yield* storage.bufferState(bot.id)).trimmed, 2)
    }))

  it.scoped("sightings that show only chats as stored write nothing, unless a write waits for the turn's commit", () =>
    Effect.gen(function*() {
      const { database, transactions } = yield* recorded(join(yield* tempDir, "botrelay.db"))
      const storage = yield* open({ database })
      const bot = yield* storage.insertBot(botInput(1))
      const ann: Sighting.ChatSeen = {
        chat_id: 10,
        type: "private",
        title: "",
        username: "ann",
        first_name: "Ann",
        last_name: "",
        date: 1_700_000_000
      }
      const seen = (chats: ReadonlyArray<Sighting.ChatSeen>, reads: ReadonlyArray<Sighting.ReadMark> = []) =>
        storage.recordSightings([{ bot_id: bot.id, chats, people: [], left: [], states: [], migrations: [], reads }])
      const firstName = Effect.map(storage.findChat(bot.id, 10), (chat) => Option.getOrThrow(chat).first_name)

      yield* seen([ann])
      const begun = transactions.begun
      yield* seen([ann])
      assert.strictEqual(transactions.begun, begun)

      // a read mark, or a new name: written
      yield* seen([ann], [{ chat_id: 10, at: 1_700_000_100 }])
      assert.strictEqual(transactions.begun, begun + 1)
      yield* seen([{ ...ann, first_name: "Anna" }])
      assert.strictEqual(transactions.begun, begun + 2)
      assert.strictEqual(yield* firstName, "Anna")

      // the second would find the chat as stored, but the first, waiting for the commit, renames it: both are written
      yield* Effect.all([seen([ann]), seen([{ ...ann, first_name: "Anna" }])], { concurrency: "unbounded" })
      assert.strictEqual(transactions.begun, begun + 3)
      assert.strictEqual(yield* firstName, "Anna")
    }))

  it.scoped("buffered updates and the buffer's state survive closing and reopening the file", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      yield* Effect.scoped(Effect.gen(function*() {
        const storage = yield* open({ filename: file })
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(7), update(8), update(9)], 10)
        yield* storage.completeUpdates([7, 8, 9].map((id) => ({
          bot_id: bot.id,
          update_id: id,
          messages: [],
          deliveries: [],
          buffer: bufferEntry(id)
        })))
        yield* storage.setAllowedUpdates(bot.id, ["message"])
        yield* storage.trimBuffered(bot.id, { max_updates: 2, before: "", at: "2025-01-02T00:00:00.000Z" })
      }))
      const storage = yield* open({ filename: file })
      assert.deepStrictEqual(yield* storage.readBuffered(1, { offset: 0, limit: 10, types: { only: ["message"] } }), [
        { update_id: 8, payload: update(8).payload },
        { update_id: 9, payload: update(9).payload }
      ])
      assert.deepStrictEqual(yield* storage.bufferState(1), {
        allowed_updates: ["message"],
        trimmed: 1,
        last_trimmed_at: "2025-01-02T00:00:00.000Z"
      })
    }))

  it.scoped("the pipeline's statements are prepared once, when the storage is made", () =>
    Effect.gen(function*() {
      const { prepared, database } = yield* recorded(join(yield* tempDir, "botrelay.db"))
      const storage = yield* open({ database })
      const bot = yield* storage.insertBot(botInput(1))
      prepared.length = 0
      for (let round = 0; round < 3; round++) {
        const first = 10 * round
        yield* storage.findBot(bot.id)
        yield* storage.ingressOffset(bot.id)
        yield* storage.commitUpdates(bot.id, [update(first), update(first + 1)], first + 2)
        const pending = yield* storage.pendingUpdates(bot.id, 10)
        yield* storage.completeUpdates(pending.map((u) => ({
          bot_id: u.bot_id,
          update_id: u.update_id,
          messages: [message(bot.id, 5, u.update_id, 10)],
          deliveries: [newDelivery(bot.id, u.update_id)],
          buffer: bufferEntry(u.update_id)
        })))
        yield* storage.readBuffered(bot.id, { offset: first, limit: 100, types: { except: ["chat_member"] } })
        yield* storage.readBuffered(bot.id, { offset: first, limit: 100, types: { only: ["message"] } })
        yield* storage.confirmBuffered(bot.id, first)
        yield* storage.keepNewestBuffered(bot.id, 10)
        yield* storage.trimBuffered(bot.id, { max_updates: 10, before: "", at: "" })
        yield* storage.countBuffered(bot.id)
        yield* storage.bufferState(bot.id)
        yield* storage.backlog(bot.id)
        const next = (yield* storage.nextDeliveries(bot.id, 1))[0]!
        yield* storage.recordAttempts([[next.id, { status: "pending", at: "", next_attempt_at: "", last_error: "x" }]])
        yield* storage.recordAttempts([[next.id, { status: "delivered", at: "" }]])
        yield* storage.recordAttempts([[next.id + 1, { status: "dead", at: "", last_error: "x" }]])
      }
      assert.deepStrictEqual(prepared, [])
      assert.strictEqual(yield* storage.ingressOffset(bot.id), 22)
      assert.strictEqual(yield* storage.backlog(bot.id), 0)
      assert.deepStrictEqual(
        (yield* storage.listDeliveries({ limit: 10 })).map((d) => [d.status, d.attempts]),
        [["dead", 1], ["delivered", 1], ["dead", 1], ["delivered", 1], ["dead", 1], ["delivered", 1]]
      )
    }))

  it.scoped("an existing host database keeps its own tables and stays open", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "host.db")
      const host = new Database(file)
      yield* Effect.addFinalizer(() => Effect.sync(() => host.open && host.close()))
      host.exec("CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT NOT NULL)")
      host.prepare("INSERT INTO users (email) VALUES (?), (?)").run("a@example.com", "b@example.com")
      const usersSql = host.prepare("SELECT sql FROM sqlite_master WHERE name = 'users'").pluck().get()

      yield* Effect.gen(function*() {
        const bot = yield* Effect.flatMap(BotStore.BotStore, (bots) => bots.insertBot(botInput(1)))
        assert.strictEqual(bot.id, 1)
        assert.strictEqual(host.pragma("foreign_keys", { simple: true }), 1)
      }).pipe(Effect.provide(SqliteStores.layer({ database: host })))

      assert.isTrue(host.open)
      assert.deepStrictEqual(host.prepare("SELECT id, email FROM users ORDER BY id").all(), [
        { id: 1, email: "a@example.com" },
        { id: 2, email: "b@example.com" }
      ])
      assert.strictEqual(host.prepare("SELECT sql FROM sqlite_master WHERE name = 'users'").pluck().get(), usersSql)
      assert.strictEqual(host.prepare("SELECT count(*) FROM botrelay_bots").pluck().get(), 1)
      assert.isTrue(tableNames(host).includes("users"))

      const again = yield* open({ database: host })
      assert.strictEqual((yield* again.listBots).length, 1)
    }))

  it.scoped("a failed migration is a MigrationError and leaves no partial schema", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "conflict.db")
      const host = new Database(file)
      yield* Effect.addFinalizer(() => Effect.sync(() => host.close()))
      host.exec("CREATE TABLE botrelay_tags (something_else TEXT)")
      const error = yield* Effect.flip(open({ database: host }))
      assert.strictEqual(error._tag, "MigrationError")
      assert.include(error.message, "0001_init")
      assert.deepStrictEqual(
        tableNames(host).filter((name) => name !== "botrelay_migrations" && name !== "botrelay_migrations_lock"),
        ["botrelay_tags"]
      )
    }))

  it.effect("a file that cannot be opened is a StorageError", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(open({ filename: join(tmpdir(), "botrelay-missing-dir", "x", "db.sqlite") }))
      )
      assert.strictEqual(error._tag, "StorageError")
    }))
})
