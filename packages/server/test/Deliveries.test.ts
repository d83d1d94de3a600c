import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram, PgCluster } from "@botrelay/testing"
import { assertError, eventually, startServer, storages, type TestServer, startTwoInstances } from "./Harness.js"

/** A bot's backend: answers 500 while `healthy` is false, and keeps the texts of the updates it accepted, in order. */
const backend = async () => {
  const state = { healthy: true, texts: [] as Array<string>, updateIds: [] as Array<number> }
  const http: Server = createServer((req, res) => {
    let text = ""
    req.on("data", (chunk) => text += chunk)
    req.on("end", () => {
      if (state.healthy) {
        const update = JSON.parse(text)
        state.texts.push(update.message?.text ?? "")
        state.updateIds.push(update.update_id)
      }
      res.writeHead(state.healthy ? 200 : 500, { "content-type": "application/json" })
      res.end("")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`
  return { url, state, close: () => new Promise<void>((resolve) => http.close(() => resolve())) }
}

describe.each(storages)("deliveries: list, retry, discard and replay (%s)", (storage) => {
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer
  let hook: Awaited<ReturnType<typeof backend>>

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    // The harness's short runtime (fastRuntime) dead-letters a delivery 2 seconds after it was queued.
    server = await startServer({ telegramApi: fake.apiRoot, storage })
    hook = await backend()
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
    await hook?.close()
  })

  const addBot = async (body: Record<string, unknown>) => {
    const tg = fake.addBot()
    const reply = await server.call("/api/bots/add", { body: { token: tg.token, ...body } })
    assert.strictEqual(reply.status, 200, reply.text)
    return { tg, id: reply.json.id as number }
  }

  const list = async (query: string) => {
    const reply = await server.call(`/api/deliveries?${query}`)
    assert.strictEqual(reply.status, 200, reply.text)
    return reply.json as Array<any>
  }

  const dead = (botId: number, n: number) =>
    eventually(async () => {
      const found = await list(`bot_id=${botId}&status=dead`)
      return found.length === n ? found : undefined
    }, 15_000)

  const post = (path: string, body?: unknown) => server.call(path, body === undefined ? { method: "POST" } : { body })

  it("lists and filters by status; the /api/bots/deliveries aliases answer the same", async () => {
    hook.state.healthy = false
    const bot = await addBot({ proxy_enabled: true, backend_url: hook.url })
    fake.userSends(bot.tg.id, { text: "lost" })
    const [lost] = await dead(bot.id, 1)
    assert.deepInclude(lost, { bot_id: bot.id, url: hook.url, status: "dead", last_error: "HTTP 500" })
    for (const query of [`bot_id=${bot.id}`, `bot_id=${bot.id}&status=dead`, `bot_id=${bot.id}&status=pending&limit=1`]) {
      const canonical = await server.call(`/api/deliveries?${query}`)
      const alias = await server.call(`/api/bots/deliveries?${query}`)
      assert.strictEqual(alias.status, 200)
      assert.deepStrictEqual(alias.json, canonical.json)
    }
    assert.deepStrictEqual(await list(`bot_id=${bot.id}&status=discarded`), [])
    assertError(await server.call("/api/deliveries?status=lost"), 400, "invalid_request")
    const discarded = await post(`/api/bots/deliveries/discard?id=${lost.id}`)
    assert.strictEqual(discarded.status, 200, discarded.text)
    assert.deepInclude(discarded.json, { id: lost.id, status: "discarded" })
    assert.deepStrictEqual((await list(`bot_id=${bot.id}&status=discarded`)).map((d) => d.id), [lost.id])
  }, 30_000)

  it("retries one dead delivery or all of a bot, discards one or all; neither or both of id and bot_id is a 400", async () => {
    hook.state.healthy = false
    hook.state.texts.length = 0
    const bot = await addBot({ proxy_enabled: true, backend_url: hook.url })
    for (const text of ["a", "b", "c"]) fake.userSends(bot.tg.id, { text })
    const letters = (await dead(bot.id, 3)).sort((x, y) => x.id - y.id)

    for (const query of ["", `?id=${letters[0].id}&bot_id=${bot.id}`]) {
      assertError(await post(`/api/deliveries/retry${query}`), 400, "invalid_request")
      assertError(await post(`/api/deliveries/discard${query}`), 400, "invalid_request")
    }
    assert.strictEqual((await list(`bot_id=${bot.id}&status=dead`)).length, 3)

    const discarded = await post(`/api/deliveries/discard?id=${letters[0].id}`)
    assert.deepInclude(discarded.json, { id: letters[0].id, status: "discarded", last_error: "HTTP 500" })
    assertError(await post(`/api/deliveries/retry?id=${letters[0].id}`), 404, "delivery_not_found")
    assertError(await post(`/api/deliveries/discard?id=${letters[0].id}`), 404, "delivery_not_found")
    assertError(await post("/api/deliveries/retry?id=999999"), 404, "delivery_not_found")

    hook.state.healthy = true
    const retried = await post(`/api/deliveries/retry?id=${letters[1].id}`)
    assert.deepInclude(retried.json, { id: letters[1].id, status: "pending", attempts: 0 })
    await eventually(() => hook.state.texts.includes("b") || undefined)
    const all = await post(`/api/deliveries/retry?bot_id=${bot.id}`)
    assert.deepStrictEqual(all.json, { retried: 1 })
    await eventually(() => hook.state.texts.includes("c") || undefined)
    assert.deepStrictEqual(hook.state.texts, ["b", "c"])
    await eventually(async () => (await list(`bot_id=${bot.id}&status=delivered`)).length === 2 || undefined)
    assert.deepStrictEqual((await post(`/api/deliveries/retry?bot_id=${bot.id}`)).json, { retried: 0 })

    hook.state.healthy = false
    fake.userSends(bot.tg.id, { text: "d" })
    fake.userSends(bot.tg.id, { text: "e" })
    await dead(bot.id, 2)
    const given = await post(`/api/bots/deliveries/discard?bot_id=${bot.id}`)
    assert.deepStrictEqual(given.json, { discarded: 2 })
    assert.deepStrictEqual(await list(`bot_id=${bot.id}&status=dead`), [])
    assert.strictEqual((await list(`bot_id=${bot.id}&status=discarded`)).length, 3)
    hook.state.healthy = true

    const audit = async (action: string) =>
      (await server.call(`/api/audit?action=${action}&bot_id=${bot.id}`)).json.items.map((e: any) => [e.outcome, e.target_type, e.details])
    assert.deepStrictEqual(await audit("deliveries.retry"), [
      ["ok", "bot", { retried: 0 }],
      ["ok", "bot", { retried: 1 }],
      ["ok", "delivery", { retried: 1, update_id: letters[1].update_id }]
    ])
    assert.deepStrictEqual(await audit("deliveries.discard"), [
      ["ok", "bot", { discarded: 2 }],
      ["ok", "delivery", { discarded: 1, update_id: letters[0].update_id, last_error: "HTTP 500" }]
    ])
  }, 40_000)

  it("replays stored updates by update_id and by time, in order, behind pending ones, skipping dropped ones", async () => {
    hook.state.healthy = true
    const bot = await addBot({ proxy_enabled: true, backend_url: hook.url })
    const dropped = await server.call("/api/routes/add", {
      body: { source_bot_id: bot.id, target_bot_id: bot.id, action: "drop", condition_type: "keyword", condition_value: "spam" }
    })
    assert.strictEqual(dropped.status, 200, dropped.text)
    const from = Math.floor(Date.now() / 1000)
    for (const text of ["one", "spam", "three"]) fake.userSends(bot.tg.id, { text })
    const delivered = await eventually(async () => {
      const found = await list(`bot_id=${bot.id}&status=delivered`)
      return found.length === 2 ? found.sort((x, y) => x.id - y.id) : undefined
    })
    const first = delivered[0].update_id as number
    const last = delivered[1].update_id as number
    assert.strictEqual(last, first + 2)
    const before = (await list(`bot_id=${bot.id}`)).length

    const refusals: Array<[unknown, string]> = [
      [{ bot_id: bot.id, from_update_id: last, to_update_id: first }, "to_update_id"],
      [{ bot_id: bot.id, from_update_id: first, to_update_id: first + 10_000 }, "to_update_id"],
      [{ bot_id: bot.id, from, to: from }, "to"],
      [{ bot_id: bot.id, from: from + 1, to: from }, "to"],
      [{ bot_id: bot.id, from_update_id: first, to_update_id: last, from, to: from + 1 }, ""],
      [{ bot_id: bot.id, from_update_id: first }, "to_update_id"],
      [{ bot_id: bot.id }, ""]
    ]
    for (const [body, path] of refusals) {
      const reply = await post("/api/deliveries/replay", body)
      assertError(reply, 400, "invalid_request")
      assert.strictEqual(reply.json.details?.[0]?.path, path, JSON.stringify(body))
    }
    const bare = await addBot({ manage_enabled: true })
    const noBackend = await post("/api/deliveries/replay", { bot_id: bare.id, from_update_id: 1, to_update_id: 2 })
    assertError(noBackend, 400, "invalid_request")
    assert.include(noBackend.json.error, "backend_url")
    assertError(await post("/api/deliveries/replay", { bot_id: 999999, from_update_id: 1, to_update_id: 2 }), 404, "bot_not_found")
    assert.strictEqual((await list(`bot_id=${bot.id}`)).length, before)

    // A delivery waits for a retry: the replay queues behind it.
    hook.state.healthy = false
    hook.state.texts.length = 0
    fake.userSends(bot.tg.id, { text: "four" })
    await eventually(async () => (await list(`bot_id=${bot.id}&status=pending`))[0]?.attempts >= 1 || undefined)
    const byIds = await post("/api/deliveries/replay", { bot_id: bot.id, from_update_id: first, to_update_id: last })
    assert.strictEqual(byIds.status, 200, byIds.text)
    assert.deepStrictEqual(byIds.json, { queued: 2, missing: 1 })
    hook.state.healthy = true
    await eventually(() => hook.state.texts.length === 3 || undefined)
    assert.deepStrictEqual(hook.state.texts, ["four", "one", "three"])
    const notStored = await post("/api/deliveries/replay", { bot_id: bot.id, from_update_id: last + 2, to_update_id: last + 4 })
    assert.deepStrictEqual(notStored.json, { queued: 0, missing: 3 })

    const to = Math.floor(Date.now() / 1000) + 1
    const byTime = await post("/api/bots/deliveries/replay", { bot_id: bot.id, from, to })
    assert.deepStrictEqual(byTime.json, { queued: 3, missing: 1 })
    await eventually(() => hook.state.texts.length === 6 || undefined)
    assert.deepStrictEqual(hook.state.texts, ["four", "one", "three", "one", "three", "four"])
    const replayed = (await list(`bot_id=${bot.id}`)).filter((d) => d.update_id === first)
    assert.strictEqual(new Set(replayed.map((d) => d.id)).size, 3)

    const audit = (await server.call(`/api/audit?action=deliveries.replay&bot_id=${bot.id}`)).json.items
    assert.deepStrictEqual(audit.filter((e: any) => e.outcome === "ok").map((e: any) => e.details), [
      { from, to, queued: 3, missing: 1 },
      { from_update_id: last + 2, to_update_id: last + 4, queued: 0, missing: 3 },
      { from_update_id: first, to_update_id: last, queued: 2, missing: 1 }
    ])
  }, 40_000)

  it("gives up a route send BOTRELAY_DELIVERY_MAX_AGE after it was queued, as a delivery", async () => {
    const source = await addBot({ manage_enabled: true })
    const target = await addBot({ manage_enabled: true })
    for (const method of ["sendMessage", "copyMessage", "forwardMessage"]) {
      fake.failAlways(method, { error_code: 502, description: "Bad Gateway" }, { botId: target.tg.id })
    }
    const route = await server.call("/api/routes/add", {
      body: { source_bot_id: source.id, target_bot_id: target.id, action: "copy", target_chat_id: -1001234567890 }
    })
    assert.strictEqual(route.status, 200, route.text)
    fake.userSends(source.tg.id, { text: "never arrives" })
    const [send] = await eventually(async () => {
      const reply = await server.call(`/api/routes/sends?bot_id=${target.id}&status=dead`)
      return reply.json.length === 1 ? reply.json : undefined
    }, 15_000)
    assert.include(send.last_error, "502")
    assert.isBelow(Date.parse(send.updated_at) - Date.parse(send.created_at), 10_000)
  }, 30_000)

  it("lets operators act on their bots only", async () => {
    const mine = await addBot({ proxy_enabled: true, backend_url: hook.url })
    const theirs = await addBot({ proxy_enabled: true, backend_url: hook.url })
    hook.state.healthy = false
    fake.userSends(theirs.tg.id, { text: "not yours" })
    const [letter] = await dead(theirs.id, 1)
    const created = await server.call("/api/auth/api-keys", {
      body: { name: "desk", role: "operator", scopes: [{ bot_id: mine.id, abilities: ["read", "configure"] }] }
    })
    const key = created.json.key as string
    const as = (path: string, body?: unknown) =>
      server.call(path, body === undefined ? { method: "POST", key } : { body, key })

    assertError(await server.call("/api/deliveries", { key }), 403, "forbidden")
    assertError(await server.call(`/api/deliveries?bot_id=${theirs.id}`, { key }), 403, "forbidden")
    assertError(await as(`/api/deliveries/retry?id=${letter.id}`), 403, "forbidden")
    assertError(await as(`/api/deliveries/discard?id=${letter.id}`), 403, "forbidden")
    assertError(await as(`/api/deliveries/retry?bot_id=${theirs.id}`), 403, "forbidden")
    assertError(await as(`/api/bots/deliveries/discard?bot_id=${theirs.id}`), 403, "forbidden")
    assertError(await as("/api/deliveries/replay", { bot_id: theirs.id, from_update_id: 1, to_update_id: 2 }), 403, "forbidden")
    assert.strictEqual((await list(`bot_id=${theirs.id}&status=dead`)).length, 1)

    assert.strictEqual((await server.call(`/api/deliveries?bot_id=${mine.id}`, { key })).status, 200)
    assert.deepStrictEqual((await as(`/api/deliveries/retry?bot_id=${mine.id}`)).json, { retried: 0 })
    assert.deepStrictEqual((await as(`/api/deliveries/discard?bot_id=${mine.id}`)).json, { discarded: 0 })
    assert.deepStrictEqual(
      (await as("/api/deliveries/replay", { bot_id: mine.id, from_update_id: 1, to_update_id: 2 })).json,
      { queued: 0, missing: 2 }
    )
    hook.state.healthy = true
    const denied = (await server.call(`/api/audit?action=deliveries.retry&outcome=denied`)).json.items
    assert.isAtLeast(denied.length, 2)
  }, 30_000)
})

describe.skipIf(!PgCluster.available)("deliveries across instances sharing PostgreSQL", () => {
  let instances: Awaited<ReturnType<typeof startTwoInstances>>
  let fake: FakeTelegram.FakeTelegram
  let hook: Awaited<ReturnType<typeof backend>>
  let a: TestServer
  let b: TestServer

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    hook = await backend()
    instances = await startTwoInstances({ telegramApi: fake.apiRoot })
    ;({ a, b } = instances)
  }, 60_000)
  afterAll(async () => {
    await instances?.close()
    await Promise.all([fake?.close(), hook?.close()])
  })

  it("a replay or retry asked of the instance without the bot's lease is delivered by the one with it", async () => {
    const tg = fake.addBot()
    const added = await a.call("/api/bots/add", { body: { token: tg.token, proxy_enabled: true, backend_url: hook.url } })
    const botId = added.json.id as number
    const owner = await eventually(async () => {
      const bots = (await a.call("/api/status")).json.bots as Array<any>
      return bots.find((bot) => bot.bot_id === botId)?.lease?.instance_id as string | undefined
    }, 20_000)
    const other = owner === "a" ? b : a
    fake.userSends(tg.id, { text: "once" })
    const [delivered] = await eventually(async () => {
      const list = (await other.call(`/api/deliveries?bot_id=${botId}&status=delivered`)).json as Array<any>
      return list.length === 1 ? list : undefined
    }, 15_000)

    const replayed = await other.call("/api/deliveries/replay", {
      body: { bot_id: botId, from_update_id: delivered.update_id, to_update_id: delivered.update_id }
    })
    assert.deepStrictEqual(replayed.json, { queued: 1, missing: 0 })
    await eventually(() => hook.state.texts.length === 2 || undefined, 5_000)
    assert.deepStrictEqual(hook.state.texts, ["once", "once"])

    hook.state.healthy = false
    fake.userSends(tg.id, { text: "late" })
    const [dead] = await eventually(async () => {
      const list = (await other.call(`/api/deliveries?bot_id=${botId}&status=dead`)).json as Array<any>
      return list.length === 1 ? list : undefined
    }, 15_000)
    hook.state.healthy = true
    assert.deepStrictEqual((await other.call(`/api/deliveries/retry?bot_id=${botId}`, { method: "POST" })).json, { retried: 1 })
    await eventually(() => hook.state.texts.length === 3 || undefined, 5_000)
    assert.deepStrictEqual(hook.state.texts, ["once", "once", "late"])
    assert.strictEqual(dead.update_id, delivered.update_id + 1)
  }, 60_000)
})
