import { SearchQuery } from "@botrelay/core"
import { Migrations, SecretKey, type SqliteStores } from "@botrelay/sqlite"
import * as StoreSuite from "@botrelay/testing/StoreSuite"
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect, Either } from "effect"
import { Kysely, Migrator, SqliteDialect } from "kysely"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { matchExpression, matchText, scopeWord } from "../src/SqliteSearchStore.js"
import { type AllStores, open } from "./Open.js"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "botrelay-search-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

const botInput = (n: number) => StoreSuite.botInput(n, { manage_enabled: true })

const message = (botId: number, chatId: number, id: number, text: string, userId = 7) => ({
  id,
  chat_id: chatId,
  bot_id: botId,
  user_id: userId,
  username: "u",
  first_name: "U",
  last_name: "",
  text,
  date: 1_700_000_000 + id,
  direction: "in" as const,
  edit_date: 0
})

const terms = (q: string) => Either.getOrThrow(SearchQuery.parse(q))

const search = (storage: AllStores, q: string, filters: { chat_id?: number; bot_ids?: Array<number> } = {}) =>
  Effect.map(
    storage.searchMessages({ terms: terms(q), bot_ids: undefined, limit: 50, ...filters }),
    (found) => found.map((f) => [f.message.chat_id, f.message.id, f.message.text])
  )

/** FTS5's own check that the index holds exactly what the messages say; throws otherwise. */
const integrityCheck = (db: Database.Database) =>
  db.prepare("INSERT INTO botrelay_messages_fts (botrelay_messages_fts, rank) VALUES ('integrity-check', 1)").run()

/** A database the host opened, recording every statement the driver prepares. */
const recorded = (file: string) =>
  Effect.gen(function*() {
    const host = new Database(file)
    yield* Effect.addFinalizer(() => Effect.sync(() => host.open && host.close()))
    const prepared: Array<string> = []
    const database: SqliteStores.SqliteDatabase = {
      name: host.name,
      prepare: (sql) => {
        prepared.push(sql)
        return host.prepare(sql)
      },
      transaction: (fn) => host.transaction(fn),
      close: () => host.close()
    }
    return { host, prepared, database }
  })

