import { connect, type Socket } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { eventually, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({
    telegramApi: fake.apiRoot,
    flags: { "http-body-timeout": "1", "http-headers-timeout": "1", "http-max-connections": "8" }
  })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

/** A connection to the server, with everything it has received so far and whether it closed. */
const open = async () => {
  const { port } = new URL(server.baseUrl)
  const socket: Socket = connect(Number(port), "127.0.0.1")
  const state = { received: "", closed: false }
  socket.setEncoding("utf8")
  socket.on("data", (chunk: string) => void (state.received += chunk))
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()))
  socket.on("close", () => void (state.closed = true))
  socket.on("error", () => {})
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  return { socket, state, closed }
}

const chunkedBody = (bytes: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      const chunk = new TextEncoder().encode("x".repeat(64 * 1024))
      for (let sent = 0; sent < bytes; sent += chunk.length) controller.enqueue(chunk)
      controller.close()
    }
  })

describe("request limits", () => {
  it("answers a chunked body over 1 MiB with a 413 the client reads, on /api and the webhook ingress", async () => {
    for (const path of ["/api/tags/add", "/api/bots/add", "/telegram/webhook/1"]) {
      const response = await fetch(`${server.baseUrl}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.adminKey}`, "content-type": "application/json" },
        body: chunkedBody(1024 * 1024 + 64 * 1024),
        duplex: "half"
      } as RequestInit)
      assert.strictEqual(response.status, 413, path)
      assert.deepStrictEqual(await response.json(), {
        error: "request body is larger than 1048576 bytes",
        code: "payload_too_large"
      })
    }
    assert.deepStrictEqual((await server.call("/api/bots")).json, [])
  })

  it("still reads chunked bodies within the limit", async () => {
    const tg = fake.addBot()
    const body = JSON.stringify({ token: tg.token, name: "chunked" })
    const response = await fetch(`${server.baseUrl}/api/bots/add`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminKey}`, "content-type": "application/json" },
      body: new Blob([body]).stream(),
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(response.status, 200)
    assert.strictEqual((await response.json()).name, "chunked")
  })

  it("answers 408 to a body that does not arrive in time, and closes the connection", async () => {
    const { socket, state, closed } = await open()
    socket.write(
      `POST /api/tags/add HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.adminKey}\r\n` +
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"chat_id\":"
    )
    await closed
    assert.match(state.received, /^HTTP\/1\.1 408 /)
    assert.include(state.received, `"code":"request_timeout"`)
  })

  it("closes a connection whose headers do not arrive in time", async () => {
    const { socket, state, closed } = await open()
    socket.write("GET /api/health HTTP/1.1\r\nHost: x\r\n")
    await closed
    assert.isTrue(state.closed)
    assert.notMatch(state.received, /^HTTP\/1\.1 200/)
  })

  it("accepts at most the configured number of connections", async () => {
    const held = await Promise.all(Array.from({ length: 8 }, () => open()))
    const extra = await open()
    await extra.closed
    assert.strictEqual(extra.state.received, "")
    held[0]!.socket.destroy()
    await held[0]!.closed
    const health = await eventually(() =>
      fetch(`${server.baseUrl}/api/health`, { headers: { connection: "close" } }).then((r) => r.status, () => undefined)
    )
    assert.strictEqual(health, 200)
    for (const connection of held) connection.socket.destroy()
  })

  it("refuses bad limit settings with a message naming the setting", async () => {
    for (
      const flags of [
        { "http-max-connections": "0" },
        { "http-body-timeout": "soon" },
        { "http-headers-timeout": "-1" },
        { "http-request-timeout": "1.5" }
      ]
    ) {
      const started = startServer({ flags })
      const error = await started.then((s) => s.close().then(() => undefined), (e: Error) => e)
      assert.instanceOf(error, Error, JSON.stringify(flags))
      assert.match(error.message, /BOTRELAY_HTTP_/)
    }
  })

  it("answers JSON nested too deep with a 400 in every shape, and logs no error", async () => {
    const errorsBefore = server.logs.filter((l) => JSON.parse(l).logLevel === "ERROR").length
    const deep = (n: number, open: string, close: string, inner = "1") => open.repeat(n) + inner + close.repeat(n)
    const bodies = [
      deep(100_000, "[", "]"),
      deep(50_000, "{\"a\":", "}"),
      `{"chat_id":1,"x":${deep(65, "[", "]")}}`,
      `{"bot_id":1,"chat_id":1,"user_id":1,"tag":"a","color":${deep(200, "{\"b\":[", "]}")}}`,
      deep(65, "[", "]").replace("1", "") + "garbage"
    ]
    for (const path of ["/api/tags/add", "/api/bots/add", "/api/messages/send", "/telegram/webhook/1"]) {
      for (const raw of bodies) {
        const reply = await server.call(path, { raw })
        assert.strictEqual(reply.status, 400, `${path} ${raw.slice(0, 20)}`)
        assert.strictEqual(reply.json.code, "invalid_json")
      }
    }
    const shallow = `{"bot_id":1,"chat_id":1,"user_id":1,"tag":"${"[".repeat(60)}","x":${deep(60, "[", "]")}}`
    assert.notStrictEqual((await server.call("/api/tags/add", { raw: shallow })).json?.code, "invalid_json")
    const errorsAfter = server.logs.filter((l) => JSON.parse(l).logLevel === "ERROR").length
    assert.strictEqual(errorsAfter, errorsBefore)
  })

  it("never echoes the value it refused in a validation error (a token pasted in the wrong field)", async () => {
    const secret = "7000000002:AAsecret-pasted-in-a-field"
    const replies = [
      await server.call(`/api/bots/deliveries/retry?id=${encodeURIComponent(secret)}`, { method: "POST" }),
      await server.call(`/api/tags?chat_id=${encodeURIComponent(secret)}`),
      await server.call(`/api/messages?bot_id=1&chat_id=1&limit=${encodeURIComponent(secret)}`),
      await server.call("/api/tags/add", { body: { bot_id: secret, chat_id: 1, user_id: 1, tag: "a" } }),
      await server.call("/api/routes/add", { body: { source_bot_id: 1, target_bot_id: 1, action: secret } }),
      await server.call("/api/auth/api-keys", { body: { name: "x", role: secret } })
    ]
    for (const reply of replies) {
      assert.strictEqual(reply.status, 400, reply.text)
      assert.strictEqual(reply.json.code, "invalid_request")
      assert.notInclude(reply.text, "AAsecret")
      assert.notInclude(reply.text, "actual")
    }
    assert.deepStrictEqual(replies[1]!.json.details, [{ path: "chat_id", message: "must be a number" }])
  })

  it("never echoes a path that could hold a token in a 404", async () => {
    const token = "123456:AAsecret-token-in-a-path_xyz"
    for (
      const path of [
        `/api/../tgapi/bot${token}/getMe`,
        `/api/bot${token}/getMe`,
        `/api/x/${encodeURIComponent(token)}`,
        `/bot${token}/getMe`,
        `/telegram/bot${token}`,
        `//api/${token}`
      ]
    ) {
      const reply = await rawGet(path)
      assert.strictEqual(reply.status, 404, path)
      assert.notInclude(reply.text, "secret-token", path)
      assert.notInclude(reply.text, "123456", path)
    }
    const typo = await rawGet("/api/botz")
    assert.include(typo.text, "/api/botz")
  })
})

/** A GET sent with its path exactly as written. */
const rawGet = async (path: string) => {
  const { socket, state, closed } = await open()
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.adminKey}\r\nConnection: close\r\n\r\n`)
  await closed
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(state.received)?.[1] ?? 0)
  return { status, text: state.received }
}
