import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, startServer, type TestServer } from "./Harness.js"

let server: TestServer
let a: number
let b: number

beforeAll(async () => {
  server = await startServer()
  a = (await server.call("/api/bots/add", { body: { token: "1:route-a" } })).json.id
  b = (await server.call("/api/bots/add", { body: { token: "2:route-b" } })).json.id
})
afterAll(async () => {
  await server?.close()
})


describe("POST /api/routes/add", () => {
  it("creates a route with defaults", async () => {
    const reply = await server.call("/api/routes/add", { body: { source_bot_id: a, target_bot_id: b, action: "forward" } })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepInclude(reply.json, {
      source_bot_id: a,
      target_bot_id: b,
      condition_type: "all",
      condition_value: "",
      action: "forward",
      target_chat_id: 0,
      enabled: true,
      description: ""
    })
    assert.isAbove(reply.json.id, 0)
    assert.isFalse(Number.isNaN(Date.parse(reply.json.created_at)))
  })

  it("normalises list conditions", async () => {
    const reply = await server.call("/api/routes/add", {
      body: { source_bot_id: a, target_bot_id: b, action: "copy", condition_type: "chat_id", condition_value: "-1001, 42" }
    })
    assert.strictEqual(reply.json.condition_value, "-1001,42")
  })

  it("400 for bad conditions and actions, 404 for unknown bots; nothing stored", async () => {
    const before = (await server.call("/api/routes")).json.length
    const base = { source_bot_id: a, target_bot_id: b, action: "copy" }
    for (const body of [
      { ...base, condition_type: "regex", condition_value: "(" },
      { ...base, condition_type: "chat_id", condition_value: "abc" },
      { ...base, condition_type: "keyword", condition_value: "" },
      { ...base, condition_type: "whenever" },
      { ...base, action: "teleport" },
      { source_bot_id: a, target_bot_id: b },
      { ...base, source_bot_id: 0 }
    ]) {
      const reply = await server.call("/api/routes/add", { body })
      assertError(reply, 400, "invalid_request")
      assert.isArray(reply.json.details)
    }
    assertError(await server.call("/api/routes/add", { body: { ...base, target_bot_id: 999999 } }), 404, "bot_not_found")
    assert.strictEqual((await server.call("/api/routes")).json.length, before)
  })
})

describe("regex routes", () => {
  const regex = (source: number, condition_value: string, enabled = true) =>
    ({ source_bot_id: source, target_bot_id: b, action: "copy", condition_type: "regex", condition_value, enabled })

  it("400 naming condition_value for syntax RE2 does not have; nothing stored", async () => {
    const before = (await server.call("/api/routes")).json.length
    for (const [pattern, words] of [["(?<=a)b", "lookbehind"], ["a(?!b)", "lookahead"], ["(a)\\1", "backreferences"]]) {
      const reply = await server.call("/api/routes/add", { body: regex(a, pattern!) })
      assertError(reply, 400, "invalid_request")
      assert.include(reply.json.error, `condition_value: ${words}`)
      assert.include(reply.json.error, "route regexes use RE2 syntax, see docs/routing.md")
      assert.deepStrictEqual(reply.json.details.map((d: any) => d.path), ["condition_value"])
    }
    assert.strictEqual((await server.call("/api/routes")).json.length, before)
  })

  it("400 naming the limit when a bot's enabled regex routes would pass the total; nothing stored or changed", async () => {
    const c = (await server.call("/api/bots/add", { body: { token: "4:route-regex" } })).json.id
    const big = "[a-c]{0,23}zz"
    const ids: Array<number> = []
    for (let i = 0; i < 20; i++) {
      const reply = await server.call("/api/routes/add", { body: regex(c, big) })
      assert.strictEqual(reply.status, 200, reply.text)
      ids.push(reply.json.id)
    }
    const stored = (await server.call(`/api/routes?bot_id=${c}`)).json

    const added = await server.call("/api/routes/add", { body: regex(c, "x") })
    assertError(added, 400, "invalid_request")
    assert.include(added.json.error, `bot ${c} would have RE2 program size 1003 in all, over the limit of 1000`)
    assert.deepStrictEqual(added.json.details.map((d: any) => d.path), ["condition_value"])

    const off = await server.call("/api/routes/add", { body: regex(c, "x", false) })
    assert.strictEqual(off.status, 200, off.text)
    const enabled = await server.call("/api/routes/update", { body: { ...regex(c, "x"), id: off.json.id } })
    assertError(enabled, 400, "invalid_request")
    assert.include(enabled.json.error, "over the limit of 1000")
    const grown = await server.call("/api/routes/update", { body: { ...regex(c, `${big}|yy`), id: ids[0] } })
    assertError(grown, 400, "invalid_request")

    assert.deepStrictEqual((await server.call(`/api/routes?bot_id=${c}`)).json, [...stored, off.json])
    const other = await server.call("/api/routes/add", { body: regex(a, big) })
    assert.strictEqual(other.status, 200, other.text)
  })
})

describe("POST /api/routes/update", () => {
  it("replaces the route: omitted fields return to their defaults", async () => {
    const route = (await server.call("/api/routes/add", {
      body: { source_bot_id: a, target_bot_id: b, action: "copy", description: "d", enabled: false, target_chat_id: -5 }
    })).json
    const reply = await server.call("/api/routes/update", {
      body: { id: route.id, source_bot_id: b, target_bot_id: a, action: "drop", condition_type: "keyword", condition_value: "help" }
    })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepInclude(reply.json, {
      id: route.id,
      source_bot_id: b,
      target_bot_id: a,
      action: "drop",
      condition_type: "keyword",
      condition_value: "help",
      enabled: true,
      description: "",
      target_chat_id: 0,
      created_at: route.created_at
    })
  })

  it("404 for an unknown route or bot, 400 without id", async () => {
    const base = { source_bot_id: a, target_bot_id: b, action: "copy" }
    assertError(await server.call("/api/routes/update", { body: { ...base, id: 999999 } }), 404, "route_not_found")
    const route = (await server.call("/api/routes/add", { body: base })).json
    assertError(await server.call("/api/routes/update", { body: { ...base, id: route.id, source_bot_id: 999999 } }), 404, "bot_not_found")
    assertError(await server.call("/api/routes/update", { body: base }), 400, "invalid_request")
  })
})

describe("GET /api/routes and POST /api/routes/delete", () => {
  it("lists by id, filters by bot, deletes", async () => {
    const all = (await server.call("/api/routes")).json
    const ids = all.map((r: any) => r.id)
    assert.deepStrictEqual(ids, [...ids].sort((x: number, y: number) => x - y))
    const c = (await server.call("/api/bots/add", { body: { token: "3:route-c" } })).json.id
    const own = (await server.call("/api/routes/add", { body: { source_bot_id: c, target_bot_id: c, action: "drop" } })).json
    assert.deepStrictEqual((await server.call(`/api/routes?bot_id=${c}`)).json.map((r: any) => r.id), [own.id])
    const removed = await server.call(`/api/routes/delete?id=${own.id}`, { method: "POST" })
    assert.strictEqual(removed.json.id, own.id)
    assert.deepStrictEqual((await server.call(`/api/routes?bot_id=${c}`)).json, [])
    assertError(await server.call(`/api/routes/delete?id=${own.id}`, { method: "POST" }), 404, "route_not_found")
  })
})
