import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { BridgeStore, Supervisor } from "@botrelay/core"
import { FakeTelegram, PgCluster } from "@botrelay/testing"
import { Effect } from "effect"
import { assertError, eventually, fastRuntime, startServer, storages, type TestServer, startTwoInstances } from "./Harness.js"

interface Received {
  readonly body: string
  readonly json: any
  readonly headers: IncomingHttpHeaders
}

/** A receiver on 127.0.0.1 that records each POST and answers with `status()` (200 by default). */
const receiver = async (status: () => number = () => 200) => {
  const received: Array<Received> = []
  let answered = 0
  const http: Server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => body += chunk)
    req.on("end", () => {
      const code = status()
      answered++
      if (code >= 200 && code < 300) received.push({ body, json: JSON.parse(body), headers: req.headers })
      res.writeHead(code, { "content-type": "text/plain" })
      res.end("")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/bridge`,
    received,
    answered: () => answered,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString("base64")}`

const bridgeFields = [
  "id",
  "name",
  "url",
  "format",
  "events",
  "bot_ids",
  "enabled",
  "signing_secret_set",
  "last_error",
  "created_at",
  "updated_at"
]

const bridgeDeliveries = (server: TestServer, bridgeId: number) =>
  server.run(Effect.flatMap(BridgeStore.BridgeStore, (store) => store.listBridgeDeliveries({ bridge_id: bridgeId, limit: 100 })))

describe.each(storages)("bridges (%s)", (storage) => {
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer
  let operatorKey: string

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    server = await startServer({ telegramApi: fake.apiRoot, storage })
    const created = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [] } })
    assert.strictEqual(created.status, 200, created.text)
    operatorKey = created.json.key
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  const addBot = async (body: Record<string, unknown> = {}) => {
    const tg = fake.addBot({ username: `bridged${randomBytes(3).toString("hex")}_bot` })
    const reply = await server.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true, ...body } })
    assert.strictEqual(reply.status, 200, reply.text)
    await fake.waitForPoll(tg.id)
    return { tg, bot: reply.json as { id: number; name: string } }
  }

  it("adds, lists, updates partially and deletes bridges; refuses bad input with 400 changing nothing; operators 403", async () => {
    const { bot } = await addBot()
    const secret = secretOf(32)
    const bad: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ url: "ftp://example.com/x", events: ["message"] }, "url"],
      [{ url: "not a url", events: ["message"] }, "url"],
      [{ url: "https://example.com/x", events: ["messages"] }, "messages"],
      [{ url: "https://example.com/x", events: [] }, "events"],
      [{ url: "https://example.com/x", events: ["message"], bot_ids: [999999] }, "999999"],
      [{ url: "https://example.com/x", events: ["message"], signing_secret: "whsec_short" }, "signing_secret"],
      [{ url: "https://example.com/x", events: ["message"], format: "xml" }, "format"]
    ]
    for (const [body, mention] of bad) {
      const reply = await server.call("/api/bridges/add", { body })
      assertError(reply, 400, "invalid_request")
      assert.include(reply.json.error, mention)
    }
    assert.deepStrictEqual((await server.call("/api/bridges")).json, [])

    const added = await server.call("/api/bridges/add", {
      body: { name: "ops", url: "https://example.com/hook", events: ["message", "chat"], bot_ids: [bot.id], signing_secret: secret }
    })
    assert.strictEqual(added.status, 200, added.text)
    assert.sameMembers(Object.keys(added.json), bridgeFields)
    assert.deepInclude(added.json, {
      name: "ops",
      url: "https://example.com/hook",
      format: "json",
      events: ["message", "chat"],
      bot_ids: [bot.id],
      enabled: true,
      signing_secret_set: true,
      last_error: ""
    })
    assert.notInclude(added.text, secret)
    const id = added.json.id

    const renamed = await server.call("/api/bridges/update", { body: { id, name: "renamed", format: "slack" } })
    assert.strictEqual(renamed.status, 200, renamed.text)
    assert.deepInclude(renamed.json, { name: "renamed", format: "slack", events: ["message", "chat"], bot_ids: [bot.id] })
    const cleared = await server.call("/api/bridges/update", { body: { id, signing_secret: "", bot_ids: [] } })
    assert.deepInclude(cleared.json, { signing_secret_set: false, bot_ids: [], name: "renamed" })
    for (const [body] of bad) {
      const reply = await server.call("/api/bridges/update", { body: { id, ...body } })
      assertError(reply, 400, "invalid_request")
    }
    assertError(await server.call("/api/bridges/update", { body: { id: 999999, name: "x" } }), 404, "bridge_not_found")
    const listed = await server.call("/api/bridges")
    assert.deepStrictEqual(listed.json, [{ ...cleared.json }])

    for (const [path, body] of [["/api/bridges", undefined], ["/api/bridges/add", { url: "https://example.com/x", events: ["message"] }], ["/api/bridges/update", { id, name: "mine" }]] as const) {
      assertError(await server.call(path, { body, key: operatorKey }), 403, "forbidden")
    }
    assertError(await server.call(`/api/bridges/delete?id=${id}`, { method: "POST", key: operatorKey }), 403, "forbidden")

    const deleted = await server.call(`/api/bridges/delete?id=${id}`, { method: "POST" })
    assert.strictEqual(deleted.status, 200, deleted.text)
    assert.strictEqual(deleted.json.id, id)
    assert.deepStrictEqual((await server.call("/api/bridges")).json, [])
    assertError(await server.call(`/api/bridges/delete?id=${id}`, { method: "POST" }), 404, "bridge_not_found")

    const actions = (await server.call("/api/audit?limit=200")).json.items
      .filter((e: any) => e.target_type === "bridge" && e.outcome === "ok")
      .map((e: any) => e.action)
    assert.includeMembers(actions, ["bridges.add", "bridges.update", "bridges.delete"])
    assert.notInclude(JSON.stringify((await server.call("/api/audit?limit=200")).json), secret)
  })

  it("posts a message event to a JSON bridge, signed: standardwebhooks verifies it, webhook-id evt_<event id>", async () => {
    const hook = await receiver()
    try {
      const { bot, tg } = await addBot({ name: "Support" })
      const { tg: other } = await addBot()
      const secret = secretOf(32)
      const added = await server.call("/api/bridges/add", {
        body: { url: hook.url, events: ["message"], bot_ids: [bot.id], signing_secret: secret }
      })
      assert.strictEqual(added.status, 200, added.text)
      fake.userSends(other.id, { text: "not bridged: another bot" })
      fake.userSends(tg.id, { text: "hello bridge" })
      const [received] = await eventually(() => hook.received.length >= 1 ? hook.received : undefined)
      assert.strictEqual(received!.json.type, "message")
      assert.strictEqual(received!.json.bot_id, bot.id)
      assert.strictEqual(received!.json.message.text, "hello bridge")
      assert.isNumber(received!.json.id)
      assert.strictEqual(received!.headers["webhook-id"], `evt_${received!.json.id}`)
      const verified = new Webhook(secret).verify(received!.body, {
        "webhook-id": String(received!.headers["webhook-id"]),
        "webhook-timestamp": String(received!.headers["webhook-timestamp"]),
        "webhook-signature": String(received!.headers["webhook-signature"])
      }) as any
      assert.strictEqual(verified.message.text, "hello bridge")
      await new Promise((resolve) => setTimeout(resolve, 200))
      assert.strictEqual(hook.received.length, 1)
      assert.notInclude(server.logs.join("\n"), secret.slice(6))
      await server.call(`/api/bridges/delete?id=${added.json.id}`, { method: "POST" })
    } finally {
      await hook.close()
    }
  })

  it("posts Slack messages: <bot name> · <chat title or person>: <text>, unsigned", async () => {
    const hook = await receiver()
    try {
      const { bot, tg } = await addBot({ name: "Helpdesk" })
      const added = await server.call("/api/bridges/add", {
        body: { url: hook.url, format: "slack", events: ["message"], bot_ids: [bot.id], signing_secret: secretOf(24) }
      })
      assert.strictEqual(added.status, 200, added.text)
      const group = fake.addGroup({ title: "Night shift" })
      const user = fake.addUser({ first_name: "Ada", last_name: "Lovelace" })
      fake.userSends(tg.id, { user, text: "in private" })
      await eventually(() => hook.received.length >= 1 || undefined)
      fake.userSends(tg.id, { user, chat: group, text: "in the group" })
      await eventually(() => hook.received.length >= 2 || undefined)
      assert.deepStrictEqual(hook.received.map((r) => r.json), [
        { text: "Helpdesk · Ada Lovelace: in private" },
        { text: "Helpdesk · Night shift: in the group" }
      ])
      assert.notProperty(hook.received[0]!.headers, "webhook-signature")
      await server.call(`/api/bridges/delete?id=${added.json.id}`, { method: "POST" })
    } finally {
      await hook.close()
    }
  })

  it("retries a failing bridge, then dead-letters it with last_error", async () => {
    const hook = await receiver(() => 500)
    try {
      const { bot, tg } = await addBot()
      const added = await server.call("/api/bridges/add", { body: { url: hook.url, events: ["message"], bot_ids: [bot.id] } })
      fake.userSends(tg.id, { text: "never arrives" })
      const [dead] = await eventually(async () => {
        const rows = await bridgeDeliveries(server, added.json.id)
        return rows.length === 1 && rows[0]!.status === "dead" ? rows : undefined
      }, 10_000)
      assert.isAbove(dead!.attempts, 1)
      assert.isAbove(hook.answered(), 1)
      assert.strictEqual(dead!.last_error, "HTTP 500")
      const [bridge] = (await server.call("/api/bridges")).json.filter((b: any) => b.id === added.json.id)
      assert.strictEqual(bridge.last_error, "HTTP 500")
      await server.call(`/api/bridges/delete?id=${added.json.id}`, { method: "POST" })
    } finally {
      await hook.close()
    }
  })
})

