import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { HttpExchange } from "@botrelay/telegram"
import { Duration, Effect, Either, Fiber, Layer, Option } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as NodeHttpExchange from "../src/NodeHttpExchange.js"

interface Seen {
  readonly method: string | undefined
  readonly url: string | undefined
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

const seen: Array<Seen> = []
const big = Buffer.alloc(300_000, 7)
const reply = `{"method":"sendMessage","chat_id":1,"text":"hi"}`
const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) })
    if (req.url === "/slow") return
    if (req.url === "/reply") {
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(reply)
    }
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

const implementations: ReadonlyArray<readonly [string, Layer.Layer<HttpExchange.HttpExchange>]> = [
  ["Http1Client", NodeHttpExchange.layer],
  ["the platform HttpClient", HttpExchange.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))]
]

const run = (layer: Layer.Layer<HttpExchange.HttpExchange>, request: HttpExchange.Request) =>
  Effect.runPromise(
    Effect.flatMap(HttpExchange.HttpExchange, (http) => Effect.either(http.exchange(request))).pipe(
      Effect.provide(layer),
      Effect.scoped
    )
  )

const failure = (reason: HttpExchange.HttpExchangeError["reason"], code: string | undefined, description: string) =>
  Either.left(new HttpExchange.HttpExchangeError({ reason, code, description }))

describe.each(implementations)("HttpExchange over %s", (_, layer) => {
  it("POSTs JSON text with the secret header and returns status, headers and body", async () => {
    seen.length = 0
    const answer = await run(layer, {
      method: "POST",
      url: `${root}/reply`,
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cr3t" },
      body: `{"update_id":7,"text":"é"}`,
      timeout: Duration.seconds(5)
    })
    const { headers, status } = Either.getOrThrow(answer)
    assert.strictEqual(status, 200)
    assert.strictEqual(headers["content-type"], "application/json")
    assert.strictEqual(HttpExchange.text(Either.getOrThrow(answer)), reply)
    assert.strictEqual(seen[0]?.method, "POST")
    assert.strictEqual(seen[0]?.body.toString("utf8"), `{"update_id":7,"text":"é"}`)
    assert.strictEqual(seen[0]?.headers["content-length"], String(seen[0]?.body.length))
    assert.strictEqual(seen[0]?.headers["content-type"], "application/json")
    assert.strictEqual(seen[0]?.headers["x-telegram-bot-api-secret-token"], "s3cr3t")
  })

  it("sends a GET with its query and no body", async () => {
    seen.length = 0
    const answer = await run(layer, { method: "GET", url: `${root}/bot1:t/getMe?a=1&b=%20x`, headers: {} })
    assert.isTrue(Either.isRight(answer))
    assert.strictEqual(seen[0]?.method, "GET")
    assert.strictEqual(seen[0]?.url, "/bot1:t/getMe?a=1&b=%20x")
    assert.strictEqual(seen[0]?.body.length, 0)
    assert.notProperty(seen[0]?.headers, "x-telegram-bot-api-secret-token")
  })

  it("sends body bytes as they are, and returns non-2xx answers with all their headers", async () => {
    seen.length = 0
    const body = new TextEncoder().encode(`{"chat_id":1,"text":"é ✓"}`)
    const answer = await run(layer, {
      method: "POST",
      url: `${root}/bot1:t/sendMessage`,
      headers: { "content-type": "application/json" },
      body
    })
    const { headers, status } = Either.getOrThrow(answer)
    assert.strictEqual(status, 429)
    assert.strictEqual(headers["content-type"], "application/json")
    assert.strictEqual(headers["x-extra"], "kept")
    assert.include(HttpExchange.text(Either.getOrThrow(answer)), `"retry_after":3`)
    assert.strictEqual(seen[0]?.headers["content-length"], String(body.length))
    assert.deepStrictEqual(new Uint8Array(seen[0]!.body), body)
  })

  it("reads answers whole, and fails past maxBytes", async () => {
    const whole = await run(layer, { method: "GET", url: `${root}/big`, headers: {} })
    assert.strictEqual(Either.getOrThrow(whole).body.length, big.length)
    const cut = await run(layer, { method: "GET", url: `${root}/big`, headers: {}, maxBytes: 100_000 })
    assert.deepStrictEqual(cut, failure("TooLarge", undefined, "the answer (HTTP 200) is larger than 100000 bytes"))
  })

  it("fails after the timeout, naming the timeout and not the URL", async () => {
    const answer = await run(layer, { method: "POST", url: `${root}/slow`, headers: {}, timeout: Duration.millis(200) })
    assert.deepStrictEqual(answer, failure("Timeout", undefined, "no answer within 200ms"))
  })

  it("drops the connection of a call whose fiber is interrupted, or that loses a race", async () => {
    const closed = () =>
      new Promise<void>((resolve) => server.once("request", (req) => req.socket.once("close", () => resolve())))
    const program = Effect.gen(function*() {
      const http = yield* HttpExchange.HttpExchange
      const slow = http.exchange({ method: "POST", url: `${root}/slow`, headers: {} })
      const first = closed()
      const fiber = yield* Effect.fork(slow)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => first)
      const second = closed()
      const raced = yield* Effect.timeoutOption(slow, Duration.millis(50))
      yield* Effect.promise(() => second)
      return raced
    }).pipe(Effect.provide(layer), Effect.scoped)
    assert.deepStrictEqual(await Effect.runPromise(program), Option.none())
  })

  it("fails on a refused connection with its code and nothing of the URL", async () => {
    const answer = await run(layer, { method: "POST", url: "http://127.0.0.1:9/bot1:secret/x", headers: {} })
    assert.deepStrictEqual(answer, failure("Request", "ECONNREFUSED", "the request failed (ECONNREFUSED)"))
    assert.notInclude(JSON.stringify(answer), "secret")
  })

  it("never reaches a loopback backend for a call that must reach public addresses", async () => {
    seen.length = 0
    const answer = await run(layer, { method: "POST", url: `${root}/reply`, headers: {}, addresses: "public" })
    assert.isTrue(Either.isLeft(answer))
    const error = Either.getLeft(answer).pipe(Option.getOrThrow)
    assert.strictEqual(error.code, HttpExchange.addressNotAllowedCode)
    assert.deepStrictEqual(seen, [])
  })
})