describe("SQLite full-text search", () => {
  it("renders terms as quoted FTS5 strings on the text column, a prefix with *", () => {
    assert.strictEqual(matchText(terms("hello")), "text : (\"hello\")")
    assert.strictEqual(
      matchText(terms("NEAR(a b) \"good morn\"* deliv** AND -x")),
      "text : (\"NEAR(a\" \"b)\" \"good morn\"* \"deliv\"* \"AND\" \"-x\")"
    )
    assert.strictEqual(
      matchExpression({ terms: terms("a"), bot_ids: [1, 2], chat_id: -1001234567890, user_id: 42, limit: 1 }),
      "text : (\"a\") AND scope : (\"b1\" OR \"b2\") AND scope : \"cn1001234567890\" AND scope : \"u42\""
    )
    assert.strictEqual(matchExpression({ terms: terms("a"), bot_ids: undefined, user_id: -5, limit: 1 }), "text : (\"a\") AND scope : \"un5\"")
    assert.strictEqual(
      matchExpression({ terms: terms("a"), bot_ids: Array.from({ length: 65 }, (_, i) => i + 1), limit: 1 }),
      "text : (\"a\")"
    )
    assert.deepStrictEqual([scopeWord("c", 0), scopeWord("u", 7_123_456_789)], ["c0", "u7123456789"])
  })

  it.scoped("0015 indexes the messages stored before it, and the index stays in step with every write", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const host = new Database(file)
      yield* Effect.addFinalizer(() => Effect.sync(() => host.open && host.close()))
      const secretKey = SecretKey.generate()
      const before = Object.fromEntries(
        Object.entries(Migrations.migrations(SecretKey.cipher(secretKey))).filter(([name]) => name < "0015")
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
      host.prepare("INSERT INTO botrelay_bots (token, source, created_at, updated_at) VALUES ('1:a', 'web', '', '')").run()
      const insert = host.prepare(
        "INSERT INTO botrelay_messages (bot_id, chat_id, id, user_id, text, date, direction, deleted) " +
          "VALUES (1, ?, ?, 5, ?, 1, 'in', ?)"
      )
      insert.run(-100, 1, "old news from before", 0)
      insert.run(-100, 2, "old and deleted", 1)
      insert.run(55, 3, "Старые новости", 0)

      const storage = yield* open({ database: host, secretKey })
      assert.deepStrictEqual(yield* search(storage, "old"), [[-100, 1, "old news from before"]])
      assert.deepStrictEqual(yield* search(storage, "новости"), [[55, 3, "Старые новости"]])
      integrityCheck(host)

      const bot = yield* storage.insertBot(botInput(2))
      yield* storage.saveMessages([message(bot.id, 10, 1, "fresh apple"), message(bot.id, 10, 2, "fresh pear")])
      yield* storage.saveMessage(message(bot.id, 10, 1, "ripe apple"))
      yield* storage.saveMessage(message(bot.id, 10, 2, "fresh pear"))
      yield* storage.markMessagesDeleted(bot.id, 10, [2])
      assert.deepStrictEqual(yield* search(storage, "fresh"), [])
      assert.deepStrictEqual(yield* search(storage, "apple"), [[10, 1, "ripe apple"]])
      integrityCheck(host)
      yield* storage.deleteBot(1)
      assert.deepStrictEqual(yield* search(storage, "old"), [])
      assert.deepStrictEqual(yield* search(storage, "новости"), [])
      integrityCheck(host)
    }))

  it.scoped("the index takes messages in batches; what it holds is kept in step at once, a reused rowid too", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const { host, database } = yield* recorded(file)
      const storage = yield* open({ database })
      const indexed = () => (host.prepare("SELECT count(*) AS n FROM botrelay_messages_fts_docsize").get() as { n: number }).n
      const reach = () =>
        (host.prepare("SELECT indexed_upto AS n FROM botrelay_search_state").get() as { n: number }).n
      const bot = yield* storage.insertBot(botInput(1))
      yield* storage.saveMessages([1, 2, 3].map((id) => message(bot.id, 10, id, `first words ${id}`)))
      assert.deepStrictEqual([indexed(), reach()], [0, 0], "written, not yet indexed")
      assert.strictEqual(yield* storage.indexPending, 3)
      assert.strictEqual(yield* storage.indexPending, 0)
      assert.deepStrictEqual([indexed(), reach()], [3, 3])
      integrityCheck(host)

      yield* storage.saveMessage(message(bot.id, 10, 1, "edited words"))
      yield* storage.markMessagesDeleted(bot.id, 10, [2])
      integrityCheck(host)
      yield* storage.saveMessage(message(bot.id, 10, 4, "pending words"))
      yield* storage.saveMessage(message(bot.id, 10, 4, "pending words, edited before indexing"))
      assert.strictEqual(indexed(), 3)
      assert.deepStrictEqual(yield* search(storage, "words"), [
        [10, 4, "pending words, edited before indexing"],
        [10, 3, "first words 3"],
        [10, 1, "edited words"]
      ])
      assert.deepStrictEqual([indexed(), reach()], [4, 4], "a search takes in what was waiting first")
      integrityCheck(host)

      yield* storage.deleteBot(bot.id)
      assert.strictEqual(indexed(), 0)
      const again = yield* storage.insertBot(botInput(2))
      yield* storage.saveMessage(message(again.id, 11, 1, "a reused rowid"))
      assert.strictEqual(indexed(), 1, "a rowid within reach is indexed as it is written")
      integrityCheck(host)
      assert.deepStrictEqual(yield* search(storage, "reused"), [[11, 1, "a reused rowid"]])
    }))

  it.scoped("a chat moved in place (chat_id and id rewritten, rowid kept) is found under its new id only", () =>
    Effect.gen(function*() {
      const file = join(yield* tempDir, "botrelay.db")
      const { host, database } = yield* recorded(file)
      const storage = yield* open({ database })
      const bot = yield* storage.insertBot(botInput(1))
      yield* storage.saveMessage(message(bot.id, -555, 1, "before the upgrade"))
      yield* storage.saveMessage(message(bot.id, -555, 2, "also before", -555))
      const supergroup = -1009990000555
      const moved = host.prepare(
        "UPDATE botrelay_messages SET chat_id = ?, id = id + 1000000 WHERE bot_id = ? AND chat_id = ?"
      ).run(supergroup, bot.id, -555)
      assert.strictEqual(moved.changes, 2)
      host.prepare("UPDATE botrelay_messages SET user_id = ? WHERE user_id = ?").run(supergroup, -555)
      assert.deepStrictEqual(yield* search(storage, "before", { chat_id: -555 }), [])
      assert.deepStrictEqual(yield* search(storage, "before", { chat_id: supergroup }), [
        [supergroup, 1000002, "also before"],
        [supergroup, 1000001, "before the upgrade"]
      ])
      const bySender = yield* storage.searchMessages({ terms: terms("before"), bot_ids: [bot.id], user_id: supergroup, limit: 5 })
      assert.deepStrictEqual(bySender.map((f) => f.message.id), [1000002])
      integrityCheck(host)
    }))

  it.scoped("a search reads the index newest rowid first and stops at the limit, whatever the filters: no sort", () =>
    Effect.gen(function*() {
      const { host, prepared, database } = yield* recorded(join(yield* tempDir, "botrelay.db"))
      const storage = yield* open({ database })
      const bot = yield* storage.insertBot(botInput(1))
      yield* storage.saveMessages(Array.from({ length: 300 }, (_, i) => message(bot.id, i % 7, i + 1, `word ${i % 3}`)))
      prepared.length = 0
      const page = yield* storage.searchMessages({
        terms: terms("word 2"),
        bot_ids: [bot.id],
        chat_id: 3,
        user_id: 7,
        from: 0,
        to: 2_000_000_000,
        before: 1000,
        limit: 5
      })
      assert.strictEqual(page.length, 5)
      assert.strictEqual(prepared.length, 1)
      const plan = (host.prepare(`EXPLAIN QUERY PLAN ${prepared[0]!}`).all(
        ...prepared[0]!.split("?").slice(1).map((_, i) => i === 2 ? "text : (\"word\")" : 1)
      ) as Array<{ detail: string }>).map((row) => row.detail)
      assert.isTrue(plan.some((d) => d.startsWith("SCAN botrelay_messages_fts VIRTUAL TABLE")), plan.join("\n"))
      assert.isTrue(plan.some((d) => d.includes("USING INTEGER PRIMARY KEY (rowid=?)")), plan.join("\n"))
      assert.isFalse(plan.some((d) => d.includes("TEMP B-TREE")), plan.join("\n"))
      yield* storage.searchMessages({ terms: terms("word"), bot_ids: [bot.id], limit: 5 })
      yield* storage.searchMessages({ terms: terms("other"), bot_ids: [bot.id], limit: 5 })
      assert.strictEqual(prepared.length, 2, "a statement is prepared once per shape of search")
    }))
})
