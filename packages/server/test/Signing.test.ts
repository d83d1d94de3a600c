import { randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, startServer, storages, type TestServer } from "./Harness.js"

interface Received {
  readonly body: string
  readonly headers: IncomingHttpHeaders
}

/** A backend on 127.0.0.1 that records each POST and answers with `status()` (200 by default). */
const backend = async (status: () => number = () => 200) => {
  const received: Array<Received> = []
  const http: Server = createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => body += chunk)
    req.on("end", () => {
      received.push({ body, headers: req.headers })
      res.writeHead(status(), { "content-type": "text/plain" })
      res.end("")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

const secretOf = (bytes: number) => `whsec_${randomBytes(bytes).toString("base64")}`

const signatureHeaders = (headers: IncomingHttpHeaders) => ({
  "webhook-id": String(headers["webhook-id"]),
  "webhook-timestamp": String(headers["webhook-timestamp"]),
  "webhook-signature": String(headers["webhook-signature"])
})

describe.each(storages)("signed forwarding (%s)", (storage) => {
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    server = await startServer({ telegramApi: fake.apiRoot, storage })
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  it("refuses a malformed signing_secret with 400, changing nothing; never returns one", async () => {
    const tg = fake.addBot()
    const bad = [
      "secret",
      "whsec_",
      `whsec_${randomBytes(23).toString("base64")}`,
      `whsec_${randomBytes(65).toString("base64")}`,
      "whsec_not base64 at all!!",
      secretOf(32).slice(6)
    ]
    for (const signing_secret of bad) {
      const reply = await server.call("/api/bots/add", { body: { token: tg.token, signing_secret } })
      assertError(reply, 400, "invalid_request")
      assert.include(reply.json.error, "signing_secret")
      if (signing_secret.length > 12) assert.notInclude(reply.text, signing_secret.slice(6))
    }
    assert.isUndefined((await server.call("/api/bots")).json.find((b: any) => b.token.startsWith(`${tg.id}:`)))

    const secret = secretOf(24)
    const added = await server.call("/api/bots/add", { body: { token: tg.token, signing_secret: secret } })
    assert.strictEqual(added.status, 200, added.text)
    assert.isTrue(added.json.signing_secret_set)
    assert.notProperty(added.json, "signing_secret")
    assert.notInclude(added.text, secret)
    for (const signing_secret of bad) {
      const reply = await server.call("/api/bots/update", { body: { id: added.json.id, signing_secret } })
      assertError(reply, 400, "invalid_request")
    }
    const listed = await server.call("/api/bots")
    assert.notInclude(listed.text, secret)
    assert.isTrue(listed.json.find((b: any) => b.id === added.json.id).signing_secret_set)
    const longest = await server.call("/api/bots/update", { body: { id: added.json.id, signing_secret: secretOf(64) } })
    assert.strictEqual(longest.status, 200, longest.text)
    const cleared = await server.call("/api/bots/update", { body: { id: added.json.id, signing_secret: "" } })
    assert.isFalse(cleared.json.signing_secret_set)
    await server.call(`/api/bots/delete?id=${added.json.id}`, { method: "POST" })
  })

  it("signs backend POSTs verifiably beside the secret token; retries keep the webhook-id; clearing stops signing", async () => {
    let failures = 2
    const hook = await backend(() => failures-- > 0 ? 500 : 200)
    try {
      const tg = fake.addBot()
      const secret = secretOf(32)
      const added = await server.call("/api/bots/add", {
        body: { token: tg.token, backend_url: hook.url, proxy_enabled: true, secret_token: "tg-secret", signing_secret: secret }
      })
      assert.strictEqual(added.status, 200, added.text)
      await fake.waitForPoll(tg.id)
      fake.userSends(tg.id, { text: "signed" })
      await eventually(() => hook.received.length === 3 || undefined)
      const [delivery] = (await server.call(`/api/bots/deliveries?bot_id=${added.json.id}`)).json
      const ids = hook.received.map((r) => r.headers["webhook-id"])
      assert.deepStrictEqual(ids, [`msg_${delivery.id}`, `msg_${delivery.id}`, `msg_${delivery.id}`])
      const verifier = new Webhook(secret)
      for (const received of hook.received) {
        assert.strictEqual(received.headers["x-telegram-bot-api-secret-token"], "tg-secret")
        assert.match(String(received.headers["webhook-signature"]), /^v1,/)
        const now = Math.floor(Date.now() / 1000)
        assert.approximately(Number(received.headers["webhook-timestamp"]), now, 30)
        const verified = verifier.verify(received.body, signatureHeaders(received.headers)) as any
        assert.strictEqual(verified.message.text, "signed")
      }
      assert.throws(() => new Webhook(secretOf(32)).verify(hook.received[0]!.body, signatureHeaders(hook.received[0]!.headers)))

      await server.call("/api/bots/update", { body: { id: added.json.id, signing_secret: "" } })
      fake.userSends(tg.id, { text: "unsigned" })
      await eventually(() => hook.received.length === 4 || undefined)
      assert.notProperty(hook.received[3]!.headers, "webhook-signature")
      assert.notProperty(hook.received[3]!.headers, "webhook-id")
      assert.strictEqual(hook.received[3]!.headers["x-telegram-bot-api-secret-token"], "tg-secret")

      const logs = server.logs.join("\n")
      assert.notInclude(logs, secret)
      assert.notInclude(logs, secret.slice(6))
    } finally {
      await hook.close()
    }
  })
})
