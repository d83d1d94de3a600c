import { readFileSync } from "node:fs"
import * as Https from "node:https"
import * as Net from "node:net"
import * as Os from "node:os"
import type * as Tls from "node:tls"
import { HttpExchange } from "@botrelay/telegram"
import { afterAll, afterEach, assert, beforeAll, beforeEach, describe, it } from "vitest"
import * as Http1Client from "../src/Http1Client.js"

/** How the raw server answers a request: the request's text (head and body) and its socket. */
type Responder = (request: string, socket: Net.Socket) => void

let respond: Responder = () => {}
let connections = 0
const received: Array<string> = []
const sockets = new Set<Net.Socket>()

/** A server that speaks raw bytes, so the tests can send answers node:http never would. */
const server = Net.createServer((socket) => {
  connections++
  sockets.add(socket)
  socket.on("close", () => sockets.delete(socket))
  let pending = ""
  socket.on("data", (chunk) => {
    pending += chunk.toString("latin1")
    for (;;) {
      const end = pending.indexOf("\r\n\r\n")
      if (end === -1) return
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(pending.slice(0, end))?.[1] ?? 0)
      if (pending.length < end + 4 + length) return
      const request = pending.slice(0, end + 4 + length)
      pending = pending.slice(request.length)
      received.push(request)
      respond(request, socket)
    }
  })
  socket.on("error", () => {})
})
let root = ""
let client = Http1Client.make()

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  root = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
})
beforeEach(() => {
  client = Http1Client.make()
})
afterEach(() => {
  client.close()
  for (const socket of sockets) socket.destroy()
  received.length = 0
  connections = 0
})
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const call = (request: Partial<HttpExchange.Request> = {}, on: Http1Client.Client = client) =>
  new Promise<{ failure?: HttpExchange.HttpExchangeError; answer?: Http1Client.Answer }>((resolve) => {
    on.request(
      { method: "POST", url: `${root}/bot1:secret/sendMessage`, headers: {}, body: "{}", timeout: 2_000, maxBytes: 1e6, ...request },
      (failure, answer) => resolve(failure === undefined ? { answer: answer! } : { failure })
    )
  })

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`

/** Writes the bytes one at a time, each in its own packet. */
const trickle = async (socket: Net.Socket, text: string) => {
  for (const byte of Buffer.from(text)) {
    socket.write(Buffer.of(byte))
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

describe("Http1Client", () => {
  it("sends the method, path, host, headers and body as one request, and keeps the connection for the next", async () => {
    respond = (_, socket) => socket.write(ok(`{"ok":true}`, "x-twice: a\r\nX-Twice: b\r\n"))
    const first = await call({ headers: { "content-type": "application/json", "x-secret": "s" }, body: `{"text":"é"}` })
    const second = await call({ method: "GET", url: `${root}/bot1:secret/getMe?a=1`, body: undefined })
    assert.strictEqual(first.answer?.status, 200)
    assert.strictEqual(first.answer?.body.toString(), `{"ok":true}`)
    assert.strictEqual(first.answer?.headers["x-twice"], "a, b")
    assert.strictEqual(second.answer?.status, 200)
    assert.strictEqual(connections, 1)
    const [head, body] = received[0]!.split("\r\n\r\n")
    assert.deepStrictEqual(head!.split("\r\n"), [
      "POST /bot1:secret/sendMessage HTTP/1.1",
      `host: ${root.slice(7)}`,
      "content-type: application/json",
      "x-secret: s",
      `content-length: ${Buffer.byteLength(`{"text":"é"}`)}`
    ])
    assert.strictEqual(Buffer.from(body!, "latin1").toString("utf8"), `{"text":"é"}`)
    assert.match(received[1]!, /^GET \/bot1:secret\/getMe\?a=1 HTTP\/1\.1\r\nhost: [^\r]+\r\n\r\n$/)
  })

  it("sends a header's Latin-1 bytes as they are and a text body as UTF-8, small or large", async () => {
    respond = (_, socket) => socket.write(ok(`{"ok":true}`))
    const large = `{"text":"${"é".repeat(20_000)}"}`
    for (const body of [`{"text":"é"}`, large]) {
      received.length = 0
      assert.strictEqual((await call({ headers: { "x-name": "caf\xe9" }, body })).answer?.status, 200)
      const bytes = Buffer.from(received.join(""), "latin1")
      const end = bytes.indexOf("\r\n\r\n")
      const head = bytes.subarray(0, end).toString("latin1").split("\r\n")
      assert.ok(head.includes("x-name: caf\xe9"))
      assert.ok(head.includes(`content-length: ${Buffer.byteLength(body)}`))
      assert.strictEqual(bytes.subarray(end + 4).toString("utf8"), body)
    }
  })

  it("sends each request the headers it carries, a headers object reused or not, and refuses one that is not valid", async () => {
    respond = (_, socket) => socket.write(ok("{}"))
    const shared = { "content-type": "application/json", "x-bot": "1" }
    const headersOf = (request: string) => request.split("\r\n\r\n")[0]!.split("\r\n").slice(2, -1)
    await call({ headers: shared })
    await call({ headers: { "x-bot": "2" } })
    await call({ headers: shared })
    assert.deepStrictEqual(received.map(headersOf), [
      ["content-type: application/json", "x-bot: 1"],
      ["x-bot: 2"],
      ["content-type: application/json", "x-bot: 1"]
    ])
    const invalid = { "x-bad": "a\r\nx-injected: 1" }
    for (let i = 0; i < 2; i++) {
      assert.strictEqual((await call({ headers: invalid })).failure?.reason, "Request")
    }
    assert.strictEqual((await call({ headers: { "bad name": "x" } })).failure?.reason, "Request")
    assert.strictEqual(received.length, 3)
  })

  it("sends the request target the URL parser makes of each URL, plain or not, called once or again", async () => {
    respond = (_, socket) => socket.write(ok("{}"))
    const paths = [
      "/bot1:secret/getUpdates",
      "/hook?x=1&y=a:b/c",
      "/a/./b/../c",
      "/a/%2e%2E/b",
      "/.well-known/x",
      "/a b/\"c\"?q=<'{}'>",
      "/a\\b",
      "/a?x#fragment",
      "/tab\there",
      "/ü?ü"
    ]
    for (const _round of [1, 2]) {
      for (const path of paths) await call({ url: `${root}${path}` })
      await call({ url: `${root}?only` })
    }
    const once = [...paths.map((path) => new URL(`${root}${path}`)), new URL(`${root}?only`)]
      .map((url) => `${url.pathname}${url.search}`)
    const expected = [...once, ...once]
    assert.deepStrictEqual(received.map((request) => request.split(" ")[1]), expected)
  })

  it("sends the URL's credentials as basic authorization", async () => {
    respond = (_, socket) => socket.write(ok("{}"))
    await call({ url: `http://ann%40x:p%3Ass@${root.slice(7)}/hook` })
    const credentials = Buffer.from("ann@x:p:ss").toString("base64")
    assert.isTrue(received[0]!.startsWith("POST /hook HTTP/1.1\r\n"))
    assert.include(received[0]!, `\r\nauthorization: Basic ${credentials}\r\n`)
  })

  it("reads a chunked answer that arrives a byte at a time, with extensions and trailers", async () => {
    respond = (_, socket) =>
      void trickle(
        socket,
        "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n7\r\n, world\r\n0\r\nx-trailer: t\r\n\r\n"
      )
    const { answer } = await call()
    assert.strictEqual(answer?.body.toString(), "hello, world")
    assert.strictEqual((await call()).answer?.body.toString(), "hello, world")
    assert.strictEqual(connections, 1)
  })

  it("skips informational answers and reads bodiless ones", async () => {
    respond = (request, socket) =>
      socket.write(
        request.includes("/empty")
          ? "HTTP/1.1 204 No Content\r\n\r\n"
          : `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n${ok("done")}`
      )
    assert.strictEqual((await call()).answer?.body.toString(), "done")
    const empty = await call({ url: `${root}/empty` })
    assert.strictEqual(empty.answer?.status, 204)
    assert.strictEqual(empty.answer?.body.length, 0)
    assert.strictEqual((await call()).answer?.body.toString(), "done")
    assert.strictEqual(connections, 1)
  })

  it("reads each answer by its own head, whether a connection's heads repeat, differ by a byte or answer a HEAD", async () => {
    respond = (request, socket) => {
      const path = request.split(" ")[1]!
      if (path.endsWith("/chunked")) {
        return socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n")
      }
      const answer = path.endsWith("/three") ? ok("abc", "x-n: 3\r\n") : ok("ab", "x-n: 2\r\n")
      socket.write(request.startsWith("HEAD") ? answer.slice(0, answer.indexOf("\r\n\r\n") + 4) : answer)
    }
    const bodies: Array<string> = []
    for (const request of [{}, {}, { method: "HEAD" }, {}, { url: `${root}/three` }, { url: `${root}/chunked` }, {}]) {
      const { answer } = await call({ ...request, ...(request.method === "HEAD" ? { body: undefined } : {}) })
      bodies.push(`${answer?.status} ${answer?.headers["x-n"] ?? answer?.headers["transfer-encoding"]} ${answer?.body.toString()}`)
    }
    assert.deepStrictEqual(bodies, ["200 2 ab", "200 2 ab", "200 2 ", "200 2 ab", "200 3 abc", "200 chunked ab", "200 2 ab"])
    assert.strictEqual(connections, 1)
  })

  it("reads an answer framed by the connection's end, and opens a new connection after it", async () => {
    respond = (_, socket) => socket.end("HTTP/1.0 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil the end")
    assert.strictEqual((await call()).answer?.body.toString(), "until the end")
    assert.strictEqual((await call()).answer?.body.toString(), "until the end")
    assert.strictEqual(connections, 2)
  })

  it("keeps a connection no longer than the server's keep-alive timeout says", async () => {
    respond = (request, socket) => socket.write(ok("k", request.includes("/short") ? "keep-alive: timeout=1\r\n" : "keep-alive: timeout=5, max=100\r\n"))
    await call()
    await call()
    assert.strictEqual(connections, 1)
    await call({ url: `${root}/short` })
    await call({ url: `${root}/short` })
    assert.strictEqual(connections, 2)
  })

  it("skips blank lines before the status line, and keeps headers named like Object's properties", async () => {
    respond = (_, socket) => socket.write(`\r\n\r\n${ok("x", "constructor: c\r\ntoString: t\r\n")}`)
    const { answer } = await call()
    assert.strictEqual(answer?.body.toString(), "x")
    assert.strictEqual(answer?.headers["constructor"], "c")
    assert.strictEqual(answer?.headers["tostring"], "t")
  })

  it("does not reuse a connection the answer closes, nor one the server closed while idle", async () => {
    respond = (_, socket) => socket.write(ok("x", "connection: close\r\n"))
    await call()
    await call()
    assert.strictEqual(connections, 2)
    respond = (_, socket) => socket.write(ok("y"))
    await call()
    for (const socket of sockets) socket.end()
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.strictEqual((await call()).answer?.body.toString(), "y")
    assert.strictEqual(connections, 4)
  })

  it("fails when the connection ends before the whole body, naming the status", async () => {
    respond = (_, socket) => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort")
    const { failure } = await call()
    assert.strictEqual(failure?.description, "the answer (HTTP 200) could not be read (ECONNRESET)")
  })

  it("fails when the connection ends before any answer", async () => {
    respond = (_, socket) => socket.end()
    const { failure } = await call()
    assert.strictEqual(failure?.description, "the request failed (ECONNRESET)")
  })

  it("fails on an answer that is not HTTP/1.x, and on a broken chunked body", async () => {
    respond = (_, socket) => socket.write("SSH-2.0-OpenSSH\r\n\r\n")
    assert.strictEqual((await call()).failure?.description, "the request failed (HPE_INVALID_ANSWER)")
    respond = (_, socket) => socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n")
    assert.strictEqual((await call()).failure?.description, "the answer (HTTP 200) could not be read (HPE_INVALID_ANSWER)")
    respond = (_, socket) => socket.write("HTTP/1.1 200 OK\r\ncontent-length: 1, 2\r\n\r\n12")
    assert.strictEqual((await call()).failure?.description, "the request failed (HPE_INVALID_ANSWER)")
    respond = (_, socket) => socket.write("HTTP/1.1 200 OK\r\nx-a: 1\nx-b: 2\r\ncontent-length: 0\r\n\r\n")
    assert.strictEqual((await call()).failure?.description, "the request failed (HPE_INVALID_ANSWER)")
  })

  it("fails past maxBytes, whatever the framing", async () => {
    respond = (request, socket) =>
      socket.write(
        request.includes("/chunked")
          ? `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n60\r\n${"x".repeat(0x60)}\r\n60\r\n${"x".repeat(0x60)}\r\n0\r\n\r\n`
          : ok("x".repeat(200))
      )
    assert.strictEqual((await call({ maxBytes: 100 })).failure?.reason, "TooLarge")
    const chunked = await call({ url: `${root}/chunked`, maxBytes: 100 })
    assert.strictEqual(chunked.failure?.description, "the answer (HTTP 200) is larger than 100 bytes")
  })

  it("times out, dropping the connection, and sends nothing that would break the request", async () => {
    respond = () => {}
    const slow = await call({ timeout: 100 })
    assert.strictEqual(slow.failure?.description, "no answer within 100ms")
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.strictEqual(sockets.size, 0)
    received.length = 0
    const injected = await call({ headers: { "x-a": "1\r\nx-b: 2" } })
    assert.strictEqual(injected.failure?.description, "the method, path or a header cannot be sent in HTTP/1.1")
    assert.strictEqual((await call({ url: "ftp://127.0.0.1/x" })).failure?.description, "the URL is not valid")
    assert.strictEqual(received.length, 0)
  })

  it("cancels a call without calling back, closing its connection", async () => {
    respond = () => {}
    let calledBack = false
    const cancel = client.request(
      { method: "POST", url: `${root}/x`, headers: {}, body: undefined, timeout: undefined, maxBytes: 1e6 },
      () => (calledBack = true)
    )
    while (received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    cancel()
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.isFalse(calledBack)
    assert.strictEqual(sockets.size, 0)
    assert.match(received[0]!, /^POST \/x HTTP\/1\.1\r\nhost: [^\r]+\r\ncontent-length: 0\r\n\r\n$/)
  })

  it("fails a refused connection with its code and nothing of the URL", async () => {
    const { failure } = await call({ url: "http://127.0.0.1:9/bot1:secret/x" })
    assert.strictEqual(failure?.description, "the request failed (ECONNREFUSED)")
    assert.notInclude(JSON.stringify(failure), "secret")
  })

  it("speaks https, checking the server's certificate and resuming its sessions", async () => {
    const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url))
    const tlsServer = Https.createServer({ key: fixture("localhost-key.pem"), cert: fixture("localhost-cert.pem") }, (req, res) => {
      res.writeHead(200, { "content-type": "application/json", connection: "close" })
      res.end(`{"ok":true,"result":"${req.url}","resumed":${(req.socket as Tls.TLSSocket).isSessionReused()}}`)
    })
    await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve))
    const url = `https://127.0.0.1:${(tlsServer.address() as Net.AddressInfo).port}/bot1:t/getMe`
    const trusting = Http1Client.make({ tls: { ca: fixture("localhost-cert.pem") } })
    try {
      const first = await call({ url }, trusting)
      assert.strictEqual(first.answer?.body.toString(), `{"ok":true,"result":"/bot1:t/getMe","resumed":false}`)
      const second = await call({ url }, trusting)
      assert.strictEqual(second.answer?.body.toString(), `{"ok":true,"result":"/bot1:t/getMe","resumed":true}`)
      const { failure } = await call({ url }, client)
      assert.strictEqual(failure?.reason, "Request")
      assert.strictEqual(failure?.code, "DEPTH_ZERO_SELF_SIGNED_CERT")
    } finally {
      trusting.close()
      tlsServer.closeAllConnections()
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()))
    }
  })
})

