import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from "node:http"
import { createServer, type AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { InboxStore } from "@botrelay/core"
import { PostgresImport } from "@botrelay/postgres"
import { SecretKey, SqliteStores } from "@botrelay/sqlite"
import { FakeTelegram, PgCluster } from "@botrelay/testing"
import BetterSqlite3 from "better-sqlite3"
import { Context, Effect } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { eventually, fastRuntime, replyOf, startServer, unreachableTelegram } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")
/** The key the harness starts servers on PostgreSQL with. */
const targetKey = "5".repeat(64)
const password = "pg-pa55word"

let cluster: PgCluster.Cluster
let fake: FakeTelegram.FakeTelegram
const dirs: Array<string> = []
const closers: Array<() => Promise<unknown>> = []

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "botrelay-migrate-"))
  dirs.push(dir)
  return dir
}

/** A new empty database's URL, with a password (the cluster trusts any): it must never be printed. */
const newDatabase = async () => {
  const name = PgCluster.databaseOf(await cluster.createDatabase())
  return { name, url: `postgresql://postgres:${password}@127.0.0.1:${cluster.port}/${name}` }
}

const freePort = () =>
  new Promise<number>((done, reject) => {
    const probe = createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as AddressInfo).port
      probe.close(() => done(port))
    })
  })

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built bin to its end. */
const runBin = (args: ReadonlyArray<string>, env: Record<string, string> = { BOTRELAY_SECRET_KEY: targetKey }) =>
  new Promise<Ran>((done) => {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => stdout += chunk)
    child.stderr.on("data", (chunk) => stderr += chunk)
    child.on("exit", (code) => done({ code, stdout, stderr }))
  })

const migrate = (from: string, to: string, extra: ReadonlyArray<string> = [], env?: Record<string, string>) =>
  runBin(["migrate", "--from", from, "--to", to, ...extra], env)

