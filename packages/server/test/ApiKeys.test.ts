import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let mine: { id: number; token: string }
let other: number
let operatorKey: string
let chat: number

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  const tg = fake.addBot()
  chat = fake.addUser().id
  mine = { id: (await server.call("/api/bots/add", { body: { token: tg.token, secret_token: "abc" } })).json.id, token: tg.token }
  other = (await server.call("/api/bots/add", { body: { token: fake.addBot().token } })).json.id
  const created = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator", bot_ids: [mine.id] } })
  assert.strictEqual(created.status, 200, created.text)
  operatorKey = created.json.key
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})


describe("API keys", () => {
  it("creates keys shown once and lists them without secrets", async () => {
    const created = await server.call("/api/auth/api-keys", { body: { name: "ci", role: "operator", bot_ids: [] } })
    assert.match(created.json.key, /^brk_[A-Za-z0-9_-]{43}$/)
    assert.deepInclude(created.json, { name: "ci", role: "operator", enabled: true, last_used_at: "" })
    assert.strictEqual(created.json.prefix, created.json.key.slice(0, 12))
    const list = await server.call("/api/auth/api-keys")
    assert.strictEqual(list.status, 200)
    assert.notInclude(list.text, created.json.key)
    assert.isTrue(list.json.some((k: any) => k.id === created.json.id && k.prefix === created.json.prefix))
    assert.isTrue(list.json.every((k: any) => !("key" in k) && !("hash" in k)))
  })

  it("defaults to operator; 400 for bad input, 404 for unknown bots", async () => {
    const created = await server.call("/api/auth/api-keys", { body: { name: "default" } })
    assert.strictEqual(created.json.role, "operator")
    assertError(await server.call("/api/auth/api-keys", { body: { name: "" } }), 400, "invalid_request")
    assertError(await server.call("/api/auth/api-keys", { body: { name: "x", role: "root" } }), 400, "invalid_request")
    assertError(await server.call("/api/auth/api-keys", { body: { name: "x", role: "admin", bot_ids: [mine.id] } }), 400, "invalid_request")
    assertError(await server.call("/api/auth/api-keys", { body: { name: "x", bot_ids: [999999] } }), 404, "bot_not_found")
  })

  it("toggles and deletes keys; a disabled key is refused", async () => {
    const created = (await server.call("/api/auth/api-keys", { body: { name: "temp", bot_ids: [mine.id] } })).json
    assert.strictEqual((await server.call("/api/bots", { key: created.key })).status, 200)
    const off = await server.call(`/api/auth/api-keys/toggle?id=${created.id}`, { method: "POST" })
    assert.strictEqual(off.json.enabled, false)
    assertError(await server.call("/api/bots", { key: created.key }), 401, "unauthorized")
    await server.call(`/api/auth/api-keys/toggle?id=${created.id}`, { method: "POST" })
    assert.strictEqual((await server.call("/api/bots", { key: created.key })).status, 200)
    const deleted = await server.call(`/api/auth/api-keys/delete?id=${created.id}`, { method: "POST" })
    assert.strictEqual(deleted.json.id, created.id)
    assertError(await server.call("/api/bots", { key: created.key }), 401, "unauthorized")
    assertError(await server.call(`/api/auth/api-keys/delete?id=${created.id}`, { method: "POST" }), 404, "api_key_not_found")
    assertError(await server.call(`/api/auth/api-keys/toggle?id=999999`, { method: "POST" }), 404, "api_key_not_found")
  })

  it("409 when disabling or deleting the last enabled admin key", async () => {
    const admin = (await server.call("/api/auth/api-keys")).json.find((k: any) => k.role === "admin")
    assertError(await server.call(`/api/auth/api-keys/toggle?id=${admin.id}`, { method: "POST" }), 409, "last_admin_key")
    assertError(await server.call(`/api/auth/api-keys/delete?id=${admin.id}`, { method: "POST" }), 409, "last_admin_key")
  })
})

