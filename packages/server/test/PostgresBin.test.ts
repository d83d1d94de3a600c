import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join, resolve } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { PgCluster } from "@botrelay/testing"
import { unreachableTelegram } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")
const key = "3".repeat(64)
const password = "hunter2-s3cret"

let cluster: PgCluster.Cluster | undefined
const children = new Set<ChildProcess>()

/** The cluster's URL of a database, with a password (the cluster trusts any): it must never be printed. */
const urlOf = (database: string) => `postgresql://postgres:${password}@127.0.0.1:${cluster!.port}/${database}`

interface Run {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

const runBin = (env: Record<string, string>, args: ReadonlyArray<string> = []): Run => {
  const child = spawn(process.execPath, [bin, ...args], {
    env: {
      PATH: process.env.PATH ?? "",
      BOTRELAY_PORT: "0",
      BOTRELAY_HOST: "127.0.0.1",
      BOTRELAY_TELEGRAM_API: unreachableTelegram,
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.add(child)
  let output = ""
  child.stdout.on("data", (chunk) => output += chunk)
  child.stderr.on("data", (chunk) => output += chunk)
  const exited = new Promise<number | null>((done) =>
    child.on("exit", (code) => {
      children.delete(child)
      done(code)
    })
  )
  return { child, output: () => output, exited }
}

const listening = async (run: Run): Promise<string> => {
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const match = /Listening on http:\/\/[^:]+:(\d+)/.exec(run.output())
    if (match) return `http://127.0.0.1:${match[1]}`
    if (run.child.exitCode !== null) break
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`server did not start:\n${run.output()}`)
}

const closedPort = () =>
  new Promise<number>((done) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => done(typeof address === "object" && address !== null ? address.port : 1))
    })
  })

