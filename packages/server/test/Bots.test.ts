import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

const token = (n: number) => `${n}:${"x".repeat(35)}`


describe("GET /api/health", () => {
  it("answers without a key", async () => {
    const reply = await server.call("/api/health", { key: null })
    assert.strictEqual(reply.status, 200)
    assert.deepStrictEqual(reply.json, { status: "ok", storage: "ok" })
  })
})

describe("authentication", () => {
  it("401 with WWW-Authenticate for a missing, malformed or unknown key", async () => {
    for (const key of [null, "nope", `brk_${"A".repeat(43)}`]) {
      const reply = await server.call("/api/bots", { key })
      assertError(reply, 401, "unauthorized")
      assert.strictEqual(reply.headers.get("www-authenticate"), "Bearer")
    }
  })
})

describe("every endpoint but health, openapi.json and login", () => {
  it("answers 401 without a key, and changes nothing", async () => {
    const spec = (await server.call("/api/openapi.json", { key: null })).json
    const endpoints = Object.entries(spec.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => [method.toUpperCase(), path] as const)
    )
    assert.isAtLeast(endpoints.length, 20)
    const before = (await server.call("/api/bots")).text
    for (const [method, path] of endpoints) {
      if (path === "/api/health" || path === "/api/auth/login") continue
      const reply = await server.call(`${path}?id=1&bot_id=1&chat_id=1&token=1:x`, {
        method,
        key: null,
        ...(method === "POST" ? { body: { token: "9:unauthorized", name: "x", bot_id: 1, chat_id: 1, text: "x" } } : {})
      })
      assertError(reply, 401, "unauthorized")
    }
    assert.strictEqual((await server.call("/api/bots")).text, before)
  })
})

