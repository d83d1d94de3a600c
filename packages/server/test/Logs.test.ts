// Request logs: BOTRELAY_LOG_FORMAT on the built bin (JSON, readable lines), and the request line's fields on both drivers.
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { LogLevel } from "effect"
import { eventually, startServer, storages, type TestServer } from "./Harness.js"

const bin = resolve(import.meta.dirname, "../dist/bin.js")
const adminKey = `brk_${"q".repeat(43)}`

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

/** The built server on port 0 with a fresh database, its output, and how to stop it. */
const startBin = async (env: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "botrelay-logs-"))
  dirs.push(dir)
  const child = spawn(process.execPath, [bin], {
    env: {
      PATH: process.env.PATH ?? "",
      BOTRELAY_PORT: "0",
      BOTRELAY_HOST: "127.0.0.1",
      BOTRELAY_DATABASE: join(dir, "botrelay.db"),
      BOTRELAY_ADMIN_KEY: adminKey,
      BOTRELAY_TELEGRAM_API: fake.apiRoot,
      ...env
    },
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
  const port = await eventually(() => /Listening on http:\/\/[^:]+:(\d+)/.exec(output)?.[1], 20_000)
  const stop = async () => {
    child.kill("SIGTERM")
    assert.strictEqual(await exited, 0)
  }
  return { baseUrl: `http://127.0.0.1:${port}`, output: () => output, stop }
}

const get = (baseUrl: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${baseUrl}${path}`, { headers })

describe("BOTRELAY_LOG_FORMAT", () => {
  it("json (and auto off a terminal): one JSON line per request with exact fields; health at debug; no token", async () => {
    for (const format of ["json", "auto"]) {
      const tg = fake.addBot()
      const server = await startBin({ BOTRELAY_LOG_FORMAT: format, BOTRELAY_LOG_LEVEL: "debug" })
      const auth = { authorization: `Bearer ${adminKey}` }
      const added = await fetch(`${server.baseUrl}/api/bots/add`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ token: tg.token, proxy_enabled: true, backend_url: "https://backend.example/hook" })
      })
      assert.strictEqual(added.status, 200, await added.text())
      const bots = await get(server.baseUrl, "/api/bots", { ...auth, "x-request-id": "req-42" })
      assert.strictEqual(bots.headers.get("x-request-id"), "req-42")
      const odd = await get(server.baseUrl, "/api/health", { "x-request-id": "no spaces allowed" })
      assert.match(odd.headers.get("x-request-id")!, /^[0-9a-f-]{36}$/)
      assert.strictEqual((await get(server.baseUrl, `/tgapi/bot${tg.token}/getMe`)).status, 200)
      await get(server.baseUrl, `/api/bots/validate?token=${encodeURIComponent(tg.token)}`, auth)
      await get(server.baseUrl, "/api/bots")
      const lines = () =>
        server.output().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
          .filter((l) => l.msg === "request")
      await eventually(() => lines().length >= 6 || undefined)
      await server.stop()
      const requests = lines()
      for (const line of requests) {
        assert.deepStrictEqual(Object.keys(line).sort(), [
          "actor", "duration_ms", "level", "method", "msg", "request_id", "route", "status", "time"
        ])
        assert.isNumber(line.duration_ms)
        assert.isNumber(line.status)
        assert.match(line.time, /^\d{4}-\d\d-\d\dT/)
      }
      assert.deepInclude(requests, {
        ...requests.find((l) => l.request_id === "req-42"),
        level: "info",
        method: "GET",
        route: "/api/bots",
        status: 200,
        actor: "key:1"
      })
      const health = requests.find((l) => l.route === "/api/health")
      assert.strictEqual(health.level, "debug")
      assert.strictEqual(health.actor, "anonymous")
      assert.isTrue(requests.some((l) => l.route === "/tgapi/bot{token}/{method}" && l.status === 200))
      assert.isTrue(requests.some((l) => l.route === "/api/bots/validate" && l.actor === "key:1"))
      assert.isTrue(requests.some((l) => l.route === "/api/bots" && l.status === 401 && l.actor === "anonymous"))
      assert.notInclude(server.output(), tg.token.split(":")[1]!)
      assert.notInclude(server.output(), "token=")
    }
  })

  it("info hides /api/health; pretty writes readable lines", async () => {
    const server = await startBin({ BOTRELAY_LOG_FORMAT: "pretty" })
    await get(server.baseUrl, "/api/health")
    await get(server.baseUrl, "/api/bots", { authorization: `Bearer ${adminKey}` })
    const line = await eventually(() => /^\d\d:\d\d:\d\d\.\d{3} INFO GET \/api\/bots 200 \d+(\.\d)?ms key:1$/m.exec(server.output()))
    assert.isDefined(line)
    await server.stop()
    assert.notMatch(server.output(), /\/api\/health/)
    assert.notMatch(server.output(), /^\{/m)
  })

  it("refuses an unknown format and a short metrics token with exit code 2", () => {
    for (const [env, message] of [
      [{ BOTRELAY_LOG_FORMAT: "xml" }, "BOTRELAY_LOG_FORMAT"],
      [{ BOTRELAY_METRICS_TOKEN: "short" }, "BOTRELAY_METRICS_TOKEN"]
    ] as const) {
      const run = spawnSync(process.execPath, [bin], { env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8" })
      assert.strictEqual(run.status, 2, run.stderr)
      assert.include(run.stderr, message)
      assert.notInclude(run.stderr, "short")
    }
  })
})

describe.each(storages)("request log lines (%s)", (storage) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ storage })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("name the route template, status, actor and request id", async () => {
    await server.call("/api/bots")
    await server.call("/api/bots", { key: null })
    const requests = await eventually(() => {
      const found = server.logs.map((l) => JSON.parse(l)).filter((l) => l.message === "request")
      return found.length >= 2 ? found : undefined
    })
    const fields = requests.map((l) => l.annotations)
    assert.deepInclude(fields.map(({ duration_ms: _, request_id: __, ...rest }) => rest), {
      method: "GET",
      route: "/api/bots",
      status: 200,
      actor: "key:1"
    })
    assert.deepInclude(fields.map(({ duration_ms: _, request_id: __, ...rest }) => rest), {
      method: "GET",
      route: "/api/bots",
      status: 401,
      actor: "anonymous"
    })
  })
})

describe.each(storages)("request lines below the log level (%s)", (storage) => {
  it("are not written, and the requests are still counted", async () => {
    const server = await startServer({ storage, logLevel: LogLevel.Warning })
    try {
      // metrics are the process's: count what these three calls add
      const counted = async () =>
        Number(/^botrelay_http_requests_total\{method="GET",route="\/api\/bots",status="200"\} (\d+)$/m
          .exec((await server.call("/metrics")).text)?.[1] ?? 0)
      const before = await counted()
      for (let i = 0; i < 3; i++) assert.strictEqual((await server.call("/api/bots")).status, 200)
      assert.strictEqual(await counted(), before + 3)
      assert.isFalse(server.logs.some((l) => JSON.parse(l).message === "request"))
    } finally {
      await server.close()
    }
  })
})
