import { createServer, request as httpRequest, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram, PgCluster } from "@botrelay/testing"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

// Two real servers sharing one PostgreSQL database: leases, and what crosses between instances.

/** A backend on 127.0.0.1 that records each update it receives by the bot path it was posted to. */
const backend = async () => {
  const received: Array<{ readonly bot: string; readonly update_id: number; readonly at: number }> = []
  const http: Server = createServer((req, res) => {
    let text = ""
    req.on("data", (chunk) => text += chunk)
    req.on("end", () => {
      received.push({ bot: req.url!.slice(1), update_id: JSON.parse(text).update_id, at: Date.now() })
      res.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const root = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  return { root, received, close: () => new Promise<void>((resolve) => http.close(() => resolve())) }
}

/** The load balancer in front of the instances: forwards every request to `target`. */
const balancer = async () => {
  let target = ""
  const http: Server = createServer((req, res) => {
    const forward = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers)
      answer.pipe(res)
    })
    forward.on("error", () => res.writeHead(502).end())
    req.pipe(forward)
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    to: (url: string) => void (target = url),
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

/** Reads an SSE answer's `event:` names with their data as they arrive. */
const events = (server: TestServer, path: string) => {
  const seen: Array<{ readonly event: string; readonly data: any }> = []
  let buffer = ""
  const req = httpRequest(`${server.baseUrl}${path}`, { agent: false, headers: { authorization: `Bearer ${server.adminKey}` } }, (res) => {
    res.setEncoding("utf8")
    res.on("data", (chunk: string) => {
      buffer += chunk
      let end: number
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = /^event: (.*)$/m.exec(block)?.[1]
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (event !== undefined && data !== undefined) seen.push({ event, data: JSON.parse(data) })
      }
    })
  })
  req.on("error", () => {})
  req.end()
  return { seen, close: () => req.destroy() }
}

interface Status {
  readonly self: string
  readonly instances: ReadonlyArray<{ readonly id: string; readonly leases: number }>
  readonly bots: ReadonlyArray<{ readonly bot_id: number; readonly lease: { readonly instance_id: string; readonly epoch: number } | null }>
}

const status = async (server: TestServer) => (await server.call("/api/status")).json as Status

const running = async (server: TestServer, botId: number) =>
  ((await server.call("/api/bots")).json as Array<{ id: number; running: boolean }>).find((bot) => bot.id === botId)?.running === true ||
  undefined

const ownerOf = async (server: TestServer, botId: number) =>
  (await status(server)).bots.find((b) => b.bot_id === botId)?.lease?.instance_id

if (PgCluster.available) {
  let cluster: PgCluster.Cluster
  let database: string
  let fake: FakeTelegram.FakeTelegram
  let hooks: Awaited<ReturnType<typeof backend>>
  let lb: Awaited<ReturnType<typeof balancer>>
  let a: TestServer
  let b: TestServer
  const servers = (): Record<string, TestServer> => ({ a, b })

  beforeAll(async () => {
    cluster = await PgCluster.start()
    database = await cluster.createDatabase()
    fake = await FakeTelegram.start()
    hooks = await backend()
    lb = await balancer()
    const common = { database, telegramApi: fake.apiRoot, publicUrl: lb.url }
    ;[a, b] = await Promise.all([startServer({ ...common, instanceId: "a" }), startServer({ ...common, instanceId: "b" })])
    lb.to(a.baseUrl)
  }, 60_000)
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()])
    await Promise.all([fake?.close(), hooks?.close(), lb?.close()])
    await cluster?.stop()
  })

  const addBot = async (on: TestServer, fields: Record<string, unknown> = {}) => {
    const tg = fake.addBot()
    const reply = await on.call("/api/bots/add", { body: { token: tg.token, ...fields } })
    assert.strictEqual(reply.status, 200, reply.text)
    return { tg, id: reply.json.id as number }
  }

  const forwarding = (path: string) => ({ proxy_enabled: true, backend_url: `${hooks.root}/${path}` })

  describe("instances sharing a PostgreSQL database", () => {
    it("share the bots out by leases; every update is stored and delivered once", async () => {
      const bots: Array<{ tg: FakeTelegram.FakeBot; id: number }> = []
      for (let i = 0; i < 6; i++) bots.push(await addBot(i % 2 === 0 ? a : b, forwarding(`share-${i}`)))
      const shared = await eventually(async () => {
        const seen = await status(b)
        const leased = seen.bots.filter((bot) => bots.some((x) => x.id === bot.bot_id) && bot.lease !== null)
        const counts = seen.instances.map((instance) => instance.leases)
        return leased.length === 6 && seen.instances.length === 2 && counts.every((n) => n >= 2) ? seen : undefined
      }, 20_000)
      assert.sameMembers(shared.instances.map((instance) => instance.id), ["a", "b"])
      for (const instance of shared.instances) assert.isAtMost(instance.leases, Math.ceil(6 / 2) + 1)
      assert.strictEqual(shared.self, "b")
      const answer = await fetch(`${a.baseUrl}/api/health`)
      assert.strictEqual(answer.headers.get("x-botrelay-instance"), "a")

      for (const bot of bots) {
        for (let n = 0; n < 5; n++) fake.userSends(bot.tg.id, { text: `update ${n}` })
      }
      await eventually(() => hooks.received.filter((r) => r.bot.startsWith("share-")).length >= 30 || undefined, 10_000)
      for (let i = 0; i < 6; i++) {
        const got = hooks.received.filter((r) => r.bot === `share-${i}`).map((r) => r.update_id)
        assert.strictEqual(got.length, 5, `bot ${i}: ${got.join(",")}`)
        assert.deepStrictEqual(got, [...got].sort((x, y) => x - y), "in order")
      }
      const stored = await cluster.query(
        "SELECT bot_id, count(*)::int AS n, count(DISTINCT update_id)::int AS d FROM botrelay_inbox GROUP BY bot_id",
        PgCluster.databaseOf(database)
      )
      for (const row of stored.filter((r) => bots.some((x) => x.id === r["bot_id"]))) {
        assert.strictEqual(row["n"], 5)
        assert.strictEqual(row["d"], 5)
      }
    }, 60_000)

    it("a change made through one instance reaches the bot's owner within 2 s", async () => {
      const bot = await addBot(a, forwarding("before"))
      const owner = await eventually(() => ownerOf(a, bot.id), 10_000)
      const other = owner === "a" ? b : a
      await eventually(() => running(other, bot.id), 10_000)
      const changed = await other.call("/api/bots/update", { body: { id: bot.id, backend_url: `${hooks.root}/after` } })
      assert.strictEqual(changed.status, 200, changed.text)
      const at = Date.now()
      fake.userSends(bot.tg.id, { text: "after the change" })
      const arrived = await eventually(() => hooks.received.find((r) => r.bot === "after"), 5_000)
      assert.isBelow(arrived.at - at, 2_000)
      assert.isUndefined(hooks.received.find((r) => r.bot === "before"))
    }, 30_000)

    it("an API key disabled through one instance is refused by the other at once; LLM settings changed on one are read on the other", async () => {
      const created = await a.call("/api/auth/api-keys", { body: { name: "short-lived", role: "admin" } })
      assert.strictEqual(created.status, 200, created.text)
      const key = created.json.key as string
      assert.strictEqual((await b.call("/api/bots", { key })).status, 200, "b knows the key (and remembers it)")
      const toggled = await a.call(`/api/auth/api-keys/toggle?id=${created.json.id}`, { method: "POST" })
      assert.strictEqual(toggled.status, 200, toggled.text)
      await eventually(async () => (await b.call("/api/bots", { key })).status === 401 || undefined, 2_000)

      assert.strictEqual((await b.call("/api/llm")).json.model, "")
      const set = await a.call("/api/llm", { body: { model: "shared-model" } })
      assert.strictEqual(set.status, 200, set.text)
      await eventually(async () => (await b.call("/api/llm")).json.model === "shared-model" || undefined, 2_000)
    }, 30_000)

    it("a newer long poll on one instance ends the older one on the other with 409 within 1 s", async () => {
      const bot = await addBot(a, { long_poll_enabled: true })
      const older = b.call(`/api/updates/poll?bot_id=${bot.id}&timeout=30`)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const started = Date.now()
      const newer = a.call(`/api/updates/poll?bot_id=${bot.id}&timeout=5`)
      const conflict = await older
      assertError(conflict, 409, "poll_conflict")
      assert.isBelow(Date.now() - started, 1_000)
      fake.userSends(bot.tg.id, { text: "for the newer poll" })
      const answer = await newer
      assert.strictEqual(answer.status, 200, answer.text)
      assert.strictEqual(answer.json.length, 1)
    }, 30_000)

    it("live events on one instance show what another instance stored, within 1 s", async () => {
      const bot = await addBot(b, { manage_enabled: true })
      const owner = await eventually(() => ownerOf(a, bot.id), 10_000)
      const watcher = servers()[owner === "a" ? "b" : "a"]!
      await eventually(() => running(watcher, bot.id), 10_000)
      const stream = events(watcher, `/api/events?bot_id=${bot.id}`)
      try {
        await new Promise((resolve) => setTimeout(resolve, 300))
        const at = Date.now()
        const sent = fake.userSends(bot.tg.id, { text: "seen everywhere" })
        const seen = await eventually(
          () => stream.seen.find((e) => e.event === "message" && e.data.message.id === sent.message_id),
          5_000
        )
        assert.strictEqual(seen.data.message.text, "seen everywhere")
        assert.isBelow(Date.now() - at, 1_000 + 500)
        const renamed = await watcher.call("/api/bots/update", { body: { id: bot.id, description: "renamed" } })
        assert.strictEqual(renamed.status, 200, renamed.text)
        await eventually(() => stream.seen.find((e) => e.event === "bot" && e.data.bot?.description === "renamed"), 5_000)
        await new Promise((resolve) => setTimeout(resolve, 500))
        const once = (pick: (e: { event: string; data: any }) => boolean) => stream.seen.filter(pick).length
        assert.strictEqual(once((e) => e.event === "message" && e.data.message.id === sent.message_id), 1, "each entry once")
        assert.strictEqual(once((e) => e.event === "bot" && e.data.bot?.description === "renamed"), 1, "each entry once")
      } finally {
        stream.close()
      }
    }, 30_000)

    it("a webhook update the load balancer hands to a non-owner is processed by the owner within 1 s", async () => {
      const bot = await addBot(a, forwarding("webhook"))
      const switched = await b.call("/api/bots/update", { body: { id: bot.id, webhook_mode: true } })
      assert.strictEqual(switched.status, 200, switched.text)
      const owner = await eventually(() => ownerOf(a, bot.id), 10_000)
      const registered = await eventually(() => fake.calls.find((c) => c.method === "setWebhook" && c.botId === bot.tg.id), 10_000)
      assert.include(String((registered.params as any).url), `${lb.url}/telegram/webhook/${bot.id}`)
      const nonOwner = servers()[owner === "a" ? "b" : "a"]!
      lb.to(nonOwner.baseUrl)
      try {
        const at = Date.now()
        fake.userSends(bot.tg.id, { text: "through the other instance" })
        const arrived = await eventually(() => hooks.received.find((r) => r.bot === "webhook"), 5_000)
        assert.isBelow(arrived.at - at, 1_000)
      } finally {
        lb.to(a.baseUrl)
      }
      assert.strictEqual(fake.calls.filter((c) => c.method === "setWebhook" && c.botId === bot.tg.id).length, 1)
    }, 30_000)

    it("while the database is lost: /api/health answers 503, nothing is confirmed to Telegram; then everything resumes", async () => {
      const bot = await addBot(a, forwarding("outage"))
      await eventually(() => running(a, bot.id), 10_000)
      await cluster.halt()
      try {
        const health = await eventually(async () => {
          const reply = await a.call("/api/health", { key: null })
          return reply.status === 503 ? reply : undefined
        }, 10_000)
        assert.deepInclude(health.json, { status: "unavailable", storage: "unavailable", code: "storage_unavailable" })
        fake.userSends(bot.tg.id, { text: "while the database is away" })
        await new Promise((resolve) => setTimeout(resolve, 2_000))
        assert.strictEqual(fake.pendingUpdates(bot.tg.id).length, 1, "Telegram still holds the update")
        assert.isUndefined(hooks.received.find((r) => r.bot === "outage"))
      } finally {
        await cluster.resume()
      }
      await eventually(async () => (await a.call("/api/health", { key: null })).status === 200 || undefined, 20_000)
      await eventually(() => hooks.received.find((r) => r.bot === "outage"), 30_000)
    }, 90_000)

    it("an instance that stops hands its bots to the others at once", async () => {
      const bots: Array<{ tg: FakeTelegram.FakeBot; id: number }> = []
      for (let i = 0; i < 4; i++) bots.push(await addBot(a, forwarding(`handover-${i}`)))
      await eventually(async () => {
        const seen = await status(a)
        return bots.every((bot) => seen.bots.find((x) => x.bot_id === bot.id)?.lease) && seen.instances.every((i) => i.leases > 0) || undefined
      }, 20_000)
      const stopped = Date.now()
      await b.close()
      const after = await eventually(async () => {
        const seen = await status(a)
        return seen.instances.length === 1 && seen.bots.every((bot) => bot.lease?.instance_id === "a") ? seen : undefined
      }, 10_000)
      assert.isBelow(Date.now() - stopped, 2_000, "the others took the leases as it gave them up")
      assert.strictEqual(after.instances[0]!.leases, after.bots.length)
      for (const bot of bots) fake.userSends(bot.tg.id, { text: "after the handover" })
      await eventually(() => bots.every((_, i) => hooks.received.some((r) => r.bot === `handover-${i}`)) || undefined, 10_000)
    }, 60_000)
  })
} else {
  describe("instances sharing a PostgreSQL database", () => {
    it.skip(PgCluster.unavailableReason, () => {})
  })
}
