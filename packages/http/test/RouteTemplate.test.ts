import { assert, describe, it } from "vitest"
import * as RouteTemplate from "../src/RouteTemplate.js"

describe("RouteTemplate", () => {
  it("names API endpoints by their path, with or without a query or a trailing slash", () => {
    assert.strictEqual(RouteTemplate.of("GET", "/api/bots"), "/api/bots")
    assert.strictEqual(RouteTemplate.of("GET", "/api/bots/?x=1"), "/api/bots")
    assert.strictEqual(RouteTemplate.of("POST", "/api/bots/deliveries/retry?id=3"), "/api/bots/deliveries/retry")
    assert.strictEqual(RouteTemplate.of("GET", "/api/openapi.json"), "/api/openapi.json")
  })

  it("never keeps a token of /tgapi or an id of the webhook ingress", () => {
    const token = "123456:AAHfake-token_value"
    assert.strictEqual(RouteTemplate.of("POST", `/tgapi/bot${token}/sendMessage`), "/tgapi/bot{token}/{method}")
    assert.strictEqual(RouteTemplate.of("GET", `/tgapi/file/bot${token}/photos/a.jpg`), "/tgapi/file/bot{token}/{path}")
    assert.strictEqual(RouteTemplate.of("POST", "/telegram/webhook/42"), "/telegram/webhook/{bot_id}")
    assert.strictEqual(RouteTemplate.of("GET", `/api/bots/validate?token=${token}`), "/api/bots/validate")
  })

  it("puts everything else under unmatched, or the console where it is served", () => {
    assert.strictEqual(RouteTemplate.of("GET", "/api/nope"), "unmatched")
    assert.strictEqual(RouteTemplate.of("GET", "/tgapi/bot123"), "unmatched")
    assert.strictEqual(RouteTemplate.of("GET", "/chats/1"), "unmatched")
    assert.strictEqual(RouteTemplate.of("GET", "/chats/1", { console: true }), "/{console}")
    assert.strictEqual(RouteTemplate.of("POST", "/chats/1", { console: true }), "unmatched")
    assert.strictEqual(RouteTemplate.of("GET", "/api/nope", { console: true }), "unmatched")
  })
})
