import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, assert, describe, it } from "vitest"
import * as DatabaseLock from "../src/DatabaseLock.js"
import { unreachableTelegram } from "./Harness.js"

// SQLite is single-instance (DESIGN.md section 12): the server holds an OS lock on <database>.lock.

const bin = resolve(import.meta.dirname, "../dist/bin.js")
const adminKey = `brk_${"L".repeat(43)}`

const dirs: Array<string> = []
const children = new Set<ChildProcess>()

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "botrelay-lock-"))
  dirs.push(dir)
  return dir
}

interface Run {
  readonly child: ChildProcess
  readonly output: () => string
  readonly stderr: () => string
  readonly exited: Promise<number | null>
}

/** Runs the built bin with the given environment (on port 0, unreachable Telegram, a known admin key). */
const run = (args: Array<string>, env: Record<string, string>, options: { readonly cwd?: string } = {}): Run => {
  const child = spawn(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH ?? "",
      BOTRELAY_PORT: "0",
      BOTRELAY_HOST: "127.0.0.1",
      BOTRELAY_TELEGRAM_API: unreachableTelegram,
      BOTRELAY_ADMIN_KEY: adminKey,
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"],
    ...options
  })
  children.add(child)
  let output = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => output += chunk)
  child.stderr.on("data", (chunk) => {
    output += chunk
    stderr += chunk
  })
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      children.delete(child)
      resolve(code)
    })
  )
  return { child, output: () => output, stderr: () => stderr, exited }
}

/** Starts a server and waits until it listens; its base URL. */
const serve = async (env: Record<string, string>, options: { readonly cwd?: string } = {}) => {
  const server = run([], env, options)
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const port = /Listening on http:\/\/[^:]+:(\d+)/.exec(server.output())?.[1]
    if (port !== undefined) return { ...server, baseUrl: `http://127.0.0.1:${port}` }
    if (server.child.exitCode !== null) break
    await new Promise((r) => setTimeout(r, 25))
  }
  server.child.kill("SIGKILL")
  throw new Error(`server did not start:\n${server.output()}`)
}

const stop = async (server: Run) => {
  server.child.kill("SIGTERM")
  assert.strictEqual(await server.exited, 0, server.output())
}

const bots = async (baseUrl: string, key = adminKey) =>
  fetch(`${baseUrl}/api/bots`, { headers: { authorization: `Bearer ${key}` } })

const inUse = (pid: number | undefined) =>
  `botrelay: this SQLite file is in use by another Botrelay server (pid ${pid}); several instances need PostgreSQL\n`

describe("one server per SQLite file", () => {
  it("a second server on the same file exits 1 naming the first one's pid; the first keeps serving", async () => {
    const database = join(tempDir(), "data", "botrelay.db")
    const first = await serve({ BOTRELAY_DATABASE: database })
    const second = run([], { BOTRELAY_DATABASE: database })
    assert.strictEqual(await second.exited, 1, second.output())
    assert.strictEqual(second.stderr(), inUse(first.child.pid))
    const viaFlag = run(["--database", database], {})
    assert.strictEqual(await viaFlag.exited, 1, viaFlag.output())
    assert.strictEqual(viaFlag.stderr(), inUse(first.child.pid))
    assert.strictEqual((await bots(first.baseUrl)).status, 200)
    await stop(first)
  })

  it("the lock is <database>.lock, a file of its own (0600), never the database", async () => {
    const dir = tempDir()
    const database = join(dir, "botrelay.db")
    const server = await serve({ BOTRELAY_DATABASE: database })
    const lock = `${database}.lock`
    assert.isTrue(existsSync(lock))
    assert.notStrictEqual(statSync(lock).ino, statSync(database).ino)
    assert.strictEqual((statSync(lock).mode & 0o777).toString(8), "600")
    await stop(server)
    const again = await serve({ BOTRELAY_DATABASE: database })
    assert.strictEqual((await bots(again.baseUrl)).status, 200)
    await stop(again)
  })

  it("command-line commands work beside a running server: keys create mints a key the server accepts", async () => {
    const database = join(tempDir(), "botrelay.db")
    const server = await serve({ BOTRELAY_DATABASE: database })
    const keys = run(["keys", "create", "--name", "beside", "--role", "admin", "--database", database], {})
    assert.strictEqual(await keys.exited, 0, keys.output())
    const key = /^(brk_[A-Za-z0-9_-]{43})$/m.exec(keys.output())?.[1]
    assert.isDefined(key, keys.output())
    assert.strictEqual((await bots(server.baseUrl, key)).status, 200)
    await stop(server)
  })

  it("starts again at once after the holder was killed with SIGKILL", async () => {
    const database = join(tempDir(), "botrelay.db")
    const first = await serve({ BOTRELAY_DATABASE: database })
    const added = await fetch(`${first.baseUrl}/api/bots/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ token: "42:kept-across-a-kill" })
    })
    assert.strictEqual(added.status, 200)
    first.child.kill("SIGKILL")
    assert.isNull(await first.exited)
    const second = await serve({ BOTRELAY_DATABASE: database })
    const listed = await (await bots(second.baseUrl)).json()
    assert.deepStrictEqual(listed.map((b: any) => b.token), ["42:…kill"])
    const third = run([], { BOTRELAY_DATABASE: database })
    assert.strictEqual(await third.exited, 1)
    assert.strictEqual(third.stderr(), inUse(second.child.pid))
    await stop(second)
  })

  it(":memory: takes no lock: two in-memory servers run side by side and leave no file", async () => {
    const cwd = tempDir()
    const one = await serve({ BOTRELAY_DATABASE: ":memory:" }, { cwd })
    const two = await serve({ BOTRELAY_DATABASE: ":memory:" }, { cwd })
    assert.strictEqual((await bots(one.baseUrl)).status, 200)
    assert.strictEqual((await bots(two.baseUrl)).status, 200)
    assert.deepStrictEqual(readdirSync(cwd), [])
    await stop(one)
    await stop(two)
  })
})

describe("DatabaseLock in one process", () => {
  const hold = (database: string) =>
    Effect.runPromise(Effect.gen(function*() {
      const scope = yield* Scope.make()
      const exit = yield* Effect.exit(Scope.extend(DatabaseLock.acquire(database), scope))
      return { exit, release: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
    }))

  it("a second hold on the same file fails with this process's pid until the first is released", async () => {
    const dir = tempDir()
    const database = join(dir, "botrelay.db")
    const first = await hold(database)
    assert.isTrue(Exit.isSuccess(first.exit))
    const second = await hold(join(dir, ".", "botrelay.db"))
    assert.deepStrictEqual(
      Exit.isFailure(second.exit) && second.exit.cause._tag === "Fail" ? second.exit.cause.error : undefined,
      new DatabaseLock.DatabaseInUse({ file: `${database}.lock`, pid: process.pid })
    )
    await second.release()
    await first.release()
    const third = await hold(database)
    assert.isTrue(Exit.isSuccess(third.exit))
    await third.release()
  })

  it("takes none for :memory:", async () => {
    const held = await hold(":memory:")
    assert.isTrue(Exit.isSuccess(held.exit))
    assert.isFalse(existsSync(":memory:.lock"))
    await held.release()
  })
})
