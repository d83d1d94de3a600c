import { FetchHttpClient, HttpApiBuilder, HttpServer } from "@effect/platform"
import { ApiKeys, Runtime } from "@botrelay/core"
import { App, TgApi } from "@botrelay/http"
import { SqliteStores } from "@botrelay/sqlite"
import { HttpExchange } from "@botrelay/telegram"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"

const instanceId = "web-1"

const services = Runtime.layer({ telegramApi: "http://127.0.0.1:9", instanceId }).pipe(
  Layer.provideMerge(SqliteStores.layer({ filename: ":memory:" })),
  Layer.provideMerge(HttpExchange.layer),
  Layer.provideMerge(TgApi.upstream("http://127.0.0.1:9")),
  Layer.provideMerge(FetchHttpClient.layer)
)

const secret = `brk_${"w".repeat(43)}`
const admin = Layer.effectDiscard(
  Effect.flatMap(ApiKeys.ApiKeys, (keys) => keys.ensureAdmin(Redacted.make(secret), "test"))
)

let web: { readonly handler: (request: Request) => Promise<Response>; readonly dispose: () => Promise<void> }

beforeAll(() => {
  web = HttpApiBuilder.toWebHandler(
    Layer.mergeAll(App.layer, admin, HttpServer.layerContext).pipe(Layer.provideMerge(services)),
    { middleware: App.withBodyLimit }
  )
})
afterAll(() => web.dispose())

const request = (path: string, init: RequestInit = {}) =>
  web.handler(new Request(`http://botrelay.test${path}`, init))