/** Every Botrelay table of a database with its rows, in a stable order; [] when it has none. */
const snapshot = async (database: string) => {
  const tables = (await cluster.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'botrelay%' ORDER BY 1`,
    database
  )).map((r) => String(r.table_name))
  const all: Record<string, Array<string>> = {}
  for (const table of tables) {
    all[table] = (await cluster.query(`SELECT * FROM ${table}`, database)).map((r) => JSON.stringify(r)).sort()
  }
  return all
}

/** A backend that answers 500 until told to accept, keeping what it was sent. */
const startBackend = async () => {
  const received: Array<{ readonly body: any; readonly headers: IncomingHttpHeaders; readonly accepted: boolean }> = []
  const state = { accepting: false }
  const server: Server = createHttpServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => body += chunk)
    req.on("end", () => {
      received.push({ body: JSON.parse(body), headers: req.headers, accepted: state.accepting })
      res.writeHead(state.accepting ? 200 : 500).end()
    })
  })
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done))
  closers.push(() => new Promise((done) => server.close(done)))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, state }
}

/** A bot's column values as compared across drivers: secrets decrypted, derived columns left out, text NUL-free. */
const comparable = (table: string, row: Record<string, unknown>, cipher: SecretKey.Cipher) => {
  const out: Record<string, string | null> = {}
  for (const [column, value] of Object.entries(row).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
    if (column === "token_hash" || column === "search_vector" || column === "position") continue
    let v = value === null ? null : typeof value === "string" ? value : JSON.stringify(value)
    if (v !== null && table === "botrelay_bots" && column === "token") v = cipher.decrypt("token", v)
    if (v !== null && table === "botrelay_bots" && column === "secret_token") v = cipher.decrypt("secret_token", v)
    if (v !== null && table === "botrelay_webhooks" && column === "secret") v = cipher.decrypt("webhook_secret", v)
    if (v !== null && table === "botrelay_settings" && column === "value" && row.name === "llm.api_key") {
      v = cipher.decrypt("setting", v)
    }
    out[column] = v === null ? null : v.replaceAll("\u0000", "\uFFFD")
  }
  return JSON.stringify(out)
}

/** The SQLite file's key: its key file's, else (a server started with BOTRELAY_SECRET_KEY) the target's. */
const sourceKey = (file: string) =>
  existsSync(SecretKey.keyFileFor(file))
    ? SecretKey.readFile(SecretKey.keyFileFor(file))
    : SecretKey.fromHex(targetKey)!

/** Asserts that the PostgreSQL database holds exactly the SQLite file's rows, table by table. */
const assertSameRows = async (file: string, database: string) => {
  const sqlite = new BetterSqlite3(file, { readonly: true })
  const from = SecretKey.cipher(sourceKey(file))
  const to = SecretKey.cipher(SecretKey.fromHex(targetKey)!)
  try {
    for (const table of PostgresImport.tables) {
      const expected = (sqlite.prepare(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>)
        .map((r) => comparable(table, r, from)).sort()
      const actual = (await cluster.query(`SELECT * FROM ${table}`, database)).map((r) => comparable(table, r, to)).sort()
      assert.deepStrictEqual(actual, expected, table)
    }
    const positions = (sqlite.prepare("SELECT rowid, bot_id, chat_id, id FROM botrelay_messages").all() as Array<any>)
      .map((m) => `${m.bot_id}/${m.chat_id}/${m.id}@${m.rowid}`).sort()
    const copied = (await cluster.query("SELECT position, bot_id, chat_id, id FROM botrelay_messages", database))
      .map((m) => `${String(m.bot_id)}/${String(m.chat_id)}/${String(m.id)}@${String(m.position)}`).sort()
    assert.deepStrictEqual(copied, positions)
  } finally {
    sqlite.close()
  }
}

/** The count line of each kind, from SQLite. */
const expectedReport = (file: string, url: string) => {
  const sqlite = new BetterSqlite3(file, { readonly: true })
  try {
    const lines = PostgresImport.tables.map((table) =>
      `${PostgresImport.kinds[table]} ${(sqlite.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n}`
    )
    return [...lines, `migrated to postgres://127.0.0.1:${cluster.port}/${PgCluster.databaseOf(url)}`].join("\n") + "\n"
  } finally {
    sqlite.close()
  }
}

/** What the seeded SQLite server left behind, for the checks on PostgreSQL. */
interface Seeded {
  readonly file: string
  readonly dir: string
  readonly port: number
  readonly publicUrl: string
  readonly adminKey: string
  readonly operatorKey: string
  readonly session: string
  readonly bots: {
    readonly support: { readonly id: number; readonly tg: FakeTelegram.FakeBot }
    readonly hooked: { readonly id: number; readonly tg: FakeTelegram.FakeBot; readonly secret: string }
    readonly forwarder: { readonly id: number; readonly tg: FakeTelegram.FakeBot }
    readonly poller: { readonly id: number; readonly tg: FakeTelegram.FakeBot }
  }
  readonly customer: ReturnType<FakeTelegram.FakeTelegram["addUser"]>
  readonly deletedRouteId: number
  readonly maxAuditId: number
  readonly backend: Awaited<ReturnType<typeof startBackend>>
}

const login = (baseUrl: string, username: string, pass: string) =>
  fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password: pass })
  }).then(replyOf)

