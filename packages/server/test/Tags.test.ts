import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, startServer, type TestServer } from "./Harness.js"

let server: TestServer

beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server?.close()
})


describe("tags", () => {
  it("assigns a tag and returns the same record when assigned again", async () => {
    const first = await server.call("/api/tags/add", { body: { chat_id: -100, user_id: 7, username: "ann", tag: "vip", color: "#abc" } })
    assert.strictEqual(first.status, 200, first.text)
    assert.deepInclude(first.json, { chat_id: -100, user_id: 7, username: "ann", tag: "vip", color: "#abc" })
    assert.isFalse(Number.isNaN(Date.parse(first.json.created_at)))
    const again = await server.call("/api/tags/add", { body: { chat_id: -100, user_id: 7, username: "ann", tag: "vip", color: "Gold" } })
    assert.strictEqual(again.json.id, first.json.id)
    assert.strictEqual(again.json.color, "Gold")
    const other = await server.call("/api/tags/add", { body: { chat_id: -100, user_id: 8, tag: "new" } })
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
      { chat_id: 1, user_id: 1, tag: "" },
      { chat_id: 1, user_id: 1, tag: "   " },
      { chat_id: 1, user_id: 1, tag: "x".repeat(65) },
      { chat_id: 1, user_id: 1, tag: "a", color: "#abcd" },
      { chat_id: 1, user_id: 1, tag: "a", color: "notacolour" },
      { chat_id: 1, tag: "a" }
    ]) {
      assertError(await server.call("/api/tags/add", { body }), 400, "invalid_request")
    }
    assertError(await server.call("/api/tags/add", { body: { bot_id: 999999, chat_id: 1, user_id: 1, tag: "a" } }), 404, "bot_not_found")
  })

  it("removes a tag; 404 for an unknown one", async () => {
    const tag = (await server.call("/api/tags/add", { body: { chat_id: 9, user_id: 9, tag: "gone" } })).json
    const removed = await server.call(`/api/tags/remove?id=${tag.id}`, { method: "POST" })
    assert.strictEqual(removed.status, 200)
    assert.strictEqual(removed.json.id, tag.id)
    assertError(await server.call(`/api/tags/remove?id=${tag.id}`, { method: "POST" }), 404, "tag_not_found")
  })
})
