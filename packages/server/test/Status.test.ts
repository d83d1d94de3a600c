// GET /api/status (DESIGN.md §13): instances, and each bot's mode, lease, ingress, outbox and consumers.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram, PgCluster } from "@botrelay/testing"
import { assertError, eventually, startServer, storages, type TestServer, startTwoInstances } from "./Harness.js"

/** A backend on 127.0.0.1 answering 200 to every POST. */
const backend = async () => {
  const http: Server = createServer((req, res) => {
    req.resume()
    req.on("end", () => res.writeHead(200).end())
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

const botOf = (status: any, id: number) => status.bots.find((b: any) => b.bot_id === id)

describe.each(storages)("GET /api/status (%s)", (storage) => {
  let fake: FakeTelegram.FakeTelegram
  let hook: Awaited<ReturnType<typeof backend>>
  let server: TestServer

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    hook = await backend()
    server = await startServer({
      storage,
      telegramApi: fake.apiRoot,
      allowPrivateBackends: true,
      publicUrl: "http://127.0.0.1:9"
    })
  })
  afterAll(async () => {
    await server?.close()
    await hook?.close()
    await fake?.close()
  })

  const add = async (fields: Record<string, unknown>) => {
    const tg = fake.addBot()
    const reply = await server.call("/api/bots/add", { body: { token: tg.token, ...fields } })
    assert.strictEqual(reply.status, 200, reply.text)
    return { tg, id: reply.json.id as number }
  }

  it("tells each bot's mode, lease, ingress, outbox and consumers", async () => {
    const forwarded = await add({ proxy_enabled: true, backend_url: hook.url })
    const polled = await add({ long_poll_enabled: true })
    const hooked = await add({ manage_enabled: true })
    const switched = await server.call("/api/bots/update", { body: { id: hooked.id, webhook_mode: true } })
    assert.strictEqual(switched.status, 200, switched.text)
    const quiet = await add({})
    const route = await server.call("/api/routes/add", {
      body: { source_bot_id: forwarded.id, target_bot_id: quiet.id, action: "forward", target_chat_id: 777 }
    })
    assert.strictEqual(route.status, 200, route.text)

    const user = fake.addUser({ first_name: "Ann" })
    const first = fake.userSends(forwarded.tg.id, { user, text: "one" })
    fake.userSends(forwarded.tg.id, { user, text: "two" })
    for (const text of ["a", "b"]) fake.userSends(polled.tg.id, { user, text })
    fake.userSends(hooked.tg.id, { user, text: "to a webhook nobody answers" })
    await eventually(async () => {
      const info = await (await fetch(`${fake.apiRoot}/bot${hooked.tg.token}/getWebhookInfo`)).json()
      return info.result.last_error_message !== undefined || undefined
    }, 10_000)

    const status = await eventually(async () => {
      const reply = await server.call("/api/status")
      assert.strictEqual(reply.status, 200, reply.text)
      const f = botOf(reply.json, forwarded.id)
      const p = botOf(reply.json, polled.id)
      return f.consumers[0]?.position > first.message_id && p.consumers[0]?.lag === 2 &&
          f.ingress.lag_s !== null ? reply.json : undefined
    }, 10_000)

    assert.deepStrictEqual(Object.keys(status), ["self", "instances", "bots"])
    const [self] = status.instances
    assert.deepStrictEqual(Object.keys(self), ["id", "version", "started_at", "last_heartbeat_at", "leases"])
    assert.strictEqual(self.id, status.self)
    assert.strictEqual(self.leases, 4)

    const f = botOf(status, forwarded.id)
    assert.deepStrictEqual(Object.keys(f), ["bot_id", "mode", "lease", "ingress", "outbox", "consumers"])
    assert.strictEqual(f.mode, "polling")
    assert.strictEqual(f.lease.instance_id, status.self)
    assert.isAtLeast(f.lease.epoch, 1)
    assert.isAbove(Date.parse(f.lease.expires_at), Date.now())
    assert.deepStrictEqual(Object.keys(f.ingress), ["lag_s", "last_update_at"])
    assert.isAtLeast(f.ingress.lag_s, 0)
    assert.isBelow(f.ingress.lag_s, 10)
    assert.match(f.ingress.last_update_at, /^\d{4}-\d\d-\d\dT/)
    assert.deepStrictEqual(f.outbox, { depth: 0, oldest_pending_age_s: 0, dead: 0 })
    assert.deepStrictEqual(f.consumers[0], { kind: "backend", id: forwarded.id, position: f.consumers[0].position, lag: 0 })
    assert.deepInclude(f.consumers.map((c: any) => ({ kind: c.kind, id: c.id })), { kind: "route", id: route.json.id })

    const p = botOf(status, polled.id)
    assert.strictEqual(p.mode, "polling")
    assert.deepStrictEqual(p.consumers.map((c: any) => c.kind), ["long_poll"])
    assert.strictEqual(p.consumers[0].lag, 2)
    assert.isAtLeast(p.consumers[0].position, 0)

    const h = botOf(status, hooked.id)
    assert.strictEqual(h.mode, "webhook")
    assert.deepStrictEqual(Object.keys(h.ingress), ["pending_update_count", "last_error_message", "last_error_date"])
    assert.strictEqual(h.ingress.pending_update_count, 1)
    assert.isAbove(h.ingress.last_error_message.length, 0)
    assert.isAbove(h.ingress.last_error_date, 0)
    assert.deepStrictEqual(h.consumers, [])

    const q = botOf(status, quiet.id)
    assert.strictEqual(q.mode, "send-only")
    assert.isNull(q.ingress)

    const asked = () => fake.calls.filter((c) => c.method === "getWebhookInfo" && c.botId === hooked.tg.id).length
    const before = asked()
    await server.call("/api/status")
    await server.call("/api/status")
    assert.strictEqual(asked(), before, "getWebhookInfo is cached")
    assert.notInclude(JSON.stringify(status), hooked.tg.token.split(":")[1]!)
  })

  it("is for admins: operators 403, anyone else 401", async () => {
    const operator = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [] } })
    assertError(await server.call("/api/status", { key: operator.json.key }), 403, "forbidden")
    assertError(await server.call("/api/status", { key: null }), 401, "unauthorized")
  })
})