/** A SQLite database filled through the real server and API; pending inbox updates through the store. */
const seed = async (): Promise<Seeded> => {
  const dir = tempDir()
  const file = join(dir, "botrelay.db")
  const port = await freePort()
  const publicUrl = `http://127.0.0.1:${port}`
  const backend = await startBackend()
  const server = await startServer({
    telegramApi: fake.apiRoot,
    dir,
    flags: { database: file },
    port,
    publicUrl,
    runtime: { ...fastRuntime, outbox: { ...fastRuntime.outbox, maxAge: "1 hour" } }
  })
  try {
    const add = async (body: Record<string, unknown>, username: string) => {
      const tg = fake.addBot({ username })
      const reply = await server.call("/api/bots/add", { body: { token: tg.token, ...body } })
      assert.strictEqual(reply.status, 200, reply.text)
      return { tg, id: reply.json.id as number }
    }
    const support = await add({ name: "support", manage_enabled: true }, "support_bot")
    const hookedBot = await add({ name: "hooked", manage_enabled: true }, "hooked_bot")
    const forwarder = await add(
      { name: "forwarder", proxy_enabled: true, backend_url: backend.url, secret_token: "backend-secret-token" },
      "forwarder_bot"
    )
    const poller = await add({ name: "poller", long_poll_enabled: true }, "poller_bot")

    const hooked = await server.call("/api/bots/update", { body: { id: hookedBot.id, webhook_mode: true } })
    assert.strictEqual(hooked.status, 200, hooked.text)
    const registered = await fake.waitForCall((c) => c.botId === hookedBot.tg.id && c.method === "setWebhook")
    const secret = registered.params.secret_token as string

    const customer = fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann" })
    for (const text of ["where is my parcel", "hello again", "привет мир"]) fake.userSends(support.tg.id, { user: customer, text })
    await eventually(async () => {
      const page = await server.call(`/api/messages?bot_id=${support.id}&chat_id=${customer.id}&limit=50`)
      return page.json?.length === 3 || undefined
    })
    const sent = await server.call("/api/messages/send", {
      body: { bot_id: support.id, chat_id: customer.id, text: "your parcel ships today" }
    })
    assert.strictEqual(sent.status, 200, sent.text)

    for (const text of ["buffered one", "buffered two"]) fake.userSends(poller.tg.id, { user: customer, text })
    await eventually(async () => (await server.call(`/api/updates/poll?bot_id=${poller.id}`)).json?.length === 2 || undefined)

    fake.userSends(forwarder.tg.id, { user: customer, text: "for the backend" })
    await eventually(() => backend.received.length >= 2 || undefined)

    const route = await server.call("/api/routes/add", {
      body: { source_bot_id: support.id, target_bot_id: hookedBot.id, action: "drop", condition_type: "keyword", condition_value: "spam", description: "kept" }
    })
    assert.strictEqual(route.status, 200, route.text)
    const doomed = await server.call("/api/routes/add", { body: { source_bot_id: poller.id, target_bot_id: support.id, action: "drop" } })
    assert.strictEqual((await server.call(`/api/routes/delete?id=${doomed.json.id}`, { method: "POST" })).status, 200)

    const tag = await server.call("/api/tags/add", {
      body: { bot_id: support.id, chat_id: customer.id, user_id: customer.id, username: "ann", tag: "vip", color: "#abc" }
    })
    assert.strictEqual(tag.status, 200, tag.text)
    const operator = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [support.id] } })
    assert.strictEqual(operator.status, 200, operator.text)
    const account = await server.call("/api/accounts", {
      body: { username: "alice", display_name: "Alice", password: "alice password 1", role: "operator", bot_ids: [support.id] }
    })
    assert.strictEqual(account.status, 200, account.text)
    const signedIn = await login(server.baseUrl, "alice", "alice password 1")
    assert.strictEqual(signedIn.status, 200, signedIn.text)
    const session = /botrelay_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")![1]!
    const llm = await server.call("/api/llm", { body: { base_url: "https://llm.example.com/v1", api_key: "sk-test-abcdwxyz", model: "m" } })
    assert.strictEqual(llm.status, 200, llm.text)
    const audit = await server.call("/api/audit?limit=1")

    return {
      file,
      dir,
      port,
      publicUrl,
      adminKey: server.adminKey,
      operatorKey: operator.json.key,
      session,
      bots: { support, hooked: { ...hookedBot, secret }, forwarder, poller },
      customer,
      deletedRouteId: doomed.json.id,
      maxAuditId: audit.json.items[0].id,
      backend
    }
  } finally {
    await server.close()
  }
}

/** Adds, through the store, an update the pipeline has not processed yet; and a text with a NUL. */
const addPending = async (seeded: Seeded) => {
  const update = {
    update_id: 990001,
    message: {
      message_id: 990001,
      date: Math.floor(Date.now() / 1000),
      chat: { id: seeded.customer.id, type: "private" },
      from: { id: seeded.customer.id, is_bot: false, first_name: "Ann" },
      text: "waiting in the inbox"
    }
  }
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const stores = yield* SqliteStores.make({ filename: seeded.file, secretKey: sourceKey(seeded.file) })
    const inbox = Context.get(stores, InboxStore.InboxStore)
    const offset = yield* inbox.ingressOffset(seeded.bots.support.id)
    yield* inbox.commitUpdates(
      seeded.bots.support.id,
      [{ update_id: update.update_id, payload: JSON.stringify(update), received_at: new Date().toISOString() }],
      offset
    )
  })))
  const sqlite = new BetterSqlite3(seeded.file)
  sqlite.prepare("UPDATE botrelay_routes SET description = ?").run("kept\u0000route")
  sqlite.close()
}