if (PgCluster.available) {
  beforeAll(async () => {
    cluster = await PgCluster.start({ listen: "tcp" })
  })
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL")
    await cluster?.stop()
  })

  describe("the botrelay bin on PostgreSQL", () => {
    it("BOTRELAY_DATABASE=postgresql://… serves from PostgreSQL, keeps its data across restarts, never prints the password", async () => {
      const database = PgCluster.databaseOf(await cluster!.createDatabase())
      const env = { BOTRELAY_DATABASE: urlOf(database), BOTRELAY_SECRET_KEY: key, BOTRELAY_DATABASE_POOL: "3" }
      const first = runBin(env)
      const baseUrl = await listening(first)
      const admin = /(brk_[A-Za-z0-9_-]{43})/.exec(first.output())?.[1]
      assert.isDefined(admin, first.output())
      assert.notInclude(first.output(), "also saved to")
      const added = await fetch(`${baseUrl}/api/bots/add`, {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ token: "8:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", name: "on postgres" })
      })
      assert.strictEqual(added.status, 200, await added.clone().text())
      const tables = await cluster!.query("SELECT name FROM botrelay_bots", database)
      assert.deepStrictEqual(tables, [{ name: "on postgres" }])
      first.child.kill("SIGTERM")
      assert.strictEqual(await first.exited, 0)

      const second = runBin({ ...env, BOTRELAY_DATABASE: urlOf(database).replace("postgresql://", "postgres://") })
      const again = await listening(second)
      assert.notMatch(second.output(), /brk_[A-Za-z0-9_-]{43}/)
      const bots = await (await fetch(`${again}/api/bots`, { headers: { authorization: `Bearer ${admin}` } })).json()
      assert.deepStrictEqual(bots.map((b: any) => b.name), ["on postgres"])
      second.child.kill("SIGTERM")
      assert.strictEqual(await second.exited, 0)
      assert.notInclude(first.output() + second.output(), password)
    }, 60_000)

    it("servers starting together on an empty database all serve; the first-start duties happen once", async () => {
      const adminKey = `brk_${"q".repeat(43)}`
      for (const env of [{ BOTRELAY_ADMIN_KEY: adminKey }, {}]) {
        const database = PgCluster.databaseOf(await cluster!.createDatabase())
        const runs = [1, 2, 3].map(() => runBin({ BOTRELAY_DATABASE: urlOf(database), BOTRELAY_SECRET_KEY: key, ...env }))
        const urls = await Promise.all(runs.map(listening))
        for (const url of urls) assert.strictEqual((await fetch(`${url}/api/health`)).status, 200)
        const keys = await cluster!.query("SELECT role FROM botrelay_api_keys", database)
        assert.deepStrictEqual(keys, [{ role: "admin" }])
        const printed = runs.filter((run) => /brk_[A-Za-z0-9_-]{43}/.test(run.output()))
        assert.strictEqual(printed.length, "BOTRELAY_ADMIN_KEY" in env ? 0 : 1)
        for (const run of runs) run.child.kill("SIGTERM")
        assert.deepStrictEqual(await Promise.all(runs.map((run) => run.exited)), [0, 0, 0])
      }
    }, 90_000)

    it("PostgreSQL without BOTRELAY_SECRET_KEY is refused: exit 2", async () => {
      const run = runBin({ BOTRELAY_DATABASE: urlOf("postgres") })
      assert.strictEqual(await run.exited, 2)
      assert.include(run.output(), "BOTRELAY_SECRET_KEY is required with a PostgreSQL database")
      assert.notInclude(run.output(), password)
    })

    it("a database it cannot connect to: exit 1 within 10 s, naming host and port, never the password", async () => {
      const port = await closedPort()
      for (
        const [url, expected] of [
          [`postgres://botrelay:${password}@127.0.0.1:${port}/botrelay`, `cannot connect to PostgreSQL at 127.0.0.1:${port}: `],
          [urlOf("no_such_database"), `cannot connect to PostgreSQL at 127.0.0.1:${cluster!.port}: database "no_such_database" does not exist`],
          [`postgres://botrelay:${password}@[::1/botrelay`, "cannot connect to PostgreSQL at ?:?: the URL is malformed"]
        ] as const
      ) {
        const started = Date.now()
        const run = runBin({ BOTRELAY_DATABASE: url, BOTRELAY_SECRET_KEY: key })
        assert.strictEqual(await run.exited, 1, run.output())
        assert.isBelow(Date.now() - started, 10_000)
        assert.include(run.output(), expected)
        assert.notInclude(run.output(), password)
      }
    }, 60_000)

    it("a wrong password: exit 1 with PostgreSQL's reason, never the password", async () => {
      const hba = join(cluster!.dir, "data", "pg_hba.conf")
      writeFileSync(hba, `host all checked 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, "utf8")}`)
      await cluster!.query("CREATE ROLE checked LOGIN PASSWORD 'the-right-one'; SELECT pg_reload_conf()")
      const wrong = "not-the-right-one"
      const run = runBin({
        BOTRELAY_DATABASE: `postgres://checked:${wrong}@127.0.0.1:${cluster!.port}/postgres`,
        BOTRELAY_SECRET_KEY: key
      })
      assert.strictEqual(await run.exited, 1, run.output())
      assert.include(
        run.output(),
        `cannot connect to PostgreSQL at 127.0.0.1:${cluster!.port}: password authentication failed for user "checked"`
      )
      assert.notInclude(run.output(), wrong)
    }, 30_000)

    it("a command beside the servers on a database it cannot connect to: the same one line, exit 1", async () => {
      const port = await closedPort()
      const run = runBin(
        { BOTRELAY_DATABASE: `postgres://botrelay:${password}@127.0.0.1:${port}/botrelay`, BOTRELAY_SECRET_KEY: key },
        ["keys", "create", "--name", "ops", "--role", "admin"]
      )
      assert.strictEqual(await run.exited, 1, run.output())
      assert.strictEqual(run.output().trim().split("\n").length, 1, run.output())
      assert.include(run.output(), `botrelay: cannot connect to PostgreSQL at 127.0.0.1:${port}: `)
      assert.notInclude(run.output(), password)
    }, 30_000)

    it("a key that does not fit the database: exit 1, naming its source", async () => {
      const database = PgCluster.databaseOf(await cluster!.createDatabase())
      const first = runBin({ BOTRELAY_DATABASE: urlOf(database), BOTRELAY_SECRET_KEY: key })
      await listening(first)
      first.child.kill("SIGTERM")
      assert.strictEqual(await first.exited, 0)
      const wrong = runBin({ BOTRELAY_DATABASE: urlOf(database), BOTRELAY_SECRET_KEY: "4".repeat(64) })
      assert.strictEqual(await wrong.exited, 1, wrong.output())
      assert.include(wrong.output(), "the secret key from BOTRELAY_SECRET_KEY does not decrypt this database's secrets")
      assert.notInclude(wrong.output(), "4".repeat(64))
    }, 60_000)
  })
} else {
  describe("the botrelay bin on PostgreSQL", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}