if (PgCluster.available) {
  describe("GET /api/status across two instances on one PostgreSQL database", () => {
    let fake: FakeTelegram.FakeTelegram
    let instances: Awaited<ReturnType<typeof startTwoInstances>>
    let a: TestServer
    let b: TestServer

    beforeAll(async () => {
      fake = await FakeTelegram.start()
      instances = await startTwoInstances({ telegramApi: fake.apiRoot })
      ;({ a, b } = instances)
    }, 60_000)
    afterAll(async () => {
      await instances?.close()
      await fake?.close()
    })

    it("both instances show both instances, every bot leased by one of them, the same on either", async () => {
      const ids: Array<number> = []
      for (let i = 0; i < 4; i++) {
        const tg = fake.addBot()
        const reply = await (i % 2 === 0 ? a : b).call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })
        ids.push(reply.json.id)
      }
      const seen = await eventually(async () => {
        const status = (await b.call("/api/status")).json
        const leased = ids.every((id) => botOf(status, id)?.lease !== null)
        return status.instances.length === 2 && leased ? status : undefined
      }, 20_000)
      assert.strictEqual(seen.self, "b")
      assert.sameMembers(seen.instances.map((i: any) => i.id), ["a", "b"])
      for (const instance of seen.instances) assert.strictEqual(instance.version, "0.0.0")
      assert.strictEqual(seen.instances.reduce((n: number, i: any) => n + i.leases, 0), 4)
      const fromA = (await a.call("/api/status")).json
      assert.strictEqual(fromA.self, "a")
      assert.deepStrictEqual(
        fromA.bots.map((bot: any) => [bot.bot_id, bot.lease?.instance_id]),
        seen.bots.map((bot: any) => [bot.bot_id, bot.lease?.instance_id])
      )
      const servers: Record<string, TestServer> = { a, b }
      for (const bot of seen.bots) {
        assert.strictEqual(bot.mode, "polling")
        const owner = bot.lease.instance_id as string
        const other = owner === "a" ? "b" : "a"
        await eventually(async () => botOf((await servers[owner]!.call("/api/status")).json, bot.bot_id).ingress.lag_s !== null || undefined, 10_000)
        const elsewhere = botOf((await servers[other]!.call("/api/status")).json, bot.bot_id)
        assert.isNull(elsewhere.ingress.lag_s, "only the owner knows its poller's lag")
      }
    })
  })
}
