import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let tg: FakeTelegram.FakeBot
let botId: number
let user: { id: number }

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  tg = fake.addBot({ username: "relay_bot", first_name: "Relay" })
  user = fake.addUser({ first_name: "Ann", username: "ann" })
  botId = (await server.call("/api/bots/add", { body: { token: tg.token } })).json.id
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})


const send = (body: Record<string, unknown>) => server.call("/api/messages/send", { body: { bot_id: botId, ...body } })

describe("POST /api/messages/send", () => {
  it("sends through Telegram, stores Telegram's answer and returns it", async () => {
    const reply = await send({ chat_id: user.id, text: "hello <b>not html</b>" })
    assert.strictEqual(reply.status, 200, reply.text)
    const sent = fake.sent(tg.id).at(-1)!.message
    assert.strictEqual(sent.text, "hello <b>not html</b>")
    const last = fake.calls.filter((c) => c.method === "sendMessage").at(-1)!
    assert.isUndefined(last.params.parse_mode)
    assert.deepStrictEqual(reply.json, {
      id: sent.message_id,
      chat_id: user.id,
      bot_id: botId,
      user_id: tg.id,
      username: "relay_bot",
      first_name: "Relay",
      last_name: "",
      text: "hello <b>not html</b>",
      date: sent.date,
      direction: "out",
      edit_date: 0,
      delivery: "sent",
      delivery_error: "",
      delivery_at: reply.json.delivery_at,
      local_id: reply.json.local_id
    })
    assert.isAbove(reply.json.local_id, 0)
    const history = await server.call(`/api/messages?bot_id=${botId}&chat_id=${user.id}`)
    assert.deepStrictEqual(history.json[0], reply.json)
  })

  it("sends replies and records reply_to_message_id", async () => {
    const first = (await send({ chat_id: user.id, text: "first" })).json
    const reply = await send({ chat_id: user.id, text: "second", reply_to_message_id: first.id })
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.json.reply_to_message_id, first.id)
  })

  it("400 for empty or too long text and a bad chat_id; nothing is sent", async () => {
    const before = fake.sent(tg.id).length
    for (const body of [{ chat_id: user.id, text: "" }, { chat_id: user.id, text: "x".repeat(4097) }, { chat_id: "x", text: "a" }, { text: "a" }]) {
      assertError(await send(body), 400, "invalid_request")
    }
    assert.strictEqual(fake.sent(tg.id).length, before)
  })

  it("404 for an unknown bot, 409 for a disabled one", async () => {
    assertError(await server.call("/api/messages/send", { body: { bot_id: 999999, chat_id: 1, text: "a" } }), 404, "bot_not_found")
    await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
    assertError(await send({ chat_id: user.id, text: "a" }), 409, "bot_disabled")
    await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
  })

  it("502 with Telegram's description when Telegram says no", async () => {
    const reply = await send({ chat_id: 123456789, text: "nobody" })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "chat not found")
    assert.notInclude(reply.text, tg.token)
  })

  it("waits retry_after and sends again when Telegram rate-limits once", async () => {
    fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 })
    const started = Date.now()
    const reply = await send({ chat_id: user.id, text: "flood once" })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.isAtLeast(Date.now() - started, 950)
    assert.strictEqual(fake.sent(tg.id).at(-1)!.message.text, "flood once")
  })

  it("429 with Retry-After when Telegram keeps rate-limiting", async () => {
    fake.failAlways("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 })
    try {
      const reply = await send({ chat_id: user.id, text: "flood" })
      assertError(reply, 429, "telegram_rate_limited")
      assert.strictEqual(reply.headers.get("retry-after"), "1")
    } finally {
      fake.clearFailures()
    }
  }, 15_000)
})

describe("GET /api/messages", () => {
  it("pages newest first with limit and offset", async () => {
    const group = fake.addGroup({ title: "Team" })
    const ids: Array<number> = []
    for (let i = 0; i < 5; i++) ids.push((await send({ chat_id: group.id, text: `m${i}` })).json.id)
    const page = await server.call(`/api/messages?bot_id=${botId}&chat_id=${group.id}&limit=2&offset=1`)
    assert.strictEqual(page.status, 200)
    assert.deepStrictEqual(page.json.map((m: any) => m.id), [ids[3], ids[2]])
    const all = await server.call(`/api/messages?bot_id=${botId}&chat_id=${group.id}`)
    assert.deepStrictEqual(all.json.map((m: any) => m.id), [...ids].reverse())
    const empty = await server.call(`/api/messages?bot_id=${botId}&chat_id=-42`)
    assert.deepStrictEqual(empty.json, [])
  })

  it("400 for missing or out-of-range parameters, never clamped", async () => {
    for (const query of [
      `chat_id=1`,
      `bot_id=${botId}`,
      `bot_id=${botId}&chat_id=1&limit=0`,
      `bot_id=${botId}&chat_id=1&limit=201`,
      `bot_id=${botId}&chat_id=1&limit=abc`,
      `bot_id=${botId}&chat_id=1&offset=-1`,
      `bot_id=abc&chat_id=1`
    ]) {
      assertError(await server.call(`/api/messages?${query}`), 400, "invalid_request")
    }
    assertError(await server.call(`/api/messages?bot_id=999999&chat_id=1`), 404, "bot_not_found")
  })
})