describe.each(storages)("bridges under the strict backend policy (%s)", (storage) => {
  it("refuses a literal private or loopback address with 400 on url, changing nothing", async () => {
    const server = await startServer({ storage, flags: { "backend-policy": "strict" } })
    try {
      for (const url of ["http://127.0.0.1:8080/hook", "http://10.1.2.3/hook", "http://[::1]/hook", "http://localhost/hook"]) {
        const reply = await server.call("/api/bridges/add", { body: { url, events: ["message"] } })
        assertError(reply, 400, "invalid_request")
        assert.strictEqual(reply.json.details?.[0]?.path, "url")
      }
      assert.deepStrictEqual((await server.call("/api/bridges")).json, [])
      const added = await server.call("/api/bridges/add", { body: { url: "https://hooks.example.com/x", events: ["message"] } })
      assert.strictEqual(added.status, 200, added.text)
      const moved = await server.call("/api/bridges/update", { body: { id: added.json.id, url: "http://192.168.1.1/x" } })
      assertError(moved, 400, "invalid_request")
      assert.strictEqual((await server.call("/api/bridges")).json[0].url, "https://hooks.example.com/x")
    } finally {
      await server.close()
    }
  })
})

describe.each(storages)("bridges across a restart (%s)", (storage) => {
  it("keeps queued bridge deliveries through a restart and delivers them after", async () => {
    const fake = await FakeTelegram.start()
    const dir = mkdtempSync(join(tmpdir(), "botrelay-bridges-"))
    let up = false
    const hook = await receiver(() => up ? 200 : 503)
    const runtime: Supervisor.Options = { ...fastRuntime, outbox: { ...fastRuntime.outbox, maxAge: "60 seconds" } }
    let server = await startServer({ telegramApi: fake.apiRoot, storage, dir, runtime })
    try {
      const tg = fake.addBot()
      const bot = (await server.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })).json
      await fake.waitForPoll(tg.id)
      const added = await server.call("/api/bridges/add", { body: { url: hook.url, events: ["message"], bot_ids: [bot.id] } })
      fake.userSends(tg.id, { text: "survives" })
      await eventually(async () => {
        const rows = await bridgeDeliveries(server, added.json.id)
        return rows.length === 1 && rows[0]!.attempts > 0 ? rows : undefined
      })
      await server.close()
      up = true
      server = await startServer({ telegramApi: fake.apiRoot, storage, dir, runtime, adminKey: server.adminKey })
      await eventually(() => hook.received.length === 1 || undefined, 10_000)
      assert.strictEqual(hook.received[0]!.json.message.text, "survives")
      const rows = await eventually(async () => {
        const found = await bridgeDeliveries(server, added.json.id)
        return found[0]?.status === "delivered" ? found : undefined
      })
      assert.strictEqual(rows.length, 1)
    } finally {
      await server.close()
      await hook.close()
      await fake.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe.skipIf(!PgCluster.available)("bridges on instances sharing PostgreSQL", () => {
  it("posts each event to each bridge exactly once, whichever instance runs the bot", async () => {
    const fake = await FakeTelegram.start()
    const hook = await receiver()
    const instances = await startTwoInstances({ telegramApi: fake.apiRoot })
    const { a, b } = instances
    try {
      const added = await a.call("/api/bridges/add", { body: { url: hook.url, events: ["message"] } })
      assert.strictEqual(added.status, 200, added.text)
      const bots: Array<{ tg: FakeTelegram.FakeBot; id: number }> = []
      for (let i = 0; i < 4; i++) {
        const tg = fake.addBot()
        const reply = await (i % 2 === 0 ? a : b).call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })
        assert.strictEqual(reply.status, 200, reply.text)
        bots.push({ tg, id: reply.json.id })
      }
      for (const { tg } of bots) await fake.waitForPoll(tg.id, "20 seconds")
      for (const { tg } of bots) for (let n = 0; n < 3; n++) fake.userSends(tg.id, { text: `event ${n}` })
      await eventually(() => hook.received.length >= 12 || undefined, 15_000)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const ids = hook.received.map((r) => r.json.id)
      assert.strictEqual(ids.length, 12)
      assert.strictEqual(new Set(ids).size, 12, "no event twice")
      for (const bot of bots) {
        const texts = hook.received.filter((r) => r.json.bot_id === bot.id).map((r) => r.json.message.text)
        assert.deepStrictEqual(texts, ["event 0", "event 1", "event 2"], `bot ${bot.id}`)
      }
    } finally {
      await instances.close()
      await hook.close()
      await fake.close()
    }
  }, 60_000)
})
