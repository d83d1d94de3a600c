import type { BotStore, InboxStore, KeyStore, MessageStore, OutboxStore, StoreHealth } from "@botrelay/core"
import { StoreLock } from "@botrelay/core"
import { PostgresStores } from "@botrelay/postgres"
import { SecretKey } from "@botrelay/sql"
import { PgCluster } from "@botrelay/testing"
import * as StoreSuite from "@botrelay/testing/StoreSuite"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option, Redacted } from "effect"
import { createServer } from "node:net"
import { afterAll, beforeAll } from "vitest"
import { sql } from "kysely"
import * as PostgresConnection from "../src/PostgresConnection.js"

const secretKey = SecretKey.generate()

let cluster: PgCluster.Cluster | undefined
let template = ""

/** Every store on a fresh database: a copy of a migrated template, dropped when the layer is released. */
const freshDatabase = Layer.unwrapScoped(
  Effect.map(
    Effect.suspend(() => PgCluster.database(cluster!, { template })),
    (url) => PostgresStores.layer({ url, secretKey, pool: 4 })
  )
)

type AllStores =
  & BotStore.BotStoreService
  & MessageStore.MessageStoreService
  & KeyStore.KeyStoreService
  & InboxStore.InboxStoreService
  & OutboxStore.OutboxStoreService
  & StoreHealth.StoreHealthService

/** `PostgresStores.make`, with the stores merged into one object (their method names differ). */
const open = (options: PostgresStores.Options) =>
  Effect.map(PostgresStores.make(options), (context): AllStores => Object.assign({}, ...context.unsafeMap.values()))

/** A new empty database for the scope. */
const emptyDatabase = Effect.suspend(() => PgCluster.database(cluster!))

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

const update = (updateId: number) => ({
  update_id: updateId,
  payload: `{"update_id":${updateId},"message":{"text":"привет 👋","id":123456789012345678901234567890}}`,
  received_at: "2025-01-01T00:00:01.000Z"
})

const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 1))
    })
  })

const query = (url: string, text: string) => Effect.promise(() => cluster!.query(text, PgCluster.databaseOf(url)))

