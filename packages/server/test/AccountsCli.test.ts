import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Accounts, AuditLog } from "@botrelay/core"
import { Botrelay, NodePasswordHasher } from "@botrelay/node"
import { Duration, Effect, Layer, Redacted } from "effect"
import { afterAll, assert, describe, it } from "vitest"
import * as Config from "../src/Config.js"
import * as Main from "../src/Main.js"
import { unreachableTelegram } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")
const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const database = () => {
  const dir = mkdtempSync(join(tmpdir(), "botrelay-accounts-"))
  dirs.push(dir)
  return join(dir, "botrelay.db")
}

const cli = (file: string, args: Array<string>, input?: string) =>
  spawnSync(process.execPath, [bin, "accounts", "create", ...args], {
    env: { PATH: process.env.PATH ?? "", BOTRELAY_DATABASE: file },
    encoding: "utf8",
    ...(input === undefined ? { stdio: ["ignore", "pipe", "pipe"] } : { input })
  })

/** What the server prints until it listens; then it is stopped. */
const startupOutput = async (file: string): Promise<string> => {
  const child = spawn(process.execPath, [bin], {
    env: {
      PATH: process.env.PATH ?? "",
      BOTRELAY_PORT: "0",
      BOTRELAY_HOST: "127.0.0.1",
      BOTRELAY_DATABASE: file,
      BOTRELAY_TELEGRAM_API: unreachableTelegram
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk) => output += chunk)
  child.stderr.on("data", (chunk) => output += chunk)
  const exited = new Promise((resolve) => child.on("exit", resolve))
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline && !output.includes("Listening on") && child.exitCode === null) {
    await new Promise((r) => setTimeout(r, 50))
  }
  child.kill("SIGTERM")
  await exited
  return output
}

/** Logs in with the library, on the database the CLI wrote. */
const login = (file: string, username: string, password: string) =>
  Effect.runPromise(
    Effect.flatMap(Accounts.Accounts, (accounts) => accounts.login(username, Redacted.make(password))).pipe(
      Effect.map((session) => session.account),
      Effect.provide(
        Accounts.layer().pipe(Layer.provide(Layer.merge(Botrelay.storageLayer(file), NodePasswordHasher.layer)))
      )
    )
  )

/** The audit log of the database, newest first. */
const auditOf = (file: string) =>
  Effect.runPromise(
    Effect.flatMap(AuditLog.AuditLog, (log) => log.list({ limit: 100 })).pipe(
      Effect.map((page) => page.items),
      Effect.provide(AuditLog.layer.pipe(Layer.provide(Botrelay.storageLayer(file))))
    )
  )

