import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Exchange } from "@botrelay/http"
import { Effect, Either, Layer } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as NodeExchange from "../src/NodeExchange.js"

interface Seen {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

const seen: Array<Seen> = []
const big = Buffer.alloc(300_000, 7)
const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) })
    if (req.url === "/big") {
      res.writeHead(200, { "content-type": "application/octet-stream" })
      return res.end(big)
    }
    res.writeHead(429, { "content-type": "application/json", "x-extra": "kept" })
    res.end(`{"ok":false,"error_code":429,"description":"Too Many Requests","parameters":{"retry_after":3}}`)
  })
})
let root = ""

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const implementations: ReadonlyArray<readonly [string, Layer.Layer<Exchange.Exchange>]> = [
  ["node:http", NodeExchange.layer],
  ["the platform HttpClient", Exchange.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))]
]

const run = (layer: Layer.Layer<Exchange.Exchange>, request: Exchange.Request, maxBytes = 1_000_000) =>
  Effect.runPromise(
    Effect.flatMap(Exchange.Exchange, (client) => Effect.either(client.exchange(request, maxBytes))).pipe(
      Effect.provide(layer),
      Effect.scoped
    )
  )

describe.each(implementations)("Exchange over %s", (_, layer) => {
  it("sends method, query, content type and body bytes, and returns status, headers and body", async () => {
    seen.length = 0
    const body = new TextEncoder().encode(`{"chat_id":1,"text":"é ✓"}`)
    const answer = await run(layer, {
      method: "POST",
      url: `${root}/bot1:t/sendMessage?a=1&b=%20x`,
      headers: { "content-type": "application/json" },
      body
    })
    assert.isTrue(Either.isRight(answer))
    const { body: text, headers, status } = Either.getOrThrow(answer)
    assert.strictEqual(status, 429)
    assert.strictEqual(headers["content-type"], "application/json")
    assert.strictEqual(headers["x-extra"], "kept")
    assert.include(new TextDecoder().decode(text), `"retry_after":3`)
    assert.strictEqual(seen[0]?.method, "POST")
    assert.strictEqual(seen[0]?.url, "/bot1:t/sendMessage?a=1&b=%20x")
    assert.strictEqual(seen[0]?.headers["content-type"], "application/json")
    assert.strictEqual(seen[0]?.headers["content-length"], String(body.length))
    assert.deepStrictEqual(new Uint8Array(seen[0]!.body), body)
  })

  it("sends a GET without a body", async () => {
    seen.length = 0
    const answer = await run(layer, { method: "GET", url: `${root}/bot1:t/getMe`, headers: {}, body: undefined })
    assert.isTrue(Either.isRight(answer))
    assert.strictEqual(seen[0]?.method, "GET")
    assert.strictEqual(seen[0]?.body.length, 0)
  })

  it("reads answers whole, and fails past maxBytes", async () => {
    const whole = await run(layer, { method: "GET", url: `${root}/big`, headers: {}, body: undefined })
    assert.strictEqual(Either.getOrThrow(whole).body.length, big.length)
    const cut = await run(layer, { method: "GET", url: `${root}/big`, headers: {}, body: undefined }, 100_000)
    assert.deepStrictEqual(cut, Either.left(new Exchange.ExchangeError({ phase: "answer", code: undefined })))
  })

  it("fails on a refused connection with its code and nothing of the URL", async () => {
    const refused = { method: "POST", url: "http://127.0.0.1:9/bot1:secret/x", headers: {}, body: undefined }
    const answer = await run(layer, refused)
    assert.deepStrictEqual(answer, Either.left(new Exchange.ExchangeError({ phase: "request", code: "ECONNREFUSED" })))
  })
})