if (PgCluster.available) {
  beforeAll(async () => {
    cluster = await PgCluster.start()
    const url = await cluster.createDatabase()
    await Effect.runPromise(Effect.scoped(PostgresStores.make({ url, secretKey })))
    template = PgCluster.databaseOf(url)
  })
  afterAll(() => cluster?.stop())

  StoreSuite.suite("postgres", freshDatabase)

  describe("PostgresStores", () => {
    it.scoped("data survives closing and reopening; ids are never reused", () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        yield* Effect.scoped(Effect.gen(function*() {
          const storage = yield* open({ url, secretKey })
          const bot = yield* storage.insertBot(botInput(1))
          yield* storage.saveMessage(message(bot.id, -1001234567890, 1, 10))
          yield* storage.insertApiKey({ name: "k", role: "operator", scopes: [{ bot_id: bot.id, chat_ids: [], abilities: ["read"] }], prefix: "brk_x", created_at: "", hash: "h" })
          yield* storage.deleteBot((yield* storage.insertBot(botInput(2))).id)
          assert.strictEqual(yield* storage.commitUpdates(bot.id, [update(100), update(101)], 102), 2)
        }))
        const storage = yield* open({ url, secretKey })
        const bot = Option.getOrThrow(yield* storage.findBotByToken("1:token-1"))
        assert.strictEqual(Redacted.value(bot.secret_token), "secret")
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: bot.id, chat_id: -1001234567890, limit: 10, offset: 0 }), [
          message(bot.id, -1001234567890, 1, 10)
        ])
        assert.deepStrictEqual(Option.getOrThrow(yield* storage.findApiKeyByHash("h")).bot_ids, [bot.id])
        assert.strictEqual((yield* storage.insertBot(botInput(3))).id, 3)
        assert.strictEqual(yield* storage.ingressOffset(bot.id), 102)
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [
          { bot_id: bot.id, ...update(100) },
          { bot_id: bot.id, ...update(101) }
        ])
      }))

    it.scoped("secrets are stored encrypted, and another key is refused", () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        yield* Effect.scoped(Effect.flatMap(open({ url, secretKey }), (storage) => storage.insertBot(botInput(1))))
        const [row] = yield* query(url, "SELECT token, secret_token FROM botrelay_bots")
        assert.notInclude(JSON.stringify(row), "token-1")
        assert.notInclude(JSON.stringify(row), "secret\"")
        const other = yield* Effect.either(Effect.scoped(open({ url, secretKey: SecretKey.generate(), secretKeySource: "BOTRELAY_SECRET_KEY" })))
        assert.isTrue(Either.isLeft(other))
        if (Either.isLeft(other)) {
          assert.strictEqual(other.left._tag, "SecretKeyError")
          assert.include(other.left.message, "BOTRELAY_SECRET_KEY does not decrypt this database's secrets")
        }
      }))

    it.scoped("instances starting together on an empty database migrate once, under the advisory lock", () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        const stores = yield* Effect.all(Array.from({ length: 4 }, () => open({ url, secretKey, pool: 2 })), {
          concurrency: "unbounded"
        })
        for (const storage of stores) yield* storage.ping
        const applied = yield* query(url, "SELECT name FROM botrelay_migrations ORDER BY name")
        assert.deepStrictEqual(applied, [{ name: "0001_init" }, { name: "0002_leases" }, { name: "0003_bridges" }, { name: "0004_inbox_dropped" }, { name: "0005_instance_version" }, { name: "0006_conversation_state" }, { name: "0007_notes_canned_replies" }, { name: "0008_delivery_truth" }, { name: "0009_chat_scopes" }])
        yield* Effect.scoped(open({ url, secretKey }))
        assert.deepStrictEqual(yield* query(url, "SELECT count(*)::int AS n FROM botrelay_migrations"), [{ n: applied.length }])
      }))

    it.scoped("the pool holds at most `pool` connections", () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        const storage = yield* open({ url, secretKey, pool: 2 })
        const bot = yield* storage.insertBot(botInput(1))
        yield* Effect.all(Array.from({ length: 20 }, (_, i) => storage.saveMessage(message(bot.id, 5, i + 1, i))), {
          concurrency: "unbounded"
        })
        const [row] = yield* query(
          url,
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = '${PgCluster.databaseOf(url)}' AND application_name = 'botrelay'`
        )
        assert.isAtMost(row!["n"] as number, 2)
        assert.strictEqual((yield* storage.listMessages({ bot_id: bot.id, chat_id: 5, limit: 50, offset: 0 })).length, 20)
      }))

    it.scoped("saveMessages saves the others when one cannot be saved, and fails", () =>
      Effect.gen(function*() {
        const storage = yield* open({ url: yield* emptyDatabase, secretKey })
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

    it.scoped("a completion that fails is a StorageError and is rolled back whole", () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        const storage = yield* open({ url, secretKey })
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.commitUpdates(bot.id, [update(1)], 2)
        const delivery = (botId: number) => ({
          bot_id: botId,
          update_id: 1,
          url: "https://backend.example/hook",
          payload: "{}",
          created_at: "2025-01-01T00:00:03.000Z"
        })
        const result = yield* Effect.either(storage.completeUpdates([{
          bot_id: bot.id,
          update_id: 1,
          messages: [message(bot.id, 5, 1, 10)],
          deliveries: [delivery(bot.id), delivery(99)]
        }]))
        assert.isTrue(Either.isLeft(result))
        assert.strictEqual(Either.isLeft(result) ? result.left._tag : "", "StorageError")
        assert.deepStrictEqual(yield* storage.pendingUpdates(bot.id, 10), [{ bot_id: bot.id, ...update(1) }])
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: bot.id, chat_id: 5, limit: 10, offset: 0 }), [])
        assert.deepStrictEqual(yield* query(url, "SELECT count(*)::int AS n FROM botrelay_deliveries"), [{ n: 0 }])
        const commit = yield* Effect.either(storage.commitUpdates(99, [update(1)], 2))
        assert.isTrue(Either.isLeft(commit))
        assert.strictEqual(yield* storage.ingressOffset(99), 0)
      }))

    it.scoped("a NUL in a string is stored as U+FFFD instead of failing the write (PostgreSQL text cannot hold it)", () =>
      Effect.gen(function*() {
        const storage = yield* open({ url: yield* emptyDatabase, secretKey })
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.saveMessage({ ...message(bot.id, 5, 1, 10), text: "a\u0000b", first_name: "\u0000" })
        const [stored] = yield* storage.listMessages({ bot_id: bot.id, chat_id: 5, limit: 10, offset: 0 })
        assert.strictEqual(stored!.text, "a\uFFFDb")
        assert.strictEqual(stored!.first_name, "\uFFFD")
      }))

    it.scoped("a lost database fails queries with StorageError; they work again once it is back (the pool reconnects)", () =>
      Effect.gen(function*() {
        const own = yield* PgCluster.scoped()
        const storage = yield* open({ url: yield* PgCluster.database(own), secretKey, pool: 3 })
        const bot = yield* storage.insertBot(botInput(1))
        yield* Effect.all(Array.from({ length: 3 }, () => storage.ping), { concurrency: "unbounded" })
        yield* Effect.promise(() => own.halt())
        const lost = yield* Effect.either(storage.findBot(bot.id))
        assert.isTrue(Either.isLeft(lost))
        assert.strictEqual(Either.isLeft(lost) ? lost.left._tag : "", "StorageError")
        assert.isTrue(Either.isLeft(yield* Effect.either(storage.ping)))
        yield* Effect.promise(() => own.resume())
        for (let i = 0; i < 4; i++) yield* storage.ping
        assert.strictEqual(Option.getOrThrow(yield* storage.findBot(bot.id)).name, "bot 1")
      }), 60_000)

    it.scopedLive("a connection ended while idle in a transaction (a paused process) fails that transaction, not the process", () =>
      Effect.gen(function*() {
        const c = yield* PostgresConnection.open({ url: yield* emptyDatabase, secretKey, pool: 1 })
        const ended = yield* Effect.either(c.transaction("paused", async (db) => {
          await sql`SET LOCAL idle_in_transaction_session_timeout = 50`.execute(db)
          await sql`SELECT 1`.execute(db)
          // The server ends the connection while no query runs on it: pg emits 'error' on the checked-out client.
          await new Promise((resolve) => setTimeout(resolve, 500))
          await sql`SELECT 1`.execute(db)
        }))
        assert.strictEqual(Either.isLeft(ended) ? ended.left._tag : "", "StorageError")
        const again = yield* c.use("again", async (db) => (await sql<{ one: number }>`SELECT 1 AS one`.execute(db)).rows)
        assert.deepStrictEqual(again, [{ one: 1 }])
      }))

    it.scopedLive("exclusive: instances on one database hold the lock one at a time; another name is not held", () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        const locks = yield* Effect.all(
          [1, 2, 3].map(() => Effect.map(PostgresStores.make({ url, secretKey, pool: 1 }), Context.get(StoreLock.StoreLock)))
        )
        const log: Array<string> = []
        const hold = (lock: StoreLock.StoreLockService, i: number) =>
          lock.exclusive(
            "bootstrap",
            Effect.gen(function*() {
              log.push(`in ${i}`)
              yield* Effect.sleep("100 millis")
              log.push(`out ${i}`)
            })
          )
        yield* Effect.all(locks.map(hold), { concurrency: "unbounded" })
        for (let i = 0; i < log.length; i += 2) assert.strictEqual(log[i + 1], log[i]!.replace("in", "out"), log.join(", "))
        assert.strictEqual(log.length, 6)
        const other = yield* locks[0]!.exclusive("bootstrap", locks[1]!.exclusive("other", Effect.succeed("both")))
        assert.strictEqual(other, "both")
      }))

    it.effect("an unreachable server is a ConnectionError naming host and port, never the password", () =>
      Effect.gen(function*() {
        const port = yield* Effect.promise(closedPort)
        const started = Date.now()
        const result = yield* Effect.either(
          Effect.scoped(open({ url: `postgres://botrelay:hunter2%21@127.0.0.1:${port}/botrelay`, secretKey }))
        )
        assert.isBelow(Date.now() - started, 10_000)
        assert.isTrue(Either.isLeft(result))
        if (Either.isLeft(result)) {
          assert.strictEqual(result.left._tag, "ConnectionError")
          assert.match(result.left.message, new RegExp(`^cannot connect to PostgreSQL at 127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`))
          assert.notInclude(result.left.message, "hunter2")
        }
      }))

    it.effect("a database that does not exist and a malformed URL are ConnectionErrors", () =>
      Effect.gen(function*() {
        const missing = yield* Effect.either(Effect.scoped(open({ url: cluster!.url("no_such_database"), secretKey })))
        assert.isTrue(Either.isLeft(missing))
        if (Either.isLeft(missing)) {
          assert.strictEqual(missing.left.message, `cannot connect to PostgreSQL at ${cluster!.dir}:5432: database "no_such_database" does not exist`)
        }
        const malformed = yield* Effect.either(Effect.scoped(open({ url: "postgres://user:pa ss@[::1/x", secretKey })))
        assert.isTrue(Either.isLeft(malformed))
        if (Either.isLeft(malformed)) {
          assert.strictEqual(malformed.left._tag, "ConnectionError")
          assert.notInclude(malformed.left.message, "pa ss")
        }
      }))

    it.scoped("search reads the GIN index, and a chat's page its index", () =>
      Effect.gen(function*() {
        const url = yield* emptyDatabase
        yield* Effect.scoped(open({ url, secretKey }))
        const plan = async (text: string) => {
          const rows = await cluster!.query(`SET enable_seqscan = off; EXPLAIN ${text}`, PgCluster.databaseOf(url))
          return rows.map((r) => String(r["QUERY PLAN"])).join("\n")
        }
        const search = yield* Effect.promise(() =>
          plan("SELECT position FROM botrelay_messages WHERE search_vector @@ '''hello'':*'::tsquery ORDER BY position DESC LIMIT 5")
        )
        assert.match(search, /botrelay_messages_search|botrelay_messages_position/)
        const page = yield* Effect.promise(() =>
          plan("SELECT id FROM botrelay_messages WHERE bot_id = 1 AND chat_id = 2 ORDER BY date DESC, id DESC LIMIT 10")
        )
        assert.match(page, /botrelay_messages_chat_date/)
      }))
  })
} else {
  describe("postgres storage", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}

/** A PostgreSQL wire message: its type byte, then its length and body. */
const wire = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5)
  head.write(type, 0, "latin1")
  head.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([head, body])
}