describe("Http1Client: the public address policy", () => {
  const port = () => root.slice(root.lastIndexOf(":") + 1)
  const refused = (result: { failure?: HttpExchange.HttpExchangeError }) => {
    assert.strictEqual(result.failure?.reason, "Request")
    assert.strictEqual(result.failure?.code, HttpExchange.addressNotAllowedCode)
    assert.strictEqual(result.failure?.description, "the backend address is not allowed by the backend URL policy")
  }

  it("refuses a host name that resolves to a loopback address, before a byte is sent", async () => {
    respond = (_, socket) => socket.write(ok("{}"))
    refused(await call({ url: `http://localhost:${port()}/hook`, addresses: "public" }))
    assert.strictEqual(connections, 0)
    assert.strictEqual(received.length, 0)
  })

  it("refuses a name that a lookup resolves to 127.0.0.1 at connect time (DNS rebinding)", async () => {
    respond = (_, socket) => socket.write(ok("{}"))
    const looked: Array<string> = []
    const rebinding = Http1Client.make({
      lookup: (hostname, _, callback) => {
        looked.push(hostname)
        callback(null, [{ address: "127.0.0.1", family: 4 }])
      }
    })
    try {
      refused(await call({ url: `http://rebind.example:${port()}/hook`, addresses: "public" }, rebinding))
      assert.deepStrictEqual(looked, ["rebind.example"])
      assert.strictEqual(connections, 0)
      const unchecked = await call({ url: `http://rebind.example:${port()}/hook` }, rebinding)
      assert.strictEqual(unchecked.answer?.status, 200)
    } finally {
      rebinding.close()
    }
  })

  it("refuses IP-literal hosts that are not public, in every spelling the URL parser accepts", async () => {
    respond = (_, socket) => socket.write(ok("{}"))
    for (
      const host of [
        "127.0.0.1",
        "0x7f000001",
        "2130706433",
        "0177.0.0.1",
        "[::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "0.0.0.0",
        "[::]",
        "169.254.169.254",
        "10.0.0.1",
        "[fd00::1]",
        "[fe80::1]"
      ]
    ) {
      refused(await call({ url: `http://${host}:${port()}/hook`, addresses: "public" }))
    }
    assert.strictEqual(connections, 0)
  })

  it("never reuses a connection made without the policy for a call with it", async () => {
    respond = (_, socket) => socket.write(ok("{}"))
    assert.strictEqual((await call({ url: `http://localhost:${port()}/a` })).answer?.status, 200)
    refused(await call({ url: `http://localhost:${port()}/b`, addresses: "public" }))
    assert.strictEqual(connections, 1)
    assert.strictEqual(received.length, 1)
  })

  it("connects to addresses the policy allows, over http and https, and keeps those connections", async () => {
    respond = (_, socket) => socket.write(ok(`{"ok":true}`))
    const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url))
    const allowing = Http1Client.make({
      allowAddress: (address) => address === "127.0.0.1",
      tls: { ca: fixture("localhost-cert.pem") }
    })
    const tlsServer = Https.createServer({ key: fixture("localhost-key.pem"), cert: fixture("localhost-cert.pem") }, (_, res) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(`{"ok":true}`)
    })
    await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve))
    try {
      const first = await call({ url: `http://localhost:${port()}/hook`, addresses: "public" }, allowing)
      const second = await call({ url: `http://localhost:${port()}/hook`, addresses: "public" }, allowing)
      assert.strictEqual(first.answer?.body.toString(), `{"ok":true}`)
      assert.strictEqual(second.answer?.status, 200)
      assert.strictEqual(connections, 1)
      const literal = await call({ url: `${root}/hook`, addresses: "public" }, allowing)
      assert.strictEqual(literal.answer?.status, 200)
      const secure = await call(
        { url: `https://localhost:${(tlsServer.address() as Net.AddressInfo).port}/hook`, addresses: "public" },
        allowing
      )
      assert.strictEqual(secure.answer?.body.toString(), `{"ok":true}`)
      refused(await call({ url: `http://[::1]:${port()}/hook`, addresses: "public" }, allowing))
    } finally {
      allowing.close()
      tlsServer.closeAllConnections()
      await new Promise<void>((resolve) => tlsServer.close(() => resolve()))
    }
  })

  it("counts only public addresses that are not this host's own as allowed", () => {
    for (const entries of Object.values(Os.networkInterfaces())) {
      for (const entry of entries ?? []) assert.isFalse(Http1Client.publicAndForeign(entry.address), entry.address)
    }
    for (const address of ["127.0.0.1", "::1", "10.1.2.3", "169.254.169.254", "::ffff:127.0.0.1", "fd00::1"]) {
      assert.isFalse(Http1Client.publicAndForeign(address), address)
    }
    assert.isTrue(Http1Client.publicAndForeign("149.154.167.220"))
    assert.isTrue(Http1Client.publicAndForeign("2001:67c:4e8:f004::9"))
  })
})
