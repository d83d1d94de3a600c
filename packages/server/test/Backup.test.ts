import { spawn } from "node:child_process"
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { FakeTelegram } from "@botrelay/testing"
import BetterSqlite3 from "better-sqlite3"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { eventually, startServer, type TestServer } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs the built bin to its end, with only PATH and `env` in its environment. */
const runBin = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
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

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "botrelay-backup-"))
  dirs.push(dir)
  return dir
}

/** Every table of a SQLite file with its rows, sorted: equal snapshots mean equal databases. */
const snapshot = (file: string) => {
  const db = new BetterSqlite3(file, { readonly: true })
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<
      { name: string }
    >).map((t) => t.name)
    return Object.fromEntries(
      tables.map((t) => [t, db.prepare(`SELECT * FROM "${t}"`).all().map((r) => JSON.stringify(r)).sort()])
    )
  } finally {
    db.close()
  }
}

const mode = (file: string) => statSync(file).mode & 0o777

describe("botrelay backup and restore (sqlite)", () => {
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer
  let dir: string
  let database: string
  let botId: number
  let customer: ReturnType<FakeTelegram.FakeTelegram["addUser"]>
  let operatorKey: string
  let tg: FakeTelegram.FakeBot

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    dir = tempDir()
    database = join(dir, "botrelay.db")
    server = await startServer({ telegramApi: fake.apiRoot, dir })
    tg = fake.addBot({ username: "support_bot" })
    const bot = await server.call("/api/bots/add", { body: { token: tg.token, name: "support", manage_enabled: true } })
    assert.strictEqual(bot.status, 200, bot.text)
    botId = bot.json.id
    customer = fake.addUser({ first_name: "Ann", username: "ann" })
    fake.userSends(tg.id, { user: customer, text: "first" })
    await eventually(async () =>
      (await server.call(`/api/messages?bot_id=${botId}&chat_id=${customer.id}`)).json?.length === 1 || undefined
    )
    const operator = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [botId] } })
    assert.strictEqual(operator.status, 200, operator.text)
    operatorKey = operator.json.key
    const route = await server.call("/api/routes/add", {
      body: { source_bot_id: botId, target_bot_id: botId, action: "drop", condition_type: "keyword", condition_value: "spam" }
    })
    assert.strictEqual(route.status, 200, route.text)
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await fake?.close()
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  let backupFile: string

  it("backs up while the server runs and writes: a sound copy, 0600, with the key file beside it", async () => {
    const out = tempDir()
    backupFile = join(out, "botrelay.backup")
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing && i < 100; i++) {
        fake.userSends(tg.id, { user: customer, text: `during backup ${i}` })
        await new Promise((done) => setImmediate(done))
      }
    })()
    const ran = await runBin(["backup", "--to", backupFile, "--database", database])
    writing = false
    await writer
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.match(ran.stdout, /backed up .* to .*botrelay\.backup/)
    assert.strictEqual(mode(backupFile), 0o600)
    assert.strictEqual(mode(`${backupFile}.key`), 0o600)
    assert.strictEqual(readFileSync(`${backupFile}.key`, "utf8"), readFileSync(join(dir, "secret.key"), "utf8"))
    const copy = new BetterSqlite3(backupFile, { readonly: true })
    try {
      assert.strictEqual(copy.pragma("integrity_check", { simple: true }), "ok")
    } finally {
      copy.close()
    }
    const copied = snapshot(backupFile)
    assert.isAbove(copied.botrelay_messages!.length, 0)
    assert.strictEqual(copied.botrelay_bots!.length, 1)
    assert.strictEqual(copied.botrelay_routes!.length, 1)
  }, 60_000)

  it("refuses an existing file without --force, and overwrites it with --force", async () => {
    const before = readFileSync(backupFile)
    const refused = await runBin(["backup", "--to", backupFile, "--database", database])
    assert.strictEqual(refused.code, 1)
    assert.match(refused.stderr, /exists; pass --force/)
    assert.isTrue(readFileSync(backupFile).equals(before))
    const forced = await runBin(["backup", "--to", backupFile, "--database", database, "--force"])
    assert.strictEqual(forced.code, 0, forced.stderr)
    assert.strictEqual(mode(backupFile), 0o600)
    const withEnvKey = join(tempDir(), "env-key.backup")
    const envKey = await runBin(["backup", "--to", withEnvKey, "--database", database], { BOTRELAY_SECRET_KEY: "b".repeat(64) })
    assert.strictEqual(envKey.code, 0, envKey.stderr)
    assert.isFalse(existsSync(`${withEnvKey}.key`))
    assert.match(envKey.stdout, /BOTRELAY_SECRET_KEY: keep that value with the backup/)
  }, 30_000)

  it("refuses to restore into the database a running server holds", async () => {
    const ran = await runBin(["restore", "--from", backupFile, "--database", database, "--force"])
    assert.strictEqual(ran.code, 1)
    assert.match(ran.stderr, /in use by another Botrelay server/)
    assert.match(ran.stderr, /nothing was changed/)
  }, 30_000)

  it("refuses a key that does not decrypt the backup's tokens, changing nothing", async () => {
    const lone = tempDir()
    copyFileSync(backupFile, join(lone, "copy.backup"))
    const target = join(tempDir(), "botrelay.db")
    const ran = await runBin(["restore", "--from", join(lone, "copy.backup"), "--database", target], {
      BOTRELAY_SECRET_KEY: "a".repeat(64)
    })
    assert.strictEqual(ran.code, 1)
    assert.match(ran.stderr, /does not decrypt the tokens/)
    assert.isFalse(existsSync(target))
    const keyless = await runBin(["restore", "--from", join(lone, "copy.backup"), "--database", target])
    assert.strictEqual(keyless.code, 1)
    assert.match(keyless.stderr, /no key file/)
    assert.isFalse(existsSync(target))
  }, 30_000)

  it("restores into a fresh path: the same rows table by table, and a server on it serves the same bots, messages and keys", async () => {
    const fresh = tempDir()
    const target = join(fresh, "botrelay.db")
    closeSync(openSync(target, "w"))
    const ran = await runBin(["restore", "--from", backupFile, "--database", target])
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.strictEqual(mode(join(fresh, "secret.key")), 0o600)
    assert.deepStrictEqual(snapshot(target), snapshot(backupFile))

    const bots = await server.call("/api/bots")
    const messages = new Set(
      (await server.call(`/api/messages?bot_id=${botId}&chat_id=${customer.id}&limit=200`)).json.map((m: any) => m.id)
    )
    const stored = snapshot(backupFile).botrelay_messages!.length
    await server.close()
    const restored = await startServer({ telegramApi: fake.apiRoot, dir: fresh, adminKey: server.adminKey })
    try {
      const again = await restored.call("/api/bots")
      assert.deepStrictEqual(
        again.json.map((b: any) => [b.id, b.token, b.name, b.manage_enabled]),
        bots.json.map((b: any) => [b.id, b.token, b.name, b.manage_enabled])
      )
      const page = await restored.call(`/api/messages?bot_id=${botId}&chat_id=${customer.id}&limit=200`)
      assert.strictEqual(page.status, 200, page.text)
      assert.isAtLeast(page.json.length, stored)
      for (const m of page.json) assert.isTrue(messages.has(m.id))
      const asOperator = await restored.call("/api/bots", { key: operatorKey })
      assert.strictEqual(asOperator.status, 200, asOperator.text)
      assert.deepStrictEqual(asOperator.json.map((b: any) => b.id), [botId])
      assert.strictEqual((await restored.call("/api/routes")).json.length, 1)
    } finally {
      await restored.close()
    }
    server = await startServer({ telegramApi: fake.apiRoot, dir, adminKey: server.adminKey })
  }, 60_000)

  it("refuses a database that holds rows unless --force", async () => {
    const other = tempDir()
    const target = join(other, "botrelay.db")
    const held = await startServer({ dir: other })
    await held.close()
    const before = snapshot(target)
    const refused = await runBin(["restore", "--from", backupFile, "--database", target])
    assert.strictEqual(refused.code, 1)
    assert.match(refused.stderr, /is not empty .*pass --force/)
    assert.deepStrictEqual(snapshot(target), before)
    const forced = await runBin(["restore", "--from", backupFile, "--database", target, "--force"])
    assert.strictEqual(forced.code, 0, forced.stderr)
    assert.deepStrictEqual(snapshot(target), snapshot(backupFile))
    assert.strictEqual(readFileSync(join(other, "secret.key"), "utf8"), readFileSync(`${backupFile}.key`, "utf8"))
  }, 60_000)

  it("exits 2 on bad usage, and points a PostgreSQL URL at pg_dump / pg_restore", async () => {
    for (const args of [["backup"], ["backup", "--to", "x", "--bogus"], ["restore", "--from", "x", "y"]]) {
      const ran = await runBin(args)
      assert.strictEqual(ran.code, 2, `${args.join(" ")}: ${ran.stderr}`)
    }
    const dump = await runBin(["backup", "--to", join(tempDir(), "b"), "--database", "postgres://u:secret-pass@127.0.0.1/db"])
    assert.strictEqual(dump.code, 2)
    assert.match(dump.stderr, /pg_dump/)
    assert.match(dump.stderr, /docs\/operations\.md/)
    assert.notInclude(dump.stderr, "secret-pass")
    const viaEnv = await runBin(["restore", "--from", "x"], { BOTRELAY_DATABASE: "postgresql://127.0.0.1/db" })
    assert.strictEqual(viaEnv.code, 2)
    assert.match(viaEnv.stderr, /pg_restore/)
    const missing = await runBin(["backup", "--to", join(tempDir(), "b"), "--database", join(tempDir(), "none.db")])
    assert.strictEqual(missing.code, 1)
    assert.match(missing.stderr, /there is no database/)
    const absent = await runBin(["restore", "--from", join(tempDir(), "none"), "--database", join(tempDir(), "x.db")])
    assert.strictEqual(absent.code, 1)
  }, 30_000)
})