describe("POST /api/bots/add", () => {
  it("creates a bot with every field present and defaults applied", async () => {
    const reply = await server.call("/api/bots/add", { body: { name: "alpha", token: token(101) } })
    assert.strictEqual(reply.status, 200)
    const bot = reply.json
    assert.isAbove(bot.id, 0)
    assert.strictEqual(bot.token, "101:…xxxx")
    assert.strictEqual(bot.token_set, true)
    assert.strictEqual(bot.secret_token, "")
    assert.strictEqual(bot.secret_token_set, false)
    assert.notInclude(reply.text, token(101))
    assert.strictEqual(bot.name, "alpha")
    assert.strictEqual(bot.source, "web")
    for (const flag of ["manage_enabled", "proxy_enabled", "long_poll_enabled", "running", "webhook_mode", "disabled"]) {
      assert.strictEqual(bot[flag], false, flag)
    }
    for (const field of ["backend_url", "secret_token", "description", "username", "last_error", "last_update_at"]) {
      assert.strictEqual(bot[field], "", field)
    }
    assert.isFalse(Number.isNaN(Date.parse(bot.created_at)))
  })

  it("takes every settable field", async () => {
    const body = {
      name: "full",
      token: token(102),
      manage_enabled: true,
      proxy_enabled: true,
      long_poll_enabled: true,
      backend_url: "https://backend.example/hook",
      secret_token: "s3cret_-X",
      description: "answers questions"
    }
    const reply = await server.call("/api/bots/add", { body })
    assert.strictEqual(reply.status, 200)
    const shown = { ...body, token: "102:…xxxx", secret_token: "***" }
    for (const [k, v] of Object.entries(shown)) assert.deepStrictEqual(reply.json[k], v, k)
    assert.isTrue(reply.json.token_set)
    assert.isTrue(reply.json.secret_token_set)
    assert.notInclude(reply.text, "s3cret_-X")
  })

  it("400 for each invalid field, naming it, and nothing is stored", async () => {
    const before = (await server.call("/api/bots")).json.length
    const cases: Array<[unknown, string]> = [
      [{ name: "x" }, "token"],
      [{ token: "" }, "token"],
      [{ token: "12:ab cd" }, "token"],
      [{ token: "1".repeat(257) }, "token"],
      [{ token: token(103), backend_url: "ftp://x" }, "backend_url"],
      [{ token: token(103), backend_url: "not a url" }, "backend_url"],
      [{ token: token(103), proxy_enabled: true }, "backend_url"],
      [{ token: token(103), secret_token: "has space" }, "secret_token"],
      [{ token: token(103), secret_token: "x".repeat(257) }, "secret_token"],
      [{ token: token(103), manage_enabled: "yes" }, "manage_enabled"],
      [{ token: 42 }, "token"]
    ]
    for (const [body, field] of cases) {
      const reply = await server.call("/api/bots/add", { body })
      assertError(reply, 400, "invalid_request")
      assert.isTrue(reply.json.details.some((d: any) => d.path === field), `${JSON.stringify(body)} -> ${reply.text}`)
    }
    assert.strictEqual((await server.call("/api/bots")).json.length, before)
  })

  it("400 naming the field for control characters in tokens and names, through add, update and api-keys", async () => {
    const characters = ["\u0000", "\u0007", "\u001f", "\u007f", "\u0085", "\u009f", "\u2028"]
    const bot = (await server.call("/api/bots/add", { body: { token: token(107), name: "clean" } })).json
    const before = (await server.call("/api/bots")).text
    const keysBefore = (await server.call("/api/auth/api-keys")).text
    for (const c of characters) {
      const cases: Array<[string, unknown, string, string]> = [
        ["/api/bots/add", { token: `108:ab${c}cd` }, "token", "token must not contain control characters"],
        ["/api/bots/add", { token: token(108), name: `a${c}b` }, "name", "name must not contain control characters"],
        ["/api/bots/update", { id: bot.id, token: `${c}108:abcd` }, "token", "token must not contain control characters"],
        ["/api/bots/update", { id: bot.id, name: `ab${c}` }, "name", "name must not contain control characters"],
        ["/api/auth/api-keys", { name: `desk${c}` }, "name", "name must not contain control characters"],
        ["/api/auth/api-keys", { name: `${c}desk` }, "name", "name must not contain control characters"]
      ]
      for (const [path, body, field, message] of cases) {
        const reply = await server.call(path, { body })
        assertError(reply, 400, "invalid_request")
        assert.deepInclude(reply.json.details, { path: field, message }, `${path} ${JSON.stringify(body)}`)
      }
    }
    for (const shape of ["108:a/b", "108:a?b", "108:a#b", "108:a%2Fb", "108:a\\b", "abc", "108", ":abc", "x:abc"]) {
      const reply = await server.call("/api/bots/add", { body: { token: shape } })
      assertError(reply, 400, "invalid_request")
      assert.isTrue(reply.json.details.some((d: any) => d.path === "token"), `${shape} -> ${reply.text}`)
      assert.notInclude(reply.text, shape)
    }
    assert.strictEqual((await server.call("/api/bots")).text, before)
    assert.strictEqual((await server.call("/api/auth/api-keys")).text, keysBefore)
  })

  it("reads a JSON body sent with curl's default form content type", async () => {
    const response = await fetch(`${server.baseUrl}/api/bots/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminKey}`, "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify({ name: "curl", token: token(106) })
    })
    assert.strictEqual(response.status, 200)
    assert.strictEqual((await response.json()).name, "curl")
  })

  it("400 invalid_json for a malformed body", async () => {
    assertError(await server.call("/api/bots/add", { raw: "{not json" }), 400, "invalid_json")
  })

  it("409 for a duplicate token", async () => {
    await server.call("/api/bots/add", { body: { token: token(104) } })
    assertError(await server.call("/api/bots/add", { body: { token: token(104) } }), 409, "duplicate_token")
  })

  it("413 for a body over 1 MiB", async () => {
    const reply = await server.call("/api/bots/add", { body: { token: token(105), description: "x".repeat(1_100_000) } })
    assertError(reply, 413, "payload_too_large")
  })

  it("405 with Allow for the wrong method", async () => {
    const reply = await server.call("/api/bots/add", { method: "GET" })
    assertError(reply, 405, "method_not_allowed")
    assert.strictEqual(reply.headers.get("allow"), "POST")
  })
})

describe("GET /api/bots", () => {
  it("lists bots ordered by id", async () => {
    const ids = (await server.call("/api/bots")).json.map((b: any) => b.id)
    assert.isAbove(ids.length, 1)
    assert.deepStrictEqual(ids, [...ids].sort((a: number, b: number) => a - b))
  })
})

describe("POST /api/bots/toggle-disabled", () => {
  it("flips disabled each time", async () => {
    const bot = (await server.call("/api/bots/add", { body: { token: token(110) } })).json
    const once = await server.call(`/api/bots/toggle-disabled?id=${bot.id}`, { method: "POST" })
    assert.strictEqual(once.status, 200)
    assert.strictEqual(once.json.disabled, true)
    const twice = await server.call(`/api/bots/toggle-disabled?id=${bot.id}`, { method: "POST" })
    assert.strictEqual(twice.json.disabled, false)
  })

  it("404 for an unknown id, 400 for a bad or missing id", async () => {
    assertError(await server.call("/api/bots/toggle-disabled?id=999999", { method: "POST" }), 404, "bot_not_found")
    for (const query of ["?id=abc", "", "?id=0", "?id=-1", "?id=1.5"]) {
      assertError(await server.call(`/api/bots/toggle-disabled${query}`, { method: "POST" }), 400, "invalid_request")
    }
  })
})

