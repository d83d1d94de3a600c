import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { HttpPost } from "@botrelay/telegram"
import { Duration, Effect, Either, Layer } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as NodeHttpPost from "../src/NodeHttpPost.js"

interface Seen {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

const seen: Array<Seen> = []
const server = createServer((req, res) => {
  let body = ""
  req.on("data", (chunk) => body += chunk)
  req.on("end", () => {
    seen.push({ headers: req.headers, body })
    if (req.url === "/slow") return
    if (req.url === "/reply") {
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(`{"method":"sendMessage","chat_id":1,"text":"hi"}`)
    }
    res.writeHead(req.url === "/fail" ? 502 : 200)
    res.end()
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

const implementations: ReadonlyArray<readonly [string, Layer.Layer<HttpPost.HttpPost>]> = [
  ["node:http", NodeHttpPost.layer],
  ["the platform HttpClient", HttpPost.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))]
]

const post = (layer: Layer.Layer<HttpPost.HttpPost>, url: string, headers: Record<string, string>, timeout: Duration.Duration) =>
  Effect.runPromise(
    Effect.flatMap(HttpPost.HttpPost, (http) =>
      Effect.either(http.post({ url, body: `{"update_id":7,"text":"é"}`, headers, timeout }))
    ).pipe(Effect.provide(layer), Effect.scoped)
  )

describe.each(implementations)("HttpPost over %s", (_, layer) => {
  const postTo = (path: string, secret = "", timeout = Duration.seconds(5)) =>
    post(layer, `${root}${path}`, {
      "content-type": "application/json",
      ...(secret === "" ? {} : { "x-telegram-bot-api-secret-token": secret })
    }, timeout)

  it("POSTs the JSON with the secret header and returns status, body and content type", async () => {
    seen.length = 0
    const answer = await postTo("/reply", "s3cr3t")
    assert.deepStrictEqual(answer, Either.right({
      status: 200,
      body: `{"method":"sendMessage","chat_id":1,"text":"hi"}`,
      contentType: "application/json"
    }))
    assert.strictEqual(seen[0]?.body, `{"update_id":7,"text":"é"}`)
    assert.strictEqual(seen[0]?.headers["content-type"], "application/json")
    assert.strictEqual(seen[0]?.headers["x-telegram-bot-api-secret-token"], "s3cr3t")
  })

  it("sends no secret header without a secret, and reports non-2xx answers as answers", async () => {
    seen.length = 0
    const answer = await postTo("/fail")
    assert.isTrue(Either.isRight(answer) && answer.right.status === 502)
    assert.notProperty(seen[0]?.headers, "x-telegram-bot-api-secret-token")
  })

  it("fails after the timeout, naming the timeout and not the URL", async () => {
    const answer = await postTo("/slow", "", Duration.millis(200))
    assert.deepStrictEqual(answer, Either.left(new HttpPost.HttpPostError({ reason: "Timeout", description: "no answer within 200ms" })))
  })

  it("fails on a refused connection without naming the URL", async () => {
    const answer = await post(layer, "http://127.0.0.1:9/hook", {}, Duration.seconds(5))
    assert.deepStrictEqual(
      answer,
      Either.left(new HttpPost.HttpPostError({ reason: "Transport", description: "the request failed (ECONNREFUSED)" }))
    )
  })
})
