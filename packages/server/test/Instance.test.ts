import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, replyOf, startServer, type TestServer } from "./Harness.js"

// Instance identity (DESIGN.md section 12): every answer names the instance; GET /api/status (minimal, SQLite).

const instanceId = "relay-a.1_test"

let fake: FakeTelegram.FakeTelegram
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot, flags: { "instance-id": instanceId } })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

const instanceOf = (headers: Headers) => headers.get("x-botrelay-instance")

describe("X-Botrelay-Instance", () => {
  it("is on every kind of answer: API 200, 401, 404, 405, console files, webhook ingress, /tgapi", async () => {
    const answers = [
      await server.call("/api/health", { key: null }),
      await server.call("/api/bots"),
      await server.call("/api/bots", { key: null }),
      await server.call("/api/no-such-thing"),
      await server.call("/api/bots/add", { method: "GET" }),
      await server.call("/api/bots/add", { raw: "{" }),
      await server.call("/api/openapi.json", { key: null }),
      await replyOf(await fetch(`${server.baseUrl}/`)),
      await replyOf(await fetch(`${server.baseUrl}/chats`)),
      await replyOf(await fetch(`${server.baseUrl}/telegram/webhook/1`, { method: "POST", body: "{}" })),
      await replyOf(await fetch(`${server.baseUrl}/tgapi/bot1:unknown/getMe`))
    ]
    assert.deepStrictEqual(
      answers.map((reply) => [reply.status, instanceOf(reply.headers)]),
      [200, 200, 401, 404, 405, 400, 200, 200, 200, 404, 401].map((status) => [status, instanceId])
    )
  })

  it("is on /tgapi calls of a registered bot, those the fast path serves included", async () => {
    const tg = fake.addBot()
    const added = await server.call("/api/bots/add", { body: { token: tg.token } })
    assert.strictEqual(added.status, 200, added.text)
    const user = fake.addUser()
    // The first call of a bot goes through the app and makes the bot known to the fast path, which serves the next.
    for (const text of ["first", "second", "third"]) {
      const reply = await replyOf(
        await fetch(`${server.baseUrl}/tgapi/bot${tg.token}/sendMessage`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ chat_id: user.id, text })
        })
      )
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual(instanceOf(reply.headers), instanceId)
    }
    const local = await replyOf(await fetch(`${server.baseUrl}/tgapi/bot${tg.token}/getWebhookInfo`))
    assert.strictEqual(local.status, 200)
    assert.strictEqual(instanceOf(local.headers), instanceId)
  })

  it("is a new random id at each start when none is configured", async () => {
    const ids: Array<string | null> = []
    for (let i = 0; i < 2; i++) {
      const plain = await startServer()
      try {
        const reply = await plain.call("/api/health", { key: null })
        ids.push(instanceOf(reply.headers))
        assert.strictEqual((await plain.call("/api/status")).json.self, ids[i])
      } finally {
        await plain.close()
      }
    }
    for (const id of ids) assert.match(id ?? "", /^i-[0-9a-f]{8}$/)
    assert.notStrictEqual(ids[0], ids[1])
  })
})

describe("User-Agent", () => {
  it("names the instance on its own calls: getUpdates and deliveries to the backend", async () => {
    const agents: Array<string | undefined> = []
    const backend = createServer((req, res) => {
      agents.push(req.headers["user-agent"])
      req.resume().on("end", () => res.writeHead(200).end())
    })
    await new Promise<void>((done) => backend.listen(0, "127.0.0.1", done))
    try {
      const tg = fake.addBot()
      const backendUrl = `http://127.0.0.1:${(backend.address() as AddressInfo).port}/hook`
      const added = await server.call("/api/bots/add", {
        body: { token: tg.token, proxy_enabled: true, backend_url: backendUrl }
      })
      assert.strictEqual(added.status, 200, added.text)
      fake.userSends(tg.id, { text: "hello" })
      await eventually(() => agents.length > 0 ? true : undefined)
      assert.deepStrictEqual(agents, [`botrelay (${instanceId})`])
      const polls = fake.calls.filter((call) => call.botId === tg.id && call.method === "getUpdates")
      assert.isNotEmpty(polls)
      for (const call of polls) assert.strictEqual(call.userAgent, `botrelay (${instanceId})`)
    } finally {
      await new Promise((done) => backend.close(done))
    }
  })
})