describe("POST /api/bots/update", () => {
  it("changes only the given fields", async () => {
    const bot = (await server.call("/api/bots/add", { body: { token: token(120), name: "before", description: "d" } }))
      .json
    const reply = await server.call("/api/bots/update", {
      body: { id: bot.id, name: "after", proxy_enabled: true, backend_url: "http://127.0.0.1:1/x" }
    })
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.json.name, "after")
    assert.strictEqual(reply.json.description, "d")
    assert.strictEqual(reply.json.token, "120:…xxxx")
    assert.strictEqual(reply.json.proxy_enabled, true)
  })

  it("404 unknown id, 409 duplicate token, 400 proxy without backend", async () => {
    const a = (await server.call("/api/bots/add", { body: { token: token(121) } })).json
    await server.call("/api/bots/add", { body: { token: token(122) } })
    assertError(await server.call("/api/bots/update", { body: { id: 999999, name: "x" } }), 404, "bot_not_found")
    assertError(await server.call("/api/bots/update", { body: { id: a.id, token: token(122) } }), 409, "duplicate_token")
    assertError(await server.call("/api/bots/update", { body: { id: a.id, proxy_enabled: true } }), 400, "invalid_request")
    assertError(await server.call("/api/bots/update", { body: { name: "no id" } }), 400, "invalid_request")
    const unchanged = (await server.call("/api/bots")).json.find((b: any) => b.id === a.id)
    assert.strictEqual(unchanged.token, "121:…xxxx")
    assert.strictEqual(unchanged.proxy_enabled, false)
  })
})

describe("POST /api/bots/delete", () => {
  it("removes the bot and its routes", async () => {
    const a = (await server.call("/api/bots/add", { body: { token: token(130) } })).json
    const b = (await server.call("/api/bots/add", { body: { token: token(131) } })).json
    const route = (await server.call("/api/routes/add", {
      body: { source_bot_id: a.id, target_bot_id: b.id, action: "copy" }
    })).json
    const reply = await server.call(`/api/bots/delete?id=${a.id}`, { method: "POST" })
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.json.id, a.id)
    assert.isUndefined((await server.call("/api/bots")).json.find((x: any) => x.id === a.id))
    assert.isUndefined((await server.call("/api/routes")).json.find((r: any) => r.id === route.id))
    assertError(await server.call(`/api/bots/delete?id=${a.id}`, { method: "POST" }), 404, "bot_not_found")
  })
})

describe("GET /api/bots/validate", () => {
  it("answers Telegram's getMe without registering", async () => {
    const tg = fake.addBot({ username: "valid_bot" })
    const before = (await server.call("/api/bots")).json.length
    const reply = await server.call(`/api/bots/validate?token=${encodeURIComponent(tg.token)}`)
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.json.id, tg.id)
    assert.strictEqual(reply.json.username, "valid_bot")
    assert.strictEqual(reply.json.is_bot, true)
    assert.strictEqual((await server.call("/api/bots")).json.length, before)
  })

  it("400 invalid_token when Telegram does not know it, 400 when missing", async () => {
    const reply = await server.call(`/api/bots/validate?token=${encodeURIComponent(token(999))}`)
    assertError(reply, 400, "invalid_token")
    assert.notInclude(reply.text, token(999))
    assertError(await server.call("/api/bots/validate"), 400, "invalid_request")
  })
})

describe("unknown paths", () => {
  it("404 JSON under /api", async () => {
    assertError(await server.call("/api/nope"), 404, "not_found")
    assertError(await server.call("/api/bots/nope", { method: "POST", body: {} }), 404, "not_found")
  })

  it("serves the OpenAPI document without a key", async () => {
    const reply = await server.call("/api/openapi.json", { key: null })
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.json.openapi.slice(0, 3), "3.1")
    for (
      const path of [
        "/api/bots",
        "/api/bots/add",
        "/api/messages",
        "/api/messages/send",
        "/api/tags/add",
        "/api/messages/send-media",
        "/api/messages/edit",
        "/api/chats/admins",
        "/api/chats/ban",
        "/api/media"
      ]
    ) {
      assert.property(reply.json.paths, path)
    }
  })
})
