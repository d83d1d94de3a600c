import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { Supervisor } from "@botrelay/core"
import { FakeTelegram } from "@botrelay/testing"
import * as Config from "../src/Config.js"
import { assertError, eventually, fastRuntime, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

const policyError = "the backend address is not allowed by the backend URL policy"

/** A backend on 127.0.0.1 that records the texts it receives and answers with `answer` (200 by default). */
const backend = async (answer: () => { status: number; body?: string } = () => ({ status: 200 })) => {
  const received: Array<string> = []
  const http: Server = createServer((req, res) => {
    let text = ""
    req.on("data", (chunk) => text += chunk)
    req.on("end", () => {
      const reply = answer()
      if (reply.status >= 200 && reply.status < 300) received.push(JSON.parse(text).message?.text)
      res.writeHead(reply.status, { "content-type": "text/plain" })
      res.end(reply.body ?? "")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const port = (http.address() as AddressInfo).port
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

const tgapi = async (on: TestServer, path: string, init: RequestInit = {}) => {
  const response = await fetch(`${on.baseUrl}/tgapi${path}`, init)
  const text = await response.text()
  return { status: response.status, text, json: JSON.parse(text) }
}

const setWebhook = (on: TestServer, tg: FakeTelegram.FakeBot, url: string) =>
  tgapi(on, `/bot${tg.token}/setWebhook`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url })
  })

const addBot = async (on: TestServer, tg: FakeTelegram.FakeBot, body: Record<string, unknown> = {}) => {
  const reply = await on.call("/api/bots/add", { body: { token: tg.token, ...body } })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { id: number; backend_url_origin: string }
}

const botOf = async (on: TestServer, id: number) => (await on.call("/api/bots")).json.find((b: any) => b.id === id)

const deliveriesOf = async (on: TestServer, botId: number) =>
  (await on.call(`/api/bots/deliveries?bot_id=${botId}`)).json as Array<any>

describe("backend URL policy", () => {
  it("setWebhook through /tgapi refuses loopback, private, link-local addresses and localhost, changing nothing", async () => {
    const tg = fake.addBot()
    const bot = await addBot(server, tg)
    const refused: ReadonlyArray<readonly [string, string]> = [
      ["http://127.0.0.1:8080/hook", "IP address 127.0.0.1 is reserved (loopback)"],
      ["http://[::1]/hook", "IP address ::1 is reserved (loopback)"],
      ["http://0x7f000001/hook", "IP address 127.0.0.1 is reserved (loopback)"],
      ["http://2130706433/hook", "IP address 127.0.0.1 is reserved (loopback)"],
      ["http://[::ffff:127.0.0.1]/hook", "IP address ::ffff:7f00:1 is reserved (loopback)"],
      ["http://169.254.169.254/latest/meta-data/", "IP address 169.254.169.254 is reserved (link-local)"],
      ["http://10.1.2.3/hook", "IP address 10.1.2.3 is reserved (private)"],
      ["http://100.64.0.1/hook", "IP address 100.64.0.1 is reserved (shared)"],
      ["http://[fd00::1]/hook", "IP address fd00::1 is reserved (private)"],
      ["http://0.0.0.0/hook", "IP address 0.0.0.0 is reserved (unspecified)"],
      ["http://user:pass@127.0.0.1/hook", "IP address 127.0.0.1 is reserved (loopback)"],
      ["http://localhost:8080/hook", "localhost is reserved (loopback)"],
      [`${server.baseUrl}/api/auth/api-keys`, "IP address 127.0.0.1 is reserved (loopback)"]
    ]
    for (const [url, reason] of refused) {
      const answer = await setWebhook(server, tg, url)
      assert.strictEqual(answer.status, 400, url)
      assert.deepStrictEqual(answer.json, { ok: false, error_code: 400, description: `Bad Request: bad webhook: ${reason}` })
    }
    const query = await tgapi(server, `/bot${tg.token}/setWebhook?url=${encodeURIComponent("http://[::1]:9/x")}`)
    assert.strictEqual(query.status, 400)
    assert.deepInclude(await botOf(server, bot.id), { backend_url: "", proxy_enabled: false, backend_url_origin: "api" })
    const info = await tgapi(server, `/bot${tg.token}/getWebhookInfo`)
    assert.strictEqual(info.json.result.url, "")

    const accepted = await setWebhook(server, tg, "https://backend.example/hook")
    assert.strictEqual(accepted.status, 200, accepted.text)
    assert.deepInclude(await botOf(server, bot.id), {
      backend_url: "https://backend.example/hook",
      proxy_enabled: true,
      backend_url_origin: "tgapi"
    })
  })

  it("with BOTRELAY_BACKEND_ALLOW_PRIVATE, setWebhook to 127.0.0.1 is accepted and updates reach it", async () => {
    const open = await startServer({ telegramApi: fake.apiRoot, allowPrivateBackends: true })
    const hook = await backend()
    try {
      const tg = fake.addBot()
      const bot = await addBot(open, tg)
      const set = await setWebhook(open, tg, hook.url)
      assert.strictEqual(set.status, 200, set.text)
      assert.strictEqual((await botOf(open, bot.id)).backend_url_origin, "tgapi")
      fake.userSends(tg.id, { text: "to loopback, allowed" })
      await eventually(() => hook.received.length === 1 || undefined)
      assert.deepStrictEqual(hook.received, ["to loopback, allowed"])
    } finally {
      await hook.close()
      await open.close()
    }
  })

  it("an admin's backend_url may be private by default; strict refuses it at once or when connecting", async () => {
    const hook = await backend()
    const dir = mkdtempSync(join(tmpdir(), "botrelay-policy-"))
    let running: TestServer | undefined
    try {
      running = await startServer({ telegramApi: fake.apiRoot, dir, allowPrivateBackends: true })
      const adminTg = fake.addBot()
      const tokenTg = fake.addBot()
      const admin = await addBot(running, adminTg, { proxy_enabled: true, backend_url: hook.url })
      assert.strictEqual(admin.backend_url_origin, "api")
      const byName = `http://localhost:${hook.port}/hook`
      const token = await addBot(running, tokenTg)
      assert.strictEqual((await setWebhook(running, tokenTg, byName)).status, 200)
      await running.close()
      running = undefined

      running = await startServer({ telegramApi: fake.apiRoot, dir })
      fake.userSends(adminTg.id, { text: "admin bot, default policy" })
      fake.userSends(tokenTg.id, { text: "token bot, name resolving to loopback" })
      await eventually(() => hook.received.length === 1 || undefined)
      const refused = await eventually(async () => {
        const [delivery] = await deliveriesOf(running!, token.id)
        return delivery?.last_error === policyError ? delivery : undefined
      })
      assert.strictEqual(refused.url, byName)
      const info = await tgapi(running, `/bot${tokenTg.token}/getWebhookInfo`)
      assert.strictEqual(info.json.result.last_error_message, policyError)
      assert.deepStrictEqual(hook.received, ["admin bot, default policy"])
      await running.close()
      running = undefined

      running = await startServer({ telegramApi: fake.apiRoot, dir, flags: { "backend-policy": "strict" } })
      fake.userSends(adminTg.id, { text: "admin bot, strict policy" })
      const dead = await eventually(async () => {
        const [latest] = await deliveriesOf(running!, admin.id)
        return latest?.status === "dead" ? latest : undefined
      })
      assert.strictEqual(dead.last_error, policyError)
      assert.strictEqual(JSON.parse(dead.payload).message.text, "admin bot, strict policy")
      assert.deepStrictEqual(hook.received, ["admin bot, default policy"])

      const literal = await running.call("/api/bots/update", { body: { id: admin.id, backend_url: hook.url.replace("/hook", "/x") } })
      assertError(literal, 400, "invalid_request")
      assert.include(literal.json.error, "IP address 127.0.0.1 is reserved (loopback)")
      assertError(
        await running.call("/api/bots/add", { body: { token: fake.addBot().token, backend_url: "http://169.254.169.254/" } }),
        400,
        "invalid_request"
      )
      const publicUrl = await running.call("/api/bots/update", { body: { id: admin.id, backend_url: "https://backend.example/x" } })
      assert.strictEqual(publicUrl.status, 200, publicUrl.text)
    } finally {
      await running?.close()
      await hook.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 20_000)

  it("getWebhookInfo reports a refusing backend's status in Telegram's words, never its answer", async () => {
    const open = await startServer({ telegramApi: fake.apiRoot, allowPrivateBackends: true })
    const hook = await backend(() => ({ status: 401, body: "secret-body-of-the-target" }))
    try {
      const tg = fake.addBot()
      await addBot(open, tg)
      assert.strictEqual((await setWebhook(open, tg, hook.url)).status, 200)
      fake.userSends(tg.id, { text: "probe" })
      const info = await eventually(async () => {
        const answer = await tgapi(open, `/bot${tg.token}/getWebhookInfo`)
        return answer.json.result.last_error_message === undefined ? undefined : answer
      })
      assert.strictEqual(info.json.result.last_error_message, "Wrong response from the webhook: 401 Unauthorized")
      assert.notInclude(info.text, "secret-body")
    } finally {
      await hook.close()
      await open.close()
    }
  })
})

describe("deliveries follow the bot's backend URL", () => {
  it("a head-of-line delivery moves to the new URL at once and the queue behind it follows, in order", async () => {
    const patient: Supervisor.Options = {
      ...fastRuntime,
      outbox: { ...fastRuntime.outbox, retryBase: "1 hour", retryCap: "1 hour", maxAge: "1 day" }
    }
    const open = await startServer({ telegramApi: fake.apiRoot, allowPrivateBackends: true, runtime: patient })
    const broken = await backend(() => ({ status: 401 }))
    const fixed = await backend()
    try {
      const tg = fake.addBot()
      const bot = await addBot(open, tg, { proxy_enabled: true, backend_url: broken.url })
      fake.userSends(tg.id, { text: "one" })
      await eventually(async () => (await deliveriesOf(open, bot.id))[0]?.last_error === "HTTP 401" || undefined)
      fake.userSends(tg.id, { text: "two" })
      fake.userSends(tg.id, { text: "three" })
      await eventually(async () => (await deliveriesOf(open, bot.id)).length === 3 || undefined)

      const set = await setWebhook(open, tg, fixed.url)
      assert.strictEqual(set.status, 200, set.text)
      await eventually(() => fixed.received.length === 3 || undefined)
      assert.deepStrictEqual(fixed.received, ["one", "two", "three"])
      const deliveries = await eventually(async () => {
        const all = await deliveriesOf(open, bot.id)
        return all.every((d) => d.status === "delivered") ? all : undefined
      })
      assert.deepStrictEqual(deliveries.map((d) => d.url), [fixed.url, fixed.url, fixed.url])
      const moved = open.logs.map((line) => JSON.parse(line)).find((line) =>
        line.message === "pending deliveries follow the new backend URL"
      )
      assert.deepInclude(moved, { logLevel: "INFO" })
      assert.deepInclude(moved.annotations, { bot_id: bot.id, deliveries: 3 })
      assert.notInclude(JSON.stringify(moved), fixed.url)
    } finally {
      await broken.close()
      await fixed.close()
      await open.close()
    }
  }, 20_000)
})

describe("backend policy settings", () => {
  it("reads BOTRELAY_BACKEND_POLICY and BOTRELAY_BACKEND_ALLOW_PRIVATE, flags first, and refuses other values", () => {
    const defaults = Config.fromValues({}, {})
    assert.strictEqual(defaults.backendPolicy, "default")
    assert.isFalse(defaults.backendAllowPrivate)
    const env = { BOTRELAY_BACKEND_POLICY: "strict", BOTRELAY_BACKEND_ALLOW_PRIVATE: "true" }
    assert.deepInclude(Config.fromValues({}, env), { backendPolicy: "strict", backendAllowPrivate: true })
    assert.deepInclude(
      Config.fromValues({ "backend-policy": "default", "backend-allow-private": "no" }, env),
      { backendPolicy: "default", backendAllowPrivate: false }
    )
    assert.throws(() => Config.fromValues({ "backend-policy": "lax" }, {}), /BOTRELAY_BACKEND_POLICY/)
    assert.throws(() => Config.fromValues({ "backend-allow-private": "maybe" }, {}), /BOTRELAY_BACKEND_ALLOW_PRIVATE/)
  })
})
