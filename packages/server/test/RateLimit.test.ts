import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import * as Config from "../src/Config.js"
import { assertError, type Reply, replyOf, startServer, storages, type TestServer } from "./Harness.js"

const burst = 5

/** The RateLimit-* headers of an answer, as numbers; undefined when it has none. */
const limitOf = (reply: Reply) =>
  reply.headers.get("ratelimit-limit") === null ? undefined : {
    limit: Number(reply.headers.get("ratelimit-limit")),
    remaining: Number(reply.headers.get("ratelimit-remaining")),
    reset: Number(reply.headers.get("ratelimit-reset"))
  }

describe.each(storages)("/api rate limits (%s)", (storage) => {
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer
  let unlimited: TestServer
  let token: string
  const keys: Array<string> = []

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    // about one request refilled every 17 minutes: nothing refills within the test
    server = await startServer({
      storage,
      telegramApi: fake.apiRoot,
      flags: { "api-rate-limit": "0.001", "api-rate-burst": String(burst) }
    })
    unlimited = await startServer({ storage, telegramApi: fake.apiRoot })
    token = fake.addBot().token
    assert.strictEqual((await server.call("/api/bots/add", { body: { token } })).status, 200)
    for (const name of ["a", "b"]) {
      const created = await server.call("/api/auth/api-keys", { body: { name, role: "admin" } })
      assert.strictEqual(created.status, 200, created.text)
      keys.push(created.json.key)
    }
  })
  afterAll(async () => {
    await server?.close()
    await unlimited?.close()
    await fake?.close()
  })

  it("counts a key's requests in every answer and refuses the one past the burst with 429 and Retry-After", async () => {
    for (let left = burst - 1; left >= 0; left--) {
      const reply = await server.call("/api/bots", { key: keys[0]! })
      assert.strictEqual(reply.status, 200)
      const limit = limitOf(reply)!
      assert.deepInclude(limit, { limit: burst, remaining: left })
      assert.isTrue(Number.isInteger(limit.reset) && limit.reset >= 1)
    }
    const refused = await server.call("/api/bots", { key: keys[0]! })
    assertError(refused, 429, "rate_limited")
    assert.deepStrictEqual(Object.keys(refused.json).sort(), ["code", "error"])
    const retryAfter = Number(refused.headers.get("retry-after"))
    assert.isTrue(Number.isInteger(retryAfter) && retryAfter >= 1, String(retryAfter))
    assert.deepInclude(limitOf(refused), { limit: burst, remaining: 0 })
  })

  it("gives an account one bucket, whichever of its sessions calls", async () => {
    const password = "a long enough password"
    const created = await server.call("/api/accounts", { key: keys[1]!, body: { username: "rita", password, role: "admin" } })
    assert.strictEqual(created.status, 200, created.text)
    const sessions: Array<string> = []
    for (let i = 0; i < 2; i++) {
      const login = await server.call("/api/auth/login", { key: null, body: { username: "rita", password } })
      assert.strictEqual(login.status, 200, login.text)
      sessions.push(/botrelay_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1]!)
    }
    const me = async (session: string) =>
      limitOf(await replyOf(await fetch(`${server.baseUrl}/api/auth/me`, { headers: { cookie: `botrelay_session=${session}` } })))
    assert.deepInclude(await me(sessions[0]!), { limit: burst, remaining: burst - 1 })
    assert.deepInclude(await me(sessions[1]!), { limit: burst, remaining: burst - 2 })
  })

  it("keeps callers apart: another key, and anonymous clients by address; errors carry the headers too", async () => {
    const missing = await server.call("/api/bots/delete?id=999999", { method: "POST", key: keys[1]! })
    assertError(missing, 404, "bot_not_found")
    assert.deepInclude(limitOf(missing), { limit: burst, remaining: burst - 2 })
    const invalid = await server.call("/api/bots/delete?id=x", { method: "POST", key: keys[1]! })
    assert.strictEqual(invalid.status, 400)
    assert.deepInclude(limitOf(invalid), { remaining: burst - 3 })
    // answers no caller was found for (unknown paths, refused credentials) count against the client's address,
    // as the two sign-ins above did
    const unknown = await server.call("/api/nothing-here", { key: keys[1]! })
    assertError(unknown, 404, "not_found")
    assert.deepInclude(limitOf(unknown), { remaining: burst - 3 })
    for (let left = burst - 4; left >= 0; left--) {
      const reply = await server.call("/api/bots", { key: null })
      assertError(reply, 401, "unauthorized")
      assert.deepInclude(limitOf(reply), { limit: burst, remaining: left })
    }
    assertError(await server.call("/api/bots", { key: null }), 429, "rate_limited")
    assertError(await server.call("/api/bots", { key: "brk_not-a-key" }), 401, "unauthorized")
    assert.strictEqual((await server.call("/api/bots", { key: keys[1]! })).status, 200)
  })

  it("never limits /api/health, the OpenAPI document or /tgapi", async () => {
    for (let i = 0; i < burst * 2; i++) {
      for (const path of ["/api/health", "/api/openapi.json", `/tgapi/bot${token}/getMe`]) {
        const reply = await server.call(path, { key: null })
        assert.strictEqual(reply.status, 200, `${path}: ${reply.text.slice(0, 200)}`)
        assert.isUndefined(limitOf(reply), path)
      }
    }
  })

  it("0 turns the limit off", async () => {
    for (let i = 0; i < 120; i++) {
      const reply = await unlimited.call("/api/bots")
      assert.strictEqual(reply.status, 200)
      assert.isUndefined(limitOf(reply))
    }
  })
})

describe("BOTRELAY_API_RATE_LIMIT and BOTRELAY_API_RATE_BURST", () => {
  it("default to 20 a second in bursts of 100; 0 is no limit; bad values are refused", () => {
    assert.deepInclude(Config.fromValues({}, {}), { apiRateLimit: 20, apiRateBurst: 100 })
    assert.deepInclude(
      Config.fromValues({}, { BOTRELAY_API_RATE_LIMIT: "0.5", BOTRELAY_API_RATE_BURST: "3" }),
      { apiRateLimit: 0.5, apiRateBurst: 3 }
    )
    assert.deepInclude(Config.fromValues({ "api-rate-limit": "0" }, {}), { apiRateLimit: 0 })
    for (const value of ["-1", "x", "1e3", "2000000"]) {
      assert.throws(() => Config.fromValues({ "api-rate-limit": value }, {}), Config.ConfigError, /BOTRELAY_API_RATE_LIMIT/)
    }
    for (const value of ["0", "1.5", "-3", "many"]) {
      assert.throws(() => Config.fromValues({}, { BOTRELAY_API_RATE_BURST: value }), Config.ConfigError, /BOTRELAY_API_RATE_BURST/)
    }
  })
})
