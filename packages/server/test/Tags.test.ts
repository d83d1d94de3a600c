import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, startServer, type TestServer } from "./Harness.js"

let server: TestServer
let bot = 0

beforeAll(async () => {
  server = await startServer()
  bot = (await server.call("/api/bots/add", { body: { token: "100001:tags-test-bot", name: "tags" } })).json.id
})
afterAll(async () => {
  await server?.close()
})


describe("tags", () => {
  it("assigns a tag and returns the same record when assigned again", async () => {
    const first = await server.call("/api/tags/add", { body: { bot_id: bot, chat_id: -100, user_id: 7, username: "ann", tag: "vip", color: "#abc" } })
    assert.strictEqual(first.status, 200, first.text)
    assert.deepInclude(first.json, { bot_id: bot, chat_id: -100, user_id: 7, username: "ann", tag: "vip", color: "#abc" })
    assert.isFalse(Number.isNaN(Date.parse(first.json.created_at)))
    const again = await server.call("/api/tags/add", { body: { bot_id: bot, chat_id: -100, user_id: 7, username: "ann", tag: "vip", color: "Gold" } })
    assert.strictEqual(again.json.id, first.json.id)
    assert.strictEqual(again.json.color, "Gold")
    const other = await server.call("/api/tags/add", { body: { bot_id: bot, chat_id: -100, user_id: 8, tag: "new" } })
    assert.strictEqual(other.json.color, "")
    assert.strictEqual(other.json.username, "")
  })

  it("lists a chat's tags, optionally of one user", async () => {
    const all = await server.call("/api/tags?chat_id=-100")
    assert.deepStrictEqual(all.json.map((t: any) => t.user_id), [7, 8])
    const one = await server.call("/api/tags?chat_id=-100&user_id=8")
    assert.deepStrictEqual(one.json.map((t: any) => t.tag), ["new"])
    assert.deepStrictEqual((await server.call("/api/tags?chat_id=5")).json, [])
    assertError(await server.call("/api/tags"), 400, "invalid_request")
  })

  it("400 for an empty or long tag, a bad colour, a missing user", async () => {
    for (const body of [
      { bot_id: bot, chat_id: 1, user_id: 1, tag: "" },
      { bot_id: bot, chat_id: 1, user_id: 1, tag: "   " },
      { bot_id: bot, chat_id: 1, user_id: 1, tag: "x".repeat(65) },
      { bot_id: bot, chat_id: 1, user_id: 1, tag: "a", color: "#abcd" },
      { bot_id: bot, chat_id: 1, user_id: 1, tag: "a", color: "notacolour" },
      { bot_id: bot, chat_id: 1, tag: "a" },
      { chat_id: 1, user_id: 1, tag: "a" }
    ]) {
      assertError(await server.call("/api/tags/add", { body }), 400, "invalid_request")
    }
    assertError(await server.call("/api/tags/add", { body: { bot_id: 999999, chat_id: 1, user_id: 1, tag: "a" } }), 404, "bot_not_found")
  })

  it("removes a tag; 404 for an unknown one", async () => {
    const tag = (await server.call("/api/tags/add", { body: { bot_id: bot, chat_id: 9, user_id: 9, tag: "gone" } })).json
    const removed = await server.call(`/api/tags/remove?id=${tag.id}`, { method: "POST" })
    assert.strictEqual(removed.status, 200)
    assert.strictEqual(removed.json.id, tag.id)
    assertError(await server.call(`/api/tags/remove?id=${tag.id}`, { method: "POST" }), 404, "tag_not_found")
  })

  it("keeps each bot's tags to itself: operators see, add and remove only their bots' tags, by id too", async () => {
    const other = (await server.call("/api/bots/add", { body: { token: "100002:tags-test-other", name: "other" } })).json.id
    const created = await server.call("/api/auth/api-keys", { body: { name: "op", role: "operator", bot_ids: [bot] } })
    const op = created.json.key as string
    const chat = 4242
    const theirs = (await server.call("/api/tags/add", {
      body: { bot_id: other, chat_id: chat, user_id: chat, username: "secret_handle", tag: "theirs" }
    })).json
    const mine = await server.call("/api/tags/add", {
      key: op,
      body: { bot_id: bot, chat_id: chat, user_id: chat, tag: "mine" }
    })
    assert.strictEqual(mine.status, 200, mine.text)

    const listed = await server.call(`/api/tags?chat_id=${chat}&bot_id=${bot}`, { key: op })
    assert.deepStrictEqual(listed.json.map((t: any) => t.tag), ["mine"])
    assert.notInclude(listed.text, "secret_handle")
    for (
      const path of [
        `/api/tags?chat_id=${chat}`,
        `/api/tags?chat_id=${chat}&bot_id=${other}`,
        `/api/tags?chat_id=${chat}&user_id=${chat}&bot_id=${other}`
      ]
    ) assertError(await server.call(path, { key: op }), 403, "forbidden")
    assertError(
      await server.call("/api/tags/add", { key: op, body: { bot_id: other, chat_id: chat, user_id: chat, tag: "x" } }),
      403,
      "forbidden"
    )

    for (const path of [`/api/tags/remove?id=${theirs.id}`, `/api/tags/remove?id=${theirs.id}&bot_id=${bot}`]) {
      const refused = await server.call(path, { key: op, method: "POST" })
      assertError(refused, 404, "tag_not_found")
      assert.notInclude(refused.text, "secret_handle")
    }
    assertError(
      await server.call(`/api/tags/remove?id=${theirs.id}&bot_id=${other}`, { key: op, method: "POST" }),
      403,
      "forbidden"
    )
    const more = []
    for (const c of [chat + 1, chat + 2]) {
      more.push((await server.call("/api/tags/add", { body: { bot_id: other, chat_id: c, user_id: c, tag: "t" } })).json.id)
    }
    for (const id of [theirs.id, ...more, more.at(-1) + 1, more.at(-1) + 100]) {
      assertError(await server.call(`/api/tags/remove?id=${id}`, { key: op, method: "POST" }), 404, "tag_not_found")
    }
    for (const c of [chat + 1, chat + 2]) assert.strictEqual((await server.call(`/api/tags?chat_id=${c}`)).json.length, 1)
    const all = await server.call(`/api/tags?chat_id=${chat}`)
    assert.deepStrictEqual(all.json.map((t: any) => [t.bot_id, t.tag]), [[other, "theirs"], [bot, "mine"]])
    assertError(
      await server.call(`/api/tags/remove?id=${mine.json.id}&bot_id=${other}`, { method: "POST" }),
      404,
      "tag_not_found"
    )
    const removed = await server.call(`/api/tags/remove?id=${mine.json.id}`, { key: op, method: "POST" })
    assert.strictEqual(removed.status, 200)
  })
})
