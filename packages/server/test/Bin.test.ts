import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { eventually, unreachableTelegram } from "./Harness.js"

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
  child.stdout.on("data", (chunk) => output += chunk)
  child.stderr.on("data", (chunk) => output += chunk)
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
    const consoleUrl = await eventually(async () => /^Console: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(server.output())?.[1])
    assert.strictEqual(consoleUrl, `${server.baseUrl}/`, server.output())
    const page = await fetch(consoleUrl)
    assert.strictEqual(page.status, 200)
    assert.include(await page.text(), `<div id="root">`)
    const bots = await fetch(`${server.baseUrl}/api/bots`, { headers: { authorization: `Bearer ${key}` } })
    assert.strictEqual(bots.status, 200)
    assert.deepStrictEqual(await bots.json(), [])
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
    const logs = server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    assert.isTrue(logs.some((entry) => String(entry.msg).includes("Listening on")), server.output())
    for (const entry of logs) assert.includeMembers(Object.keys(entry), ["time", "level", "msg"])
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
    assert.deepStrictEqual(bots.map((b: any) => b.token), ["77:…"])
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
    assert.strictEqual(bots[0].token, `${tg.id}:…${tg.token.slice(-4)}`)
    assert.strictEqual(bots[0].source, "cli")
    assert.notInclude(server.output(), tg.token)
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
  })

  it("refuses bad configuration with a clear message and exit code 2", { timeout: 120_000 }, () => {
    for (const [env, message] of [
      [{ BOTRELAY_PORT: "http" }, "BOTRELAY_PORT"],
      [{ BOTRELAY_ADMIN_KEY: "secret" }, "BOTRELAY_ADMIN_KEY"],
      [{ BOTRELAY_LOG_LEVEL: "loud" }, "BOTRELAY_LOG_LEVEL"],
      [{ BOTRELAY_TELEGRAM_API: "nope" }, "BOTRELAY_TELEGRAM_API"],
      [{ BOTRELAY_BUFFER_MAX_UPDATES: "0" }, "BOTRELAY_BUFFER_MAX_UPDATES"],
      [{ BOTRELAY_BUFFER_MAX_UPDATES: "many" }, "BOTRELAY_BUFFER_MAX_UPDATES"],
      [{ BOTRELAY_BUFFER_MAX_AGE: "0" }, "BOTRELAY_BUFFER_MAX_AGE"],
      [{ BOTRELAY_BUFFER_MAX_AGE: "1 week" }, "BOTRELAY_BUFFER_MAX_AGE"],
      [{ BOTRELAY_SECRET_KEY: "secret" }, "BOTRELAY_SECRET_KEY must be 64 hexadecimal characters"],
      [{ BOTRELAY_SECRET_KEY: "ab".repeat(31) + "secret" }, "BOTRELAY_SECRET_KEY"],
      ...["\u0007", "\u0085", "\u2028"].map((c) =>
        [{ BOTRELAY_BOT_TOKEN: `1:ab${c}cd` }, "BOTRELAY_BOT_TOKEN / --token must not contain control characters"] as const
      ),
      [{ BOTRELAY_BOT_TOKEN: "1:secret/../x" }, "BOTRELAY_BOT_TOKEN / --token must look like 123456:ABC-def"]
    ] as const) {
      const run = spawnSync(process.execPath, [bin], { env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" })
      assert.strictEqual(run.status, 2, run.stderr)
      assert.include(run.stderr, message)
      assert.notInclude(run.stderr, "secret")
    }
    const unknown = spawnSync(process.execPath, [bin, "--bogus"], { encoding: "utf8" })
    assert.strictEqual(unknown.status, 2)
    for (const c of ["\u001f", "\u007f"]) {
      const flag = spawnSync(process.execPath, [bin, "--token", `1:ab${c}cd`], {
        env: { PATH: process.env.PATH ?? "" },
        encoding: "utf8"
      })
      assert.strictEqual(flag.status, 2, flag.stderr)
      assert.include(flag.stderr, "BOTRELAY_BOT_TOKEN / --token must not contain control characters")
    }
  })

  it("creates the data dir 0700, the database, its companions and secret.key 0600, and stores no token in plaintext", async () => {
    const dir = tempDir()
    const data = join(dir, "data")
    const database = join(data, "botrelay.db")
    const adminKey = `brk_${"m".repeat(43)}`
    const token = "8:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
    const server = await startBin({ BOTRELAY_DATABASE: database, BOTRELAY_ADMIN_KEY: adminKey })
    const added = await fetch(`${server.baseUrl}/api/bots/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ token, secret_token: "backend_secret_Q7w9e2" })
    })
    assert.strictEqual(added.status, 200)
    assert.strictEqual(statSync(data).mode & 0o777, 0o700)
    for (const file of [database, `${database}-wal`, `${database}-shm`, join(data, "secret.key")]) {
      assert.strictEqual((statSync(file).mode & 0o777).toString(8), "600", file)
    }
    server.child.kill("SIGTERM")
    assert.strictEqual(await server.exited, 0)
    const bytes = readFileSync(database).toString("latin1")
    assert.notInclude(bytes, token.split(":")[1]!)
    assert.notInclude(bytes, "backend_secret_Q7w9e2")
  })

  it("refuses to start with a key that does not fit the database: exit 1, naming the key's source, never its value", async () => {
    const dir = tempDir()
    const database = join(dir, "botrelay.db")
    const first = await startBin({ BOTRELAY_DATABASE: database, BOTRELAY_SECRET_KEY: "1".repeat(64) })
    first.child.kill("SIGTERM")
    assert.strictEqual(await first.exited, 0)
    const wrong = spawnSync(process.execPath, [bin], {
      env: {
        PATH: process.env.PATH ?? "",
        BOTRELAY_PORT: "0",
        BOTRELAY_HOST: "127.0.0.1",
        BOTRELAY_DATABASE: database,
        BOTRELAY_SECRET_KEY: "2".repeat(64)
      },
      encoding: "utf8",
      timeout: 20_000
    })
    assert.strictEqual(wrong.status, 1, wrong.stdout + wrong.stderr)
    const output = wrong.stdout + wrong.stderr
    assert.include(output, "the secret key from BOTRELAY_SECRET_KEY does not decrypt this database's secrets")
    assert.notInclude(output, "2".repeat(64))
    assert.notInclude(output, "1".repeat(64))
  })

  it("secret-key rotate re-encrypts with a new key file, refuses a key that does not fit, and the server starts on it", async () => {
    const dir = tempDir()
    const database = join(dir, "botrelay.db")
    const adminKey = `brk_${"r".repeat(43)}`
    const first = await startBin({ BOTRELAY_DATABASE: database, BOTRELAY_ADMIN_KEY: adminKey })
    await fetch(`${first.baseUrl}/api/bots/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ token: "9:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDrot" })
    })
    first.child.kill("SIGTERM")
    assert.strictEqual(await first.exited, 0)
    const keyFile = join(dir, "secret.key")
    const before = readFileSync(keyFile, "utf8")
    const env = { PATH: process.env.PATH ?? "" }

    const refused = spawnSync(process.execPath, [bin, "secret-key", "rotate", "--database", database], {
      env: { ...env, BOTRELAY_SECRET_KEY: "3".repeat(64) },
      encoding: "utf8"
    })
    assert.strictEqual(refused.status, 1, refused.stderr)
    assert.include(refused.stderr, "the secret key from BOTRELAY_SECRET_KEY does not decrypt this database's secrets")
    assert.include(refused.stderr, "nothing was changed")
    assert.strictEqual(readFileSync(keyFile, "utf8"), before)

    const rotated = spawnSync(process.execPath, [bin, "secret-key", "rotate", "--database", database], {
      env,
      encoding: "utf8"
    })
    assert.strictEqual(rotated.status, 0, rotated.stderr)
    assert.include(rotated.stderr, `re-encrypted 1 bots, 0 webhook secrets, 0 settings, 0 bridges with a new key, saved to ${keyFile}`)
    const after = readFileSync(keyFile, "utf8")
    assert.match(after, /^[0-9a-f]{64}\n$/)
    assert.notStrictEqual(after, before)
    assert.strictEqual((statSync(keyFile).mode & 0o777).toString(8), "600")
    assert.isFalse(existsSync(`${keyFile}.new`))
    assert.strictEqual(rotated.stdout, "")

    const toEnv = spawnSync(process.execPath, [bin, "secret-key", "rotate", "--database", database], {
      env: { ...env, BOTRELAY_SECRET_KEY: after.trim(), BOTRELAY_NEW_SECRET_KEY: "4".repeat(64) },
      encoding: "utf8"
    })
    assert.strictEqual(toEnv.status, 0, toEnv.stderr)
    assert.include(toEnv.stderr, "set BOTRELAY_SECRET_KEY to the value of BOTRELAY_NEW_SECRET_KEY")
    assert.notInclude(toEnv.stdout + toEnv.stderr, "4".repeat(64))

    const second = await startBin({ BOTRELAY_DATABASE: database, BOTRELAY_SECRET_KEY: "4".repeat(64) })
    const bots = await (await fetch(`${second.baseUrl}/api/bots`, { headers: { authorization: `Bearer ${adminKey}` } }))
      .json()
    assert.deepStrictEqual(bots.map((b: any) => b.token), ["9:…Drot"])
    second.child.kill("SIGTERM")
    assert.strictEqual(await second.exited, 0)
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