describe("GET /api/status", () => {
  it("shows this instance, the bots it runs, and each bot's lease (all this instance's on SQLite)", async () => {
    const polled = fake.addBot()
    const running = await server.call("/api/bots/add", { body: { token: polled.token, manage_enabled: true } })
    await eventually(async () => (await server.call("/api/bots")).json.find((b: any) => b.id === running.json.id)?.running)
    const bots = (await server.call("/api/bots")).json as Array<{ id: number; running: boolean }>
    const reply = await server.call("/api/status")
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(instanceOf(reply.headers), instanceId)
    const status = reply.json
    assert.deepStrictEqual(Object.keys(status), ["self", "instances", "bots"])
    assert.strictEqual(status.self, instanceId)
    assert.strictEqual(status.instances.length, 1)
    const [self] = status.instances
    assert.deepStrictEqual(Object.keys(self), ["id", "version", "started_at", "last_heartbeat_at", "leases"])
    assert.strictEqual(self.id, instanceId)
    assert.strictEqual(self.version, "0.0.0")
    assert.strictEqual(self.leases, bots.length, "the only instance holds every lease")
    for (const time of [self.started_at, self.last_heartbeat_at]) {
      assert.match(time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
    assert.isAtMost(Date.parse(self.started_at), Date.parse(self.last_heartbeat_at))
    assert.isAtMost(Math.abs(Date.parse(self.last_heartbeat_at) - Date.now()), 5000)
    assert.deepStrictEqual(status.bots.map((b: any) => [b.bot_id, b.lease.instance_id]), bots.map((b) => [b.id, instanceId]))
    for (const bot of status.bots) {
      assert.isAtLeast(bot.lease.epoch, 1)
      assert.isAbove(Date.parse(bot.lease.expires_at), Date.now())
    }
  })

  it("is for admins: operators get 403, no key 401", async () => {
    const created = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [] } })
    assert.strictEqual(created.status, 200, created.text)
    const forbidden = await server.call("/api/status", { key: created.json.key })
    assertError(forbidden, 403, "forbidden")
    assert.strictEqual(instanceOf(forbidden.headers), instanceId)
    const anonymous = await server.call("/api/status", { key: null })
    assertError(anonymous, 401, "unauthorized")
    assert.strictEqual(instanceOf(anonymous.headers), instanceId)
  })

  it("is in the OpenAPI document", async () => {
    const spec = (await server.call("/api/openapi.json", { key: null })).json
    assert.property(spec.paths, "/api/status")
    assert.property(spec.components.schemas, "Status")
  })
})

describe("BOTRELAY_INSTANCE_ID", () => {
  it("takes 1 to 64 characters of A-Z a-z 0-9 . _ -", async () => {
    const Config = await import("../src/Config.js")
    for (const id of ["a", "A.b_c-9", "x".repeat(64)]) {
      assert.strictEqual(Config.fromValues({}, { BOTRELAY_INSTANCE_ID: id }).instanceId, id)
      assert.strictEqual(Config.fromValues({ "instance-id": id }, { BOTRELAY_INSTANCE_ID: "other" }).instanceId, id)
    }
    assert.isUndefined(Config.fromValues({}, {}).instanceId)
    for (const id of ["x".repeat(65), "a b", "a/b", "é", "a:b"]) {
      assert.throws(
        () => Config.fromValues({}, { BOTRELAY_INSTANCE_ID: id }),
        "BOTRELAY_INSTANCE_ID / --instance-id must be 1 to 64 characters of A-Z a-z 0-9 . _ -"
      )
    }
  })
})