describe("botrelay accounts create", () => {
  it("creates the first admin from stdin; startup says how until one exists", { timeout: 60_000 }, async () => {
    const file = database()
    const before = await startupOutput(file)
    assert.include(before, `botrelay accounts create --database ${file} --username NAME --role admin`)
    const password = "correct horse battery"
    const run = cli(file, ["--username", "Root", "--role", "admin", "--display-name", "The Root", "--password-stdin"], `${password}\nignored\n`)
    assert.strictEqual(run.status, 0, run.stderr)
    const account = JSON.parse(run.stdout)
    assert.deepInclude(account, { id: 1, username: "Root", display_name: "The Root", role: "admin", bot_ids: [], enabled: true })
    assert.include(run.stderr, `created admin account 1 "Root"`)
    assert.notInclude(run.stdout + run.stderr, password)
    assert.notInclude(run.stdout + run.stderr, "argon2")
    const after = await startupOutput(file)
    assert.include(after, "Listening on")
    assert.notInclude(after, "accounts create")
    assert.deepInclude(await login(file, "root", password), { id: 1, username: "Root" })
    const entries = await auditOf(file)
    assert.deepStrictEqual(
      entries.map((e) => [e.action, e.actor_type, e.actor_name, e.target_type, e.target_id, e.outcome]).reverse(),
      [
        ["keys.create", "system", "system", "key", "1", "ok"],
        ["accounts.create", "cli", "cli", "account", "1", "ok"]
      ]
    )
    assert.notInclude(JSON.stringify(entries), password)
  })

  it("refuses a short password, a taken username, unknown bots, and a prompt without a terminal", { timeout: 60_000 }, async () => {
    const file = database()
    const short = cli(file, ["--username", "desk", "--password-stdin"], "too short\n")
    assert.strictEqual(short.status, 1)
    assert.include(short.stderr, "password must be at least 10 characters; nothing was created")
    assert.notInclude(short.stderr, "too short")
    const empty = cli(file, ["--username", "desk", "--password-stdin"], "")
    assert.strictEqual(empty.status, 1)
    assert.include(empty.stderr, "password must be at least 10 characters")
    const noTerminal = cli(file, ["--username", "desk"])
    assert.strictEqual(noTerminal.status, 1)
    assert.include(noTerminal.stderr, "use --password-stdin")

    const created = cli(file, ["--username", "desk", "--password-stdin"], "a fine password\n")
    assert.strictEqual(created.status, 0, created.stderr)
    assert.strictEqual(JSON.parse(created.stdout).role, "operator")
    const taken = cli(file, ["--username", "DESK", "--password-stdin"], "another fine password\n")
    assert.strictEqual(taken.status, 1)
    assert.include(taken.stderr, "username DESK is taken")
    const bots = cli(file, ["--username", "scoped", "--bots", "999", "--password-stdin"], "a fine password\n")
    assert.strictEqual(bots.status, 1)
    assert.include(bots.stderr, "bot 999 not found")
    const adminBots = cli(file, ["--username", "boss", "--role", "admin", "--bots", "1", "--password-stdin"], "a fine password\n")
    assert.strictEqual(adminBots.status, 1)
    assert.include(adminBots.stderr, "bot_ids apply to operator accounts only")

    const badName = cli(file, ["--username", "no spaces", "--password-stdin"], "a fine password\n")
    assert.strictEqual(badName.status, 2)
    assert.include(badName.stderr, "username must be 1 to 64 letters, digits, _ . or -")
    const noName = cli(file, ["--password-stdin"], "a fine password\n")
    assert.strictEqual(noName.status, 2)
    assert.include(noName.stderr, "accounts create needs --username")
    const badRole = cli(file, ["--username", "x", "--role", "root", "--password-stdin"], "a fine password\n")
    assert.strictEqual(badRole.status, 2)
    assert.deepInclude(await login(file, "desk", "a fine password"), { id: 1, username: "desk" })
  })
})

describe("session settings", () => {
  it("default to 7 days idle and 30 in all, and reach the accounts' options", () => {
    const defaults = Config.fromValues({}, {})
    assert.deepInclude(defaults, { sessionIdleTimeout: 7 * 86400, sessionMaxAge: 30 * 86400 })
    const config = Config.fromValues({ "session-max-age": "12h" }, { BOTRELAY_SESSION_IDLE_TIMEOUT: "90m" })
    assert.deepInclude(config, { sessionIdleTimeout: 5400, sessionMaxAge: 43200 })
    const accounts = Main.botrelayOptions(config).accounts
    assert.isTrue(Duration.equals(Duration.decode(accounts!.idleTimeout!), Duration.minutes(90)))
    assert.isTrue(Duration.equals(Duration.decode(accounts!.maxAge!), Duration.hours(12)))
    assert.throws(() => Config.fromValues({ "session-idle-timeout": "0" }, {}), /BOTRELAY_SESSION_IDLE_TIMEOUT/)
    assert.throws(() => Config.fromValues({}, { BOTRELAY_SESSION_MAX_AGE: "1 week" }), /BOTRELAY_SESSION_MAX_AGE/)
  })
})
