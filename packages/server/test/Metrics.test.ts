// GET /metrics against the real server: names, labels and exact counts after a known workload.
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, replyOf, startServer, storages, type TestServer } from "./Harness.js"

const metricsToken = "m".repeat(16) + "0123456789abcdef"

/** The samples of a scrape, by series (`name{labels}`), and the text itself. */
const parse = (text: string) => {
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const at = line.lastIndexOf(" ")
    samples.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return samples
}

/** A backend on 127.0.0.1 answering `status(n)` to its n-th POST; it counts the 2xx answers. */
const backend = async (status: (n: number) => number) => {
  let n = 0
  let ok = 0
  const http: Server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const answer = status(n++)
      if (answer < 300) ok++
      res.writeHead(answer, { "content-type": "application/json" })
      res.end("")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`,
    delivered: () => ok,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

describe.each(storages)("GET /metrics (%s)", (storage) => {
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer
  let flaky: Awaited<ReturnType<typeof backend>>
  let broken: Awaited<ReturnType<typeof backend>>

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    flaky = await backend((n) => n === 0 ? 500 : 200)
    broken = await backend(() => 503)
    server = await startServer({
      storage,
      telegramApi: fake.apiRoot,
      allowPrivateBackends: true,
      flags: { "metrics-token": metricsToken }
    })
  })
  afterAll(async () => {
    await server?.close()
    await flaky?.close()
    await broken?.close()
    await fake?.close()
  })

  const scrape = async (key: string | null = metricsToken) => {
    const reply = await server.call("/metrics", { key })
    assert.strictEqual(reply.status, 200, reply.text)
    return reply
  }

  it("is for the metrics token, admin keys and admin sessions; operators 403, anyone else 401", async () => {
    const reply = await scrape()
    assert.strictEqual(reply.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8")
    await scrape(server.adminKey)
    assertError(await server.call("/metrics", { key: null }), 401, "unauthorized")
    assertError(await server.call("/metrics", { key: "x".repeat(40) }), 401, "unauthorized")
    const operator = await server.call("/api/auth/api-keys", { body: { name: "ops", role: "operator", bot_ids: [] } })
    assertError(await server.call("/metrics", { key: operator.json.key }), 403, "forbidden")
    assert.strictEqual((await server.call("/api/bots", { key: metricsToken })).status, 401)
  })

  it("counts updates in and out, retries, API and /tgapi requests and Telegram calls exactly; gauges from storage", async () => {
    const before = parse((await scrape()).text)
    const delta = (series: string) => (parse(lastText).get(series) ?? 0) - (before.get(series) ?? 0)
    let lastText = ""

    const tg = fake.addBot({ username: "metered_bot" })
    const bot = (await server.call("/api/bots/add", {
      body: { token: tg.token, proxy_enabled: true, backend_url: flaky.url }
    })).json
    const user = fake.addUser({ first_name: "Ann" })
    for (const text of ["one", "two", "three"]) fake.userSends(tg.id, { user, text })
    await eventually(async () => flaky.delivered() === 3 || undefined)

    const dead = fake.addBot({ username: "dead_end_bot" })
    const deadBot = (await server.call("/api/bots/add", {
      body: { token: dead.token, proxy_enabled: true, backend_url: broken.url }
    })).json
    fake.userSends(dead.id, { user, text: "nobody home" })

    for (let i = 0; i < 4; i++) assert.strictEqual((await server.call("/api/bots")).status, 200)
    for (let i = 0; i < 2; i++) {
      const call = await replyOf(await fetch(`${server.baseUrl}/tgapi/bot${tg.token}/getMe`))
      assert.strictEqual(call.status, 200, call.text)
    }
    const unknownToken = "123456:AAunknownunknownunknownunknownunknown"
    await server.call(`/api/bots/validate?token=${encodeURIComponent(unknownToken)}`)

    const id = String(bot.id)
    await eventually(async () => {
      lastText = (await scrape()).text
      const samples = parse(lastText)
      return samples.get(`botrelay_outbox_dead{bot_id="${deadBot.id}",kind="backend"}`) === 1 &&
          samples.get(`botrelay_updates_delivered_total{bot_id="${id}"}`) !== undefined || undefined
    }, 10_000)
    const samples = parse(lastText)

    assert.strictEqual(delta(`botrelay_updates_received_total{bot_id="${id}"}`), 3)
    assert.strictEqual(delta(`botrelay_updates_delivered_total{bot_id="${id}"}`), 3)
    assert.strictEqual(delta(`botrelay_outbox_retries_total{bot_id="${id}",kind="backend"}`), 1)
    assert.strictEqual(delta(`botrelay_updates_received_total{bot_id="${deadBot.id}"}`), 1)
    assert.strictEqual(delta(`botrelay_updates_delivered_total{bot_id="${deadBot.id}"}`), 0)
    assert.strictEqual(delta(`botrelay_http_requests_total{method="GET",route="/api/bots",status="200"}`), 4)
    assert.strictEqual(
      delta(`botrelay_http_requests_total{method="GET",route="/tgapi/bot{token}/{method}",status="200"}`),
      2
    )
    assert.strictEqual(
      delta(`botrelay_http_request_duration_seconds_count{method="GET",route="/api/bots",status="200"}`),
      4
    )
    assert.strictEqual(delta(`botrelay_telegram_requests_total{method="getme",status="401"}`), 1)
    assert.isAbove(samples.get(`botrelay_telegram_request_duration_seconds_count{method="getupdates"}`) ?? 0, 0)

    assert.strictEqual(samples.get(`botrelay_outbox_depth{bot_id="${id}",kind="backend"}`), 0)
    assert.strictEqual(samples.get(`botrelay_outbox_dead{bot_id="${id}",kind="backend"}`), 0)
    assert.strictEqual(samples.get(`botrelay_outbox_depth{bot_id="${id}",kind="route"}`), 0)
    assert.strictEqual(samples.get(`botrelay_outbox_oldest_pending_seconds{bot_id="${id}",kind="backend"}`), 0)
    assert.strictEqual(samples.get(`botrelay_pipeline_lag_seconds{bot_id="${id}"}`), 0)
    const instance = (await server.call("/api/status")).json.self
    assert.strictEqual(samples.get(`botrelay_leases{instance_id="${instance}"}`), 2)

    assert.notInclude(lastText, tg.token)
    assert.notInclude(lastText, tg.token.split(":")[1]!)
    assert.notInclude(lastText, unknownToken.split(":")[1]!)
    assert.notInclude(lastText, "metered_bot")
    for (const line of server.logs) assert.notInclude(line, tg.token.split(":")[1]!)
  })

  it("counts open live event streams", async () => {
    const sseClients = async () => parse((await scrape()).text).get("botrelay_sse_clients")
    assert.strictEqual(await sseClients(), 0)
    const abort = new AbortController()
    const response = await fetch(`${server.baseUrl}/api/events`, {
      headers: { authorization: `Bearer ${server.adminKey}` },
      signal: abort.signal
    })
    assert.strictEqual(response.status, 200)
    await eventually(async () => (await sseClients()) === 1 || undefined)
    abort.abort()
    await eventually(async () => (await sseClients()) === 0 || undefined)
  })
})
