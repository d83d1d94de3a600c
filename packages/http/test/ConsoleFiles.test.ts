import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { ConsoleFiles } from "@botrelay/http"
import { Option } from "effect"
import { assert, describe, it } from "vitest"
import { gzipSync } from "node:zlib"

const encode = (text: string) => new TextEncoder().encode(text)
const index = `<!doctype html><html><head><base href="/" /><script src="./assets/app-1a2b.js"></script></head></html>`
const script = encode("console.log('app')".repeat(50))
const files = [
  ["index.html", encode(index)],
  ["assets/app-1a2b.js", script],
  ["assets/app-1a2b.js.gz", gzipSync(script)],
  ["robots.txt", encode("User-agent: *")]
] as const

const respond = async (served: ConsoleFiles.ConsoleFiles["Type"], path: string, init: RequestInit = {}) => {
  const answer = served.respond(HttpServerRequest.fromWeb(new Request(`http://botrelay.test${path}`, init)))
  return Option.isNone(answer) ? undefined : HttpServerResponse.toWeb(answer.value)
}

describe("ConsoleFiles", () => {
  const served = ConsoleFiles.make(files)

  it("answers pages with index.html, never cached without asking", async () => {
    for (const path of ["/", "/chats", "/chats/1/2?message=3", "/sign-in", "/missing.png"]) {
      const page = (await respond(served, path))!
      assert.strictEqual(page.status, 200, path)
      assert.strictEqual(page.headers.get("cache-control"), "no-cache")
      assert.strictEqual(page.headers.get("content-type"), "text/html; charset=utf-8")
      assert.strictEqual(await page.text(), index)
    }
  })

  it("answers hashed assets as immutable, gzip-encoded to clients that accept it", async () => {
    const plain = (await respond(served, "/assets/app-1a2b.js"))!
    assert.strictEqual(plain.headers.get("cache-control"), "public, max-age=31536000, immutable")
    assert.strictEqual(plain.headers.get("content-encoding"), null)
    assert.deepStrictEqual(new Uint8Array(await plain.arrayBuffer()), script)
    const zipped = (await respond(served, "/assets/app-1a2b.js", { headers: { "accept-encoding": "gzip, br" } }))!
    assert.strictEqual(zipped.headers.get("content-encoding"), "gzip")
    assert.strictEqual(zipped.headers.get("vary"), "accept-encoding")
    assert.isBelow(Number((await zipped.arrayBuffer()).byteLength), script.length)
  })

  it("answers 304 to a current validator, and HEAD without a body", async () => {
    const first = (await respond(served, "/robots.txt"))!
    assert.strictEqual(first.headers.get("cache-control"), "no-cache")
    const etag = first.headers.get("etag")!
    const again = (await respond(served, "/robots.txt", { headers: { "if-none-match": etag } }))!
    assert.strictEqual(again.status, 304)
    const head = (await respond(served, "/assets/app-1a2b.js", { method: "HEAD" }))!
    assert.strictEqual(head.status, 200)
    assert.strictEqual(head.headers.get("content-length"), String(script.length))
    assert.strictEqual((await head.arrayBuffer()).byteLength, 0)
  })

  it("leaves the API, the proxy, webhooks, metrics and other methods alone", async () => {
    for (
      const path of ["/api/bots", "/api", "//api/x", "/tgapi/bot1:x/getMe", "/telegram/webhook/1", "/metrics", "/bot12:AAx/getMe"]
    ) {
      assert.isUndefined(await respond(served, path), path)
    }
    assert.isUndefined(await respond(served, "/chats", { method: "POST", body: "{}" }))
    assert.isDefined(await respond(served, "/apis"))
  })

  it("points <base href> at the embed prefix", async () => {
    const embedded = ConsoleFiles.make(files, "/botrelay")
    const page = (await respond(embedded, "/chats"))!
    assert.include(await page.text(), `<base href="/botrelay/" />`)
  })

  it("serves nothing without an index.html", async () => {
    assert.isUndefined(await respond(ConsoleFiles.make([["assets/a.js", script]]), "/"))
  })
})