if (PgCluster.available) {
  let seeded: Seeded
  let target: { readonly name: string; readonly url: string }

  beforeAll(async () => {
    cluster = await PgCluster.start({ listen: "tcp" })
    fake = await FakeTelegram.start()
    seeded = await seed()
    await addPending(seeded)
    target = await newDatabase()
  }, 120_000)
  afterAll(async () => {
    for (const close of closers) await close()
    await fake?.close()
    await cluster?.stop()
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  describe("botrelay migrate", () => {
    it("copies every table, keeping ids and times, re-encrypting secrets; prints a count per kind; a server on PostgreSQL serves it all", async () => {
      const ran = await migrate(seeded.file, target.url)
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual(ran.stdout, expectedReport(seeded.file, target.url))
      assert.match(ran.stdout, /^bots 4$/m)
      assert.match(ran.stdout, /^inbox [1-9]\d*$/m)
      assert.match(ran.stdout, /^outbox [1-9]\d*$/m)
      assert.match(ran.stdout, /^buffers 2$/m)
      assert.notInclude(ran.stdout + ran.stderr, password)
      await assertSameRows(seeded.file, target.name)

      seeded.backend.state.accepting = true
      const server = await startServer({
        telegramApi: fake.apiRoot,
        port: seeded.port,
        publicUrl: seeded.publicUrl,
        adminKey: seeded.adminKey,
        database: target.url
      })
      try {
        const { support, hooked, forwarder, poller } = seeded.bots
        const bots = await server.call("/api/bots")
        assert.deepStrictEqual(
          bots.json.map((b: any) => [b.id, b.name]).sort(),
          [[support.id, "support"], [hooked.id, "hooked"], [forwarder.id, "forwarder"], [poller.id, "poller"]].sort()
        )
        const scoped = await server.call("/api/bots", { key: seeded.operatorKey })
        assert.deepStrictEqual(scoped.json.map((b: any) => b.id), [support.id])

        const me = await fetch(`${server.baseUrl}/api/auth/me`, { headers: { cookie: `botrelay_session=${seeded.session}` } })
        assert.strictEqual(me.status, 200)
        assert.strictEqual((await login(server.baseUrl, "alice", "alice password 1")).status, 200)

        const found = await server.call("/api/search?q=parcel")
        assert.deepStrictEqual(found.json.items.map((m: any) => m.text).sort(), ["where is my parcel", "your parcel ships today"])
        assert.strictEqual((await server.call(`/api/search?q=${encodeURIComponent("ПРИВЕТ")}`)).json.items.length, 1)

        const llm = await server.call("/api/llm")
        assert.strictEqual(llm.json.api_key, "sk-…wxyz")
        assert.isTrue(llm.json.configured)
        const tags = await server.call(`/api/tags?chat_id=${seeded.customer.id}`)
        assert.deepStrictEqual(tags.json.map((t: any) => t.tag), ["vip"])
        const routes = await server.call("/api/routes")
        assert.deepStrictEqual(routes.json.map((r: any) => r.description), ["kept\uFFFDroute"])
        const person = await server.call(`/api/people/get?user_id=${seeded.customer.id}`)
        assert.strictEqual(person.status, 200, person.text)
        assert.strictEqual(person.json.first_name, "Ann")
        const chats = await server.call(`/api/chats?bot_id=${support.id}`)
        assert.deepStrictEqual(chats.json.items.map((c: any) => c.chat_id), [seeded.customer.id])
        const audit = await server.call("/api/audit?limit=200")
        assert.includeMembers(audit.json.items.map((e: any) => e.action), ["bots.add", "accounts.create", "keys.create"])

        // Pending work resumes: the inbox update is processed, the outbox delivery delivered, the buffer served.
        await eventually(async () => {
          const page = await server.call(`/api/messages?bot_id=${support.id}&chat_id=${seeded.customer.id}&limit=50`)
          return page.json?.some?.((m: any) => m.text === "waiting in the inbox") || undefined
        })
        const delivered = await eventually(() => seeded.backend.received.find((r) => r.accepted))
        assert.strictEqual(delivered.body.message.text, "for the backend")
        assert.strictEqual(delivered.headers["x-telegram-bot-api-secret-token"], "backend-secret-token")
        const buffered = await (await fetch(`${server.baseUrl}/tgapi/bot${poller.tg.token}/getUpdates`)).json()
        assert.deepStrictEqual(buffered.result.map((u: any) => u.message.text), ["buffered one", "buffered two"])

        const webhook = await fetch(`${server.baseUrl}/telegram/webhook/${hooked.id}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": hooked.secret },
          body: JSON.stringify({
            update_id: 880001,
            message: { message_id: 1, date: 1, chat: { id: 5, type: "private" }, from: { id: 5, is_bot: false, first_name: "W" }, text: "hook" }
          })
        })
        assert.strictEqual(webhook.status, 200, await webhook.text())

        // New rows get fresh ids: past every copied id, and past ids SQLite handed out and deleted.
        const tg = fake.addBot({ username: "fresh_bot" })
        const added = await server.call("/api/bots/add", { body: { token: tg.token, name: "fresh" } })
        assert.strictEqual(added.status, 200, added.text)
        assert.strictEqual(added.json.id, Math.max(support.id, hooked.id, forwarder.id, poller.id) + 1)
        const route = await server.call("/api/routes/add", { body: { source_bot_id: support.id, target_bot_id: added.json.id, action: "drop" } })
        assert.strictEqual(route.json.id, seeded.deletedRouteId + 1)
        const newest = await server.call("/api/audit?limit=1")
        assert.isAbove(newest.json.items[0].id, seeded.maxAuditId)
        const duplicate = await server.call("/api/bots/add", { body: { token: support.tg.token } })
        assert.notStrictEqual(duplicate.status, 200, "the token hash was made with the new key")
      } finally {
        await server.close()
      }
    }, 120_000)

    it("refuses a non-empty target unless --force, which replaces its Botrelay data in the same transaction", async () => {
      const before = await snapshot(target.name)
      const refused = await migrate(seeded.file, target.url)
      assert.strictEqual(refused.code, 1)
      assert.include(refused.stderr, "the PostgreSQL database is not empty (it holds bots,")
      assert.include(refused.stderr, "nothing was written")
      assert.include(refused.stderr, "--force")
      assert.strictEqual(refused.stdout, "")
      assert.deepStrictEqual(await snapshot(target.name), before)

      const forced = await migrate(seeded.file, target.url, ["--force"])
      assert.strictEqual(forced.code, 0, forced.stderr)
      assert.strictEqual(forced.stdout, expectedReport(seeded.file, target.url))
      await assertSameRows(seeded.file, target.name)
    }, 60_000)

    it("refuses while a server holds the file, without the secret key, without the file, or without the database; nothing is written", async () => {
      const empty = await newDatabase()
      const untouched = await snapshot(empty.name)
      assert.deepStrictEqual(untouched, {})

      const noKey = await migrate(seeded.file, empty.url, [], {})
      assert.strictEqual(noKey.code, 1)
      assert.include(noKey.stderr, "BOTRELAY_SECRET_KEY is required")
      const badKey = await migrate(seeded.file, empty.url, [], { BOTRELAY_SECRET_KEY: "xyz" })
      assert.strictEqual(badKey.code, 1)
      assert.include(badKey.stderr, "BOTRELAY_SECRET_KEY must be 64 hexadecimal characters")

      const missing = await migrate(join(tempDir(), "nothing.db"), empty.url)
      assert.strictEqual(missing.code, 1)
      assert.include(missing.stderr, "there is no SQLite database at")

      const port = await freePort()
      const unreachable = await migrate(seeded.file, `postgres://postgres:${password}@127.0.0.1:${port}/botrelay`)
      assert.strictEqual(unreachable.code, 1)
      assert.include(unreachable.stderr, `cannot connect to PostgreSQL at 127.0.0.1:${port}: `)
      assert.notInclude(unreachable.stderr, password)

      const held = join(tempDir(), "held.db")
      const server = spawn(process.execPath, [bin], {
        env: {
          PATH: process.env.PATH ?? "",
          BOTRELAY_DATABASE: held,
          BOTRELAY_PORT: "0",
          BOTRELAY_HOST: "127.0.0.1",
          BOTRELAY_TELEGRAM_API: unreachableTelegram
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const exited = new Promise((done) => server.on("exit", done))
      closers.push(async () => {
        server.kill("SIGKILL")
        await exited
      })
      let output = ""
      server.stdout.on("data", (chunk) => output += chunk)
      server.stderr.on("data", (chunk) => output += chunk)
      await eventually(() => /Listening on/.test(output) || undefined)
      const busy = await migrate(held, empty.url)
      assert.strictEqual(busy.code, 1)
      assert.include(busy.stderr, `this SQLite file is in use by another Botrelay server (pid ${server.pid})`)
      server.kill("SIGTERM")
      await exited

      for (const ran of [noKey, badKey, missing, unreachable, busy]) assert.strictEqual(ran.stdout, "")
      assert.deepStrictEqual(await snapshot(empty.name), untouched)

      const free = await migrate(held, empty.url)
      assert.strictEqual(free.code, 0, free.stderr)
      assert.match(free.stdout, /^keys 1$/m)
    }, 90_000)

    it("holds the file for the whole copy: a server cannot start on it meanwhile; a large table streams through", async () => {
      const file = join(tempDir(), "big.db")
      await Effect.runPromise(Effect.scoped(Effect.asVoid(SqliteStores.make({ filename: file }))))
      const cipher = SecretKey.cipher(SecretKey.readFile(SecretKey.keyFileFor(file)))
      const sqlite = new BetterSqlite3(file)
      sqlite.prepare("INSERT INTO botrelay_bots (token, token_hash, name, source, created_at, updated_at) VALUES (?, ?, 'big', 'web', '', '')")
        .run(cipher.encrypt("token", "77:big"), cipher.tokenHash("77:big"))
      const insert = sqlite.prepare(
        "INSERT INTO botrelay_messages (bot_id, chat_id, id, text, date, direction) VALUES (1, ?, ?, ?, ?, 'in')"
      )
      const count = 100_000
      sqlite.transaction(() => {
        for (let i = 1; i <= count; i++) insert.run(i % 100, i, `message number ${i} about parcels`, 1_700_000_000 + i)
      })()
      sqlite.close()
      const empty = await newDatabase()

      const copying = migrate(file, empty.url)
      // The copy has begun (it takes PostgreSQL's advisory locks only once it holds the file).
      await eventually(async () => {
        const locks = await cluster.query(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = '${empty.name}'`
        )
        return Number(locks[0]!.n) > 0 || undefined
      }, 10_000)
      const server = await runBin([], {
        BOTRELAY_DATABASE: file,
        BOTRELAY_PORT: "0",
        BOTRELAY_HOST: "127.0.0.1",
        BOTRELAY_TELEGRAM_API: unreachableTelegram
      })
      assert.strictEqual(server.code, 1, server.stdout)
      assert.include(server.stderr, "this SQLite file is in use by another Botrelay server")
      const ran = await copying
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.match(ran.stdout, new RegExp(`^messages ${count}$`, "m"))
      const found = await cluster.query(
        `SELECT count(*) AS n FROM botrelay_messages WHERE search_vector @@ 'parcels'::tsquery`,
        empty.name
      )
      assert.strictEqual(Number(found[0]!.n), count)
    }, 90_000)

    it("a row PostgreSQL refuses midway: exit 1, nothing written", async () => {
      const dir = tempDir()
      const copy = join(dir, "broken.db")
      const source = new BetterSqlite3(seeded.file, { readonly: true })
      source.exec(`VACUUM INTO '${copy}'`)
      source.close()
      const broken = new BetterSqlite3(copy)
      broken.pragma("foreign_keys = OFF")
      broken.prepare("INSERT INTO botrelay_route_sends (bot_id, kind, route_id, source_bot_id, update_id, from_chat_id, message_id, chat_id, next_attempt_at, created_at, updated_at) VALUES (424242, 'copy', 1, 1, 1, 1, 1, 1, '', '', '')").run()
      broken.close()
      if (existsSync(SecretKey.keyFileFor(seeded.file))) SecretKey.writeFile(SecretKey.keyFileFor(copy), sourceKey(seeded.file))

      const empty = await newDatabase()
      const ran = await migrate(copy, empty.url)
      assert.strictEqual(ran.code, 1)
      assert.include(ran.stderr, "could not copy: ")
      assert.include(ran.stderr, "foreign key")
      assert.include(ran.stderr, "nothing was written")
      const after = await snapshot(empty.name)
      for (const [table, rows] of Object.entries(after)) {
        if (["botrelay_secret_key", "botrelay_event_state", "botrelay_migrations", "botrelay_migrations_lock"].includes(table)) continue
        assert.deepStrictEqual(rows, [], table)
      }
    }, 60_000)
  })
} else {
  describe("botrelay migrate", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}