describe("the API as a web handler on in-memory storage", () => {
  it("serves the contract without a socket or SQLite", async () => {
    const auth = { authorization: `Bearer ${secret}` }
    const added = await request("/api/bots/add", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ token: "1:web" })
    })
    assert.strictEqual(added.status, 200)
    const list = await (await request("/api/bots", { headers: auth })).json()
    assert.deepStrictEqual(list.map((b: { token: string }) => b.token), ["1:…"])
    const unauthorized = await request("/api/bots")
    assert.strictEqual(unauthorized.status, 401)
    assert.deepStrictEqual(await unauthorized.json(), {
      error: "missing API key or session: send Authorization: Bearer <key>, or sign in",
      code: "unauthorized"
    })
  })

  it("names the instance on every answer, and GET /api/status shows it", async () => {
    const auth = { authorization: `Bearer ${secret}` }
    const answers = await Promise.all([
      request("/api/health"),
      request("/api/bots"),
      request("/api/nowhere", { headers: auth }),
      request("/api/bots/add", { method: "POST", headers: auth, body: "{" }),
      request("/telegram/webhook/999", { method: "POST", body: "{}" }),
      request("/tgapi/bot1:unknown/getMe"),
      request("/api/status", { headers: auth })
    ])
    assert.deepStrictEqual(
      answers.map((response) => [response.status, response.headers.get("x-botrelay-instance")]),
      [200, 401, 404, 400, 404, 401, 200].map((status) => [status, instanceId])
    )
    const status = await answers[6].json()
    assert.strictEqual(status.self, instanceId)
    assert.deepStrictEqual(status.instances.map((i: { id: string }) => i.id), [instanceId])
  })

  it("reads a multipart send-media past the 1 MiB limit as a stream: its fields decide first", async () => {
    const form = new FormData()
    form.append("bot_id", "424242")
    form.append("chat_id", "1")
    form.append("type", "document")
    form.append("file", new Blob([new Uint8Array(2 * 1024 * 1024)]), "big.bin")
    const response = await request("/api/messages/send-media", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}` },
      body: form
    })
    assert.strictEqual(response.status, 404)
    assert.strictEqual((await response.json()).code, "bot_not_found")
  })

  it("serves the LLM settings on in-memory storage", async () => {
    const auth = { authorization: `Bearer ${secret}`, "content-type": "application/json" }
    const set = await request("/api/llm", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ base_url: "http://llm.test/v1", model: "m", api_key: "sk-web-0123456789" })
    })
    assert.strictEqual(set.status, 200)
    const read = await (await request("/api/llm", { headers: auth })).json()
    assert.deepStrictEqual(read, {
      base_url: "http://llm.test/v1",
      model: "m",
      timeout_ms: 10000,
      api_key: "sk-…6789",
      configured: true,
      fixed: []
    })
  })

  it("documents every endpoint in OpenAPI with the { error, code } error body", async () => {
    const spec = await (await request("/api/openapi.json")).json()
    const paths = Object.keys(spec.paths).sort()
    assert.deepStrictEqual(paths, [
      "/api/accounts",
      "/api/accounts/delete",
      "/api/accounts/password",
      "/api/accounts/update",
      "/api/audit",
      "/api/auth/api-keys",
      "/api/auth/api-keys/delete",
      "/api/auth/api-keys/toggle",
      "/api/auth/api-keys/update",
      "/api/auth/login",
      "/api/auth/logout",
      "/api/auth/me",
      "/api/bots",
      "/api/bots/add",
      "/api/bots/delete",
      "/api/bots/deliveries",
      "/api/bots/deliveries/discard",
      "/api/bots/deliveries/replay",
      "/api/bots/deliveries/retry",
      "/api/bots/toggle-disabled",
      "/api/bots/update",
      "/api/bots/validate",
      "/api/bridges",
      "/api/bridges/add",
      "/api/bridges/delete",
      "/api/bridges/update",
      "/api/canned-replies",
      "/api/canned-replies/add",
      "/api/canned-replies/delete",
      "/api/canned-replies/render",
      "/api/canned-replies/update",
      "/api/chats",
      "/api/chats/admin-title",
      "/api/chats/admins",
      "/api/chats/ban",
      "/api/chats/counts",
      "/api/chats/demote",
      "/api/chats/get",
      "/api/chats/leave",
      "/api/chats/promote",
      "/api/chats/read",
      "/api/chats/refresh",
      "/api/chats/restrict",
      "/api/chats/timeline",
      "/api/chats/unban",
      "/api/chats/update",
      "/api/config/export",
      "/api/config/import",
      "/api/deliveries",
      "/api/deliveries/discard",
      "/api/deliveries/replay",
      "/api/deliveries/retry",
      "/api/events",
      "/api/health",
      "/api/llm",
      "/api/media",
      "/api/messages",
      "/api/messages/delete",
      "/api/messages/edit",
      "/api/messages/pin",
      "/api/messages/resolve-delivery",
      "/api/messages/send",
      "/api/messages/send-media",
      "/api/messages/unpin",
      "/api/notes",
      "/api/notes/add",
      "/api/notes/delete",
      "/api/notes/update",
      "/api/people",
      "/api/people/get",
      "/api/routes",
      "/api/routes/add",
      "/api/routes/delete",
      "/api/routes/sends",
      "/api/routes/update",
      "/api/search",
      "/api/stats",
      "/api/status",
      "/api/tags",
      "/api/tags/add",
      "/api/tags/remove",
      "/api/updates/poll"
    ])
    const notFound = spec.components.schemas.NotFound
    assert.deepStrictEqual([...notFound.required].sort(), ["code", "error"])
    assert.notProperty(notFound.properties, "_tag")
    assert.property(spec.components.securitySchemes, "bearer")
    assert.deepStrictEqual(spec.paths["/api/search"].get.security, spec.paths["/api/messages"].get.security)
    assert.notProperty(spec.components.schemas, "HttpApiDecodeError")
    assert.notInclude(JSON.stringify(spec.paths), "HttpApiDecodeError")
    const sendMedia = spec.paths["/api/messages/send-media"].post.requestBody.content
    assert.deepStrictEqual(Object.keys(sendMedia).sort(), ["application/json", "multipart/form-data"])
    assert.property(sendMedia["multipart/form-data"].schema.properties, "file")
    assert.property(spec.paths["/api/media"].get.responses["200"].content, "application/octet-stream")
  })
})
