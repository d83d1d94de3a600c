import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { unreachableTelegram } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")

const dirs: Array<string> = []
const children = new Set<ChildProcess>()
let fake: FakeTelegram.FakeTelegram

beforeAll(async () => {
  fake = await FakeTelegram.start()
})
afterAll(async () => {
  for (const child of children) child.kill("SIGKILL")
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  await fake?.close()
})

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "botrelay-bin-"))
  dirs.push(dir)
  return dir
}

interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly baseUrl: string
  readonly exited: Promise<number | null>
}

/** Starts the built server the way `pnpm start` does, on port 0, and waits until it listens. */
const startBin = async (env: Record<string, string>, args: Array<string> = []): Promise<Running> => {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? "", BOTRELAY_PORT: "0", BOTRELAY_HOST: "127.0.0.1", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  let output = ""
  child.stdout!.on("data", (chunk) => output += chunk)
  child.stderr!.on("data", (chunk) => output += chunk)
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => {
    children.delete(child)
    resolve(code)
  }))
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const match = /Listening on http:\/\/[^:]+:(\d+)/.exec(output)
    if (match) return { child, output: () => output, baseUrl: `http://127.0.0.1:${match[1]}`, exited }
    if (child.exitCode !== null) break
    await new Promise((r) => setTimeout(r, 50))
  }
  child.kill("SIGKILL")
  throw new Error(`server did not start:\n${output}`)
}