/** An ErrorResponse with these severity, code and message. */
const fatal = (code: string, message: string) =>
  wire("E", Buffer.from(`SFATAL\0VFATAL\0C${code}\0M${message}\0\0`, "utf8"))

/**
 * A server that lets the first connection in and, in the same write, ends it (as a shutting-down server ends its
 * sessions); it refuses every later one while starting up.
 */
const endingServer = () =>
  new Promise<{ readonly url: string; readonly close: () => Promise<void> }>((resolve) => {
    let connections = 0
    const server = createServer((socket) => {
      const first = ++connections === 1
      socket.on("error", () => {})
      socket.once("data", () => {
        const ok = Buffer.alloc(4)
        socket.end(
          first
            ? Buffer.concat([
              wire("R", ok),
              wire("Z", Buffer.from("I")),
              fatal("57P01", "terminating connection due to administrator command")
            ])
            : fatal("57P03", "the database system is shutting down")
        )
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        url: `postgres://botrelay@127.0.0.1:${port}/botrelay?sslmode=disable`,
        close: () => new Promise<void>((done) => server.close(() => done()))
      })
    })
  })

describe("PostgresConnection", () => {
  it.live("a connection ended just as the pool hands it out fails the open, not the process", () =>
    Effect.gen(function*() {
      const server = yield* Effect.promise(endingServer)
      const result = yield* Effect.either(Effect.scoped(PostgresConnection.open({ url: server.url, secretKey })))
      yield* Effect.promise(server.close)
      assert.isTrue(Either.isLeft(result))
      assert.strictEqual(Either.isLeft(result) ? result.left._tag : "", "MigrationError")
    }))
})