describe("operator scope", () => {
  it("sees only its bots, with secrets masked", async () => {
    const reply = await server.call("/api/bots", { key: operatorKey })
    assert.deepStrictEqual(reply.json.map((b: any) => b.id), [mine.id])
    assert.strictEqual(reply.json[0].token, `${mine.token.split(":")[0]}:…${mine.token.slice(-4)}`)
    assert.isTrue(reply.json[0].token_set)
    assert.strictEqual(reply.json[0].secret_token, "***")
    assert.notInclude(reply.text, mine.token)
  })

  it("sends and reads messages of its bots only", async () => {
    const sent = await server.call("/api/messages/send", { key: operatorKey, body: { bot_id: mine.id, chat_id: chat, text: "hi" } })
    assert.strictEqual(sent.status, 200, sent.text)
    const page = await server.call(`/api/messages?bot_id=${mine.id}&chat_id=${chat}`, { key: operatorKey })
    assert.strictEqual(page.json[0].id, sent.json.id)
    assertError(await server.call(`/api/messages?bot_id=${other}&chat_id=${chat}`, { key: operatorKey }), 403, "forbidden")
    assertError(await server.call(`/api/messages?bot_id=999999&chat_id=${chat}`, { key: operatorKey }), 403, "forbidden")
    assertError(
      await server.call("/api/messages/send", { key: operatorKey, body: { bot_id: other, chat_id: chat, text: "hi" } }),
      403,
      "forbidden"
    )
  })

  it("sees backend URLs and deliveries without credentials, and route sends without other bots' updates", async () => {
    const tg = fake.addBot()
    const source = fake.addBot()
    const bot = (await server.call("/api/bots/add", {
      body: { token: tg.token, proxy_enabled: true, backend_url: "http://relay:pa55w0rd@127.0.0.1:1/hook" }
    })).json.id
    const sourceBot = (await server.call("/api/bots/add", { body: { token: source.token } })).json.id
    const key = (await server.call("/api/auth/api-keys", { body: { name: "scoped", bot_ids: [bot] } })).json.key
    const user = fake.addUser()
    const group = fake.addGroup({ members: [tg.id] })
    const route = await server.call("/api/routes/add", {
      body: { source_bot_id: sourceBot, target_bot_id: bot, action: "copy", target_chat_id: group.id }
    })
    assert.strictEqual(route.status, 200, route.text)
    fake.userSends(tg.id, { user, text: "to the backend" })
    fake.userSends(source.id, { user, text: "routed secret" })

    const bots = await server.call("/api/bots", { key })
    assert.strictEqual(bots.json[0].backend_url, "http://127.0.0.1:1/hook")
    assert.notInclude(bots.text, "pa55w0rd")
    const deliveries = await eventually(async () => {
      const reply = await server.call(`/api/bots/deliveries?bot_id=${bot}`, { key })
      return reply.json.length > 0 ? reply : undefined
    })
    assert.strictEqual(deliveries.json[0].url, "http://127.0.0.1:1/hook")
    assert.notInclude(deliveries.text, "pa55w0rd")
    const sends = await eventually(async () => {
      const reply = await server.call(`/api/routes/sends?bot_id=${bot}`, { key })
      return reply.json.length > 0 ? reply : undefined
    })
    assert.strictEqual(sends.json[0].payload, "")
    assert.notInclude(sends.text, "routed secret")
    assert.notInclude(sends.text, user.first_name)

    assert.include((await server.call("/api/bots")).text, "pa55w0rd")
    assert.include((await server.call(`/api/routes/sends?bot_id=${bot}`)).text, "routed secret")
    await server.call(`/api/routes/delete?id=${route.json.id}`, { method: "POST" })
  })

  it("manages tags through a bot in scope", async () => {
    const tag = await server.call("/api/tags/add", { key: operatorKey, body: { bot_id: mine.id, chat_id: chat, user_id: chat, tag: "lead" } })
    assert.strictEqual(tag.status, 200)
    assertError(await server.call("/api/tags/add", { key: operatorKey, body: { chat_id: chat, user_id: chat, tag: "x" } }), 400, "invalid_request")
    assertError(
      await server.call("/api/tags/add", { key: operatorKey, body: { bot_id: other, chat_id: chat, user_id: chat, tag: "x" } }),
      403,
      "forbidden"
    )
    assert.strictEqual((await server.call(`/api/tags?chat_id=${chat}&bot_id=${mine.id}`, { key: operatorKey })).json.length, 1)
    assertError(await server.call(`/api/tags?chat_id=${chat}`, { key: operatorKey }), 403, "forbidden")
    assertError(await server.call("/api/tags/add", { key: operatorKey, body: { bot_id: 999999, chat_id: chat, user_id: chat, tag: "x" } }), 403, "forbidden")
    assert.strictEqual((await server.call(`/api/tags/remove?id=${tag.json.id}&bot_id=${mine.id}`, { key: operatorKey, method: "POST" })).status, 200)
  })

  it("403 on admin endpoints", async () => {
    const key = { key: operatorKey }
    for (const [path, body] of [
      ["/api/bots/add", { token: "5:x" }],
      ["/api/bots/update", { id: mine.id, name: "x" }],
      ["/api/routes/add", { source_bot_id: mine.id, target_bot_id: mine.id, action: "drop" }],
      ["/api/auth/api-keys", { name: "escalate", role: "admin" }]
    ] as const) {
      assertError(await server.call(path, { ...key, body }), 403, "forbidden")
    }
    assertError(await server.call(`/api/bots/toggle-disabled?id=${mine.id}`, { ...key, method: "POST" }), 403, "forbidden")
    assertError(await server.call(`/api/bots/delete?id=${mine.id}`, { ...key, method: "POST" }), 403, "forbidden")
    assertError(await server.call("/api/routes", key), 403, "forbidden")
    assertError(await server.call("/api/auth/api-keys", key), 403, "forbidden")
    assertError(await server.call("/api/bots/validate?token=1:x", key), 403, "forbidden")
  })
})