describe("the botrelay bin", () => {
  it("starts on a fresh data dir, prints and saves an admin key, serves, and exits 0 on SIGTERM", async () => {
    const dir = tempDir()
    const database = join(dir, "data", "botrelay.db")
    const server = await startBin({ BOTRELAY_DATABASE: database, BOTRELAY_TELEGRAM_API: unreachableTelegram })
    const key = /(brk_[A-Za-z0-9_-]{43})/.exec(server.output())?.[1]
    assert.isDefined(key, server.output())
    const file = join(dir, "data", "admin.key")
    assert.strictEqual(readFileSync(file, "utf8").trim(), key)
    assert.strictEqual(statSync(file).mode & 0o777, 0o600)
    const health = await fetch(`${server.baseUrl}/api/health`)
    assert.strictEqual(health.status, 200)
    const bots = await fetch(`${server.baseUrl}/api/bots`, { headers: { authorization: `Bearer ${key}` } })
    assert.strictEqual(bots.status, 200)
    assert.deepStrictEqual(await bots.json(), [])
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
    const logs = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    assert.isTrue(logs.some((entry) => String(entry.message).includes("Listening on")), server.output())
    for (const entry of logs) assert.includeMembers(Object.keys(entry), ["logLevel", "message", "timestamp"])
  })

  it("keeps its data across restarts and does not mint a second key", async () => {
    const dir = tempDir()
    const database = join(dir, "botrelay.db")
    const first = await startBin({ BOTRELAY_DATABASE: database })
    const key = /(brk_[A-Za-z0-9_-]{43})/.exec(first.output())![1]!
    await fetch(`${first.baseUrl}/api/bots/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ token: "77:persisted" })
    })
    first.child.kill("SIGINT")
    assert.strictEqual(await first.exited, 0)
    const second = await startBin({ BOTRELAY_DATABASE: database })
    assert.notMatch(second.output(), /Admin API key/)
    const bots = await (await fetch(`${second.baseUrl}/api/bots`, { headers: { authorization: `Bearer ${key}` } })).json()
    assert.deepStrictEqual(bots.map((b: any) => b.token), ["77:persisted"])
    second.child.kill("SIGTERM")
    assert.strictEqual(await second.exited, 0)
  })

  it("uses BOTRELAY_ADMIN_KEY and registers BOTRELAY_BOT_TOKEN as a cli bot; flags override env", async () => {
    const dir = tempDir()
    const adminKey = `brk_${"k".repeat(43)}`
    const tg = fake.addBot()
    const server = await startBin({
      BOTRELAY_DATABASE: join(dir, "env.db"),
      BOTRELAY_ADMIN_KEY: adminKey,
      BOTRELAY_BOT_TOKEN: "1:from-env",
      BOTRELAY_TELEGRAM_API: fake.apiRoot
    }, ["--database", join(dir, "flag.db"), "--token", tg.token])
    assert.notMatch(server.output(), /Admin API key/)
    assert.isFalse(existsSync(join(dir, "admin.key")))
    assert.isTrue(existsSync(join(dir, "flag.db")))
    assert.isFalse(existsSync(join(dir, "env.db")))
    const bots = await (await fetch(`${server.baseUrl}/api/bots`, { headers: { authorization: `Bearer ${adminKey}` } }))
      .json()
    assert.strictEqual(bots.length, 1)
    assert.strictEqual(bots[0].token, tg.token)
    assert.strictEqual(bots[0].source, "cli")
    assert.notInclude(server.output(), tg.token)
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
  })

  it("refuses bad configuration with a clear message and exit code 2", () => {
    for (const [env, message] of [
      [{ BOTRELAY_PORT: "http" }, "BOTRELAY_PORT"],
      [{ BOTRELAY_ADMIN_KEY: "secret" }, "BOTRELAY_ADMIN_KEY"],
      [{ BOTRELAY_LOG_LEVEL: "loud" }, "BOTRELAY_LOG_LEVEL"],
      [{ BOTRELAY_TELEGRAM_API: "nope" }, "BOTRELAY_TELEGRAM_API"],
      [{ BOTRELAY_BUFFER_MAX_UPDATES: "0" }, "BOTRELAY_BUFFER_MAX_UPDATES"],
      [{ BOTRELAY_BUFFER_MAX_UPDATES: "many" }, "BOTRELAY_BUFFER_MAX_UPDATES"],
      [{ BOTRELAY_BUFFER_MAX_AGE: "0" }, "BOTRELAY_BUFFER_MAX_AGE"],
      [{ BOTRELAY_BUFFER_MAX_AGE: "1 week" }, "BOTRELAY_BUFFER_MAX_AGE"]
    ] as const) {
      const run = spawnSync(process.execPath, [bin], { env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" })
      assert.strictEqual(run.status, 2, run.stderr)
      assert.include(run.stderr, message)
      assert.notInclude(run.stderr, "secret")
    }
    const unknown = spawnSync(process.execPath, [bin, "--bogus"], { encoding: "utf8" })
    assert.strictEqual(unknown.status, 2)
  })

  it("keys create mints a working operator key", async () => {
    const dir = tempDir()
    const database = join(dir, "keys.db")
    const adminKey = `brk_${"a".repeat(43)}`
    const server = await startBin({ BOTRELAY_DATABASE: database, BOTRELAY_ADMIN_KEY: adminKey })
    const bot = await (await fetch(`${server.baseUrl}/api/bots/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ token: "5:keys" })
    })).json()
    const run = spawnSync(process.execPath, [bin, "keys", "create", "--name", "desk", "--role", "operator", "--bots", String(bot.id)], {
      env: { PATH: process.env.PATH ?? "", BOTRELAY_DATABASE: database },
      encoding: "utf8"
    })
    assert.strictEqual(run.status, 0, run.stderr)
    const key = run.stdout.trim()
    assert.match(key, /^brk_[A-Za-z0-9_-]{43}$/)
    const scoped = await (await fetch(`${server.baseUrl}/api/bots`, { headers: { authorization: `Bearer ${key}` } })).json()
    assert.deepStrictEqual(scoped.map((b: any) => b.id), [bot.id])
    const missing = spawnSync(process.execPath, [bin, "keys", "create", "--name", "x", "--bots", "999"], {
      env: { PATH: process.env.PATH ?? "", BOTRELAY_DATABASE: database },
      encoding: "utf8"
    })
    assert.strictEqual(missing.status, 2)
    assert.include(missing.stderr, "bot 999 not found")
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
  })
})
