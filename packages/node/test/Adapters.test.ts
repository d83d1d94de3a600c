import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FakeTelegram } from "@botrelay/testing"
import express from "express"
import Fastify from "fastify"
import Koa from "koa"
import bodyParser from "koa-bodyparser"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Adapters from "../src/Adapters.js"
import * as Instance from "../src/Instance.js"
import type * as NodeHandler from "../src/NodeHandler.js"

// Each adapter in its real framework, next to a route of the host's own: the API round trip under the
// prefix, the host's routes and 404s outside it, and no more polling once the instance is disposed.

/** Express 4, installed under an alias; its API, as far as these tests use it, is express 5's. */
const express4 = createRequire(import.meta.url)("express4") as typeof express

const prefix = "/botrelay"
const hello = "hello from the host"
const hostMissing = "host: not found"
const adminKey = `brk_${randomBytes(32).toString("base64url")}`
const auth = { authorization: `Bearer ${adminKey}` }

let fake: FakeTelegram.FakeTelegram
let dir = ""

beforeAll(async () => {
  fake = await FakeTelegram.start()
  dir = mkdtempSync(join(tmpdir(), "botrelay-adapters-"))
})
afterAll(async () => {
  await fake?.close()
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let instances = 0
const createInstance = () =>
  Instance.create({
    database: join(dir, `instance-${++instances}.db`),
    telegramApi: fake.apiRoot,
    adminKey,
    prefix,
    logLevel: "None",
    instanceId: `embedded-${instances}`
  })

/** The instance an answer names. */
const instanceOf = (response: Response) => response.headers.get("x-botrelay-instance")

/** A host app listening on 127.0.0.1, with Botrelay mounted in it. */
interface Host {
  readonly origin: string
  readonly close: () => Promise<void>
}

const listen = async (server: Server): Promise<Host> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** The host's own routes: `GET /hello`, and its own 404 for everything else. */
const hostRoutes = (req: IncomingMessage, res: ServerResponse) => {
  const found = req.method === "GET" && req.url === "/hello"
  res.writeHead(found ? 200 : 404, { "content-type": "text/plain" })
  res.end(found ? hello : hostMissing)
}

const mountExpress = (framework: typeof express, how: "root" | "path" | "json") =>
async (handler: NodeHandler.Handler): Promise<Host> => {
  const app = framework()
  if (how === "json") app.use(framework.json())
  if (how === "path") app.use(prefix, Adapters.express(handler))
  else app.use(Adapters.express(handler))
  app.get("/hello", (_req, res) => {
    res.type("text/plain").send(hello)
  })
  app.use((_req, res) => {
    res.status(404).type("text/plain").send(hostMissing)
  })
  return listen(app.listen(0, "127.0.0.1"))
}

const mountFastify = async (handler: NodeHandler.Handler): Promise<Host> => {
  const app = Fastify()
  app.addHook("onRequest", Adapters.fastify(handler))
  app.get("/hello", async (_request, reply) => reply.type("text/plain").send(hello))
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).type("text/plain").send(hostMissing))
  await app.listen({ port: 0, host: "127.0.0.1" })
  const { port } = app.server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      app.server.closeAllConnections()
      await app.close()
    }
  }
}

const mountKoa = (withBodyParser: boolean) => async (handler: NodeHandler.Handler): Promise<Host> => {
  const app = new Koa()
  if (withBodyParser) app.use(bodyParser())
  app.use(Adapters.koa(handler))
  app.use(async (ctx) => {
    const found = ctx.method === "GET" && ctx.path === "/hello"
    ctx.status = found ? 200 : 404
    ctx.type = "text/plain"
    ctx.body = found ? hello : hostMissing
  })
  return listen(app.listen(0, "127.0.0.1"))
}

const cases: ReadonlyArray<readonly [string, (handler: NodeHandler.Handler) => Promise<Host>]> = [
  ["node:http", async (handler) => {
    const botrelay = Adapters.http(handler)
    return listen(createServer((req, res) => (handler.handles(req.url ?? "/") ? botrelay : hostRoutes)(req, res)))
  }],
  ["express 4", mountExpress(express4, "root")],
  ["express 4 under app.use(prefix)", mountExpress(express4, "path")],
  ["express 4 after express.json()", mountExpress(express4, "json")],
  ["express 5", mountExpress(express, "root")],
  ["express 5 under app.use(prefix)", mountExpress(express, "path")],
  ["express 5 after express.json()", mountExpress(express, "json")],
  ["fastify 5", mountFastify],
  ["koa", mountKoa(false)],
  ["koa after koa-bodyparser", mountKoa(true)]
]

for (const [name, mount] of cases) {
  describe(name, () => {
    let instance: Instance.Instance | undefined
    let host: Host | undefined
    let origin = ""
    let bot: FakeTelegram.FakeBot | undefined

    beforeAll(async () => {
      instance = await createInstance()
      host = await mount(instance.handler)
      origin = host.origin
    })
    afterAll(async () => {
      await host?.close()
      await instance?.dispose()
    })

    it("serves the health check under the prefix", async () => {
      const response = await fetch(`${origin}${prefix}/api/health`)
      assert.strictEqual(response.status, 200)
      assert.deepStrictEqual(await response.json(), { status: "ok", storage: "ok" })
    })

    it("adds a bot and lists it", async () => {
      bot = fake.addBot()
      const added = await fetch(`${origin}${prefix}/api/bots/add`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ token: bot.token, name: `via ${name}`, manage_enabled: true })
      })
      assert.strictEqual(added.status, 200, await added.clone().text())
      const body = await added.json() as { id: number; name: string; manage_enabled: boolean }
      assert.strictEqual(body.name, `via ${name}`)
      assert.isTrue(body.manage_enabled)

      const listed = await fetch(`${origin}${prefix}/api/bots`, { headers: auth })
      assert.strictEqual(listed.status, 200)
      const bots = await listed.json() as ReadonlyArray<{ id: number; name: string }>
      assert.deepStrictEqual(bots.map(({ id, name }) => ({ id, name })), [{ id: body.id, name: `via ${name}` }])
      await fake.waitForPoll(bot.id)
    })

    it("serves the console under the prefix, its pages with <base href> at the prefix", async () => {
      for (const path of [`${prefix}/`, `${prefix}/chats/1/2`, `${prefix}/sign-in?next=%2Fbots`]) {
        const page = await fetch(`${origin}${path}`)
        assert.strictEqual(page.status, 200, path)
        assert.strictEqual(page.headers.get("cache-control"), "no-cache")
        const html = await page.text()
        assert.include(html, `<base href="${prefix}/" />`, path)
        const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1]
        assert.isString(script)
        const asset = await fetch(`${origin}${prefix}/${script}`)
        assert.strictEqual(asset.status, 200)
        assert.strictEqual(asset.headers.get("cache-control"), "public, max-age=31536000, immutable")
      }
    })

    it("asks for the admin key", async () => {
      const response = await fetch(`${origin}${prefix}/api/bots`)
      assert.strictEqual(response.status, 401)
      assert.match(instanceOf(response) ?? "", /^embedded-\d+$/)
    })

    it("leaves the host's own routes to the host", async () => {
      const response = await fetch(`${origin}/hello`)
      assert.strictEqual(response.status, 200)
      assert.strictEqual(await response.text(), hello)
    })

    it("leaves URLs outside the prefix to the host", async () => {
      for (const path of ["/api/health", "/elsewhere", `${prefix}x/api/health`]) {
        const response = await fetch(`${origin}${path}`)
        assert.strictEqual(response.status, 404, path)
        assert.strictEqual(await response.text(), hostMissing, path)
        assert.isNull(instanceOf(response), path)
      }
    })

    it("stops polling when disposed", async () => {
      assert.isDefined(bot)
      const botId = bot.id
      await fake.waitForPoll(botId)
      await instance!.dispose()
      const disposedAt = Date.now()
      await sleep(500)
      const late = fake.calls.filter((call) =>
        call.botId === botId && call.method === "getUpdates" && call.receivedAt >= disposedAt
      )
      assert.deepStrictEqual(late, [])
      const polled = await fake.waitForPoll(botId, 300).then(() => true, () => false)
      assert.isFalse(polled)
      const api = await fetch(`${origin}${prefix}/api/bots`, { headers: auth })
      assert.strictEqual(api.status, 503)
      assert.match(instanceOf(api) ?? "", /^embedded-\d+$/)
      assert.deepStrictEqual(await api.json(), { error: "this Botrelay instance is stopped", code: "unavailable" })
      const tgapi = await fetch(`${origin}${prefix}/tgapi/bot${bot.token}/getMe`)
      assert.strictEqual(tgapi.status, 503)
      assert.strictEqual(instanceOf(tgapi), instanceOf(api))
      assert.deepInclude(await tgapi.json(), { ok: false, error_code: 503 })
    })
  })
}

/** A getUpdates answer, as far as these tests read it. */
interface Updates {
  readonly ok: boolean
  readonly result: ReadonlyArray<{ readonly update_id: number; readonly message?: { readonly text?: string } }>
}

describe("NodeHandler without a framework", () => {
  let instance: Instance.Instance | undefined
  let host: Host | undefined
  let origin = ""

  beforeAll(async () => {
    instance = await createInstance()
    const handler = instance.handler
    host = await listen(createServer((req, res) => handler(req, res)))
    origin = host.origin
  })
  afterAll(async () => {
    await host?.close()
    await instance?.dispose()
  })

  it("tells which URLs are under its prefix", () => {
    const handles = instance!.handler.handles
    for (const url of [prefix, `${prefix}/`, `${prefix}?a=1`, `${prefix}/api/health`]) assert.isTrue(handles(url), url)
    for (const url of ["/", "/api/health", `${prefix}x`, `/x${prefix}`]) assert.isFalse(handles(url), url)
  })

  it("answers 404 JSON outside its prefix when there is no next", async () => {
    const response = await fetch(`${origin}/elsewhere`)
    assert.strictEqual(response.status, 404)
    assert.match(response.headers.get("content-type") ?? "", /application\/json/)
    assert.deepStrictEqual(await response.json(), { error: "not found", code: "not_found" })
  })

  it("answers Telegram's 401 for an unknown token under /tgapi", async () => {
    const token = `123456:${randomBytes(26).toString("base64url").slice(0, 35)}`
    const response = await fetch(`${origin}${prefix}/tgapi/bot${token}/getMe`)
    assert.strictEqual(response.status, 401)
    assert.deepStrictEqual(await response.json(), { ok: false, error_code: 401, description: "Unauthorized" })
  })

  it("answers 413 for an /api body declared over 1 MiB", async () => {
    const response = await fetch(`${origin}${prefix}/api/bots/add`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ token: "1:x", description: "x".repeat(1024 * 1024) })
    })
    assert.strictEqual(response.status, 413)
    assert.strictEqual((await response.json() as { code: string }).code, "payload_too_large")
  })

  it("refuses a chunked /api body over 1 MiB", async () => {
    // Past the limit, @effect/platform-node destroys the request stream, and with it the connection,
    // before the 413 is written: the client sees the 413 or a reset, never an accepted body.
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024))
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        if (sent++ < 20) controller.enqueue(chunk)
        else controller.close()
      }
    })
    const status = await fetch(`${origin}${prefix}/api/bots/add`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body,
      duplex: "half"
    } as RequestInit).then((response) => response.status, () => "reset")
    assert.include([413, "reset"], status)
  })

  it("relays updates to a long-polling client, and answers its held poll when disposed", async () => {
    const bot = fake.addBot()
    const added = await fetch(`${origin}${prefix}/api/bots/add`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ token: bot.token, long_poll_enabled: true })
    })
    assert.strictEqual(added.status, 200, await added.clone().text())
    await fake.waitForPoll(bot.id)
    fake.userSends(bot.id, { text: "hi" })
    const getUpdates = (query: string): Promise<Updates> =>
      fetch(`${origin}${prefix}/tgapi/bot${bot.token}/getUpdates?${query}`).then((response) => response.json())
    const first = await getUpdates("timeout=5")
    assert.isTrue(first.ok)
    assert.deepStrictEqual(first.result.map((update) => update.message?.text), ["hi"])

    const held = getUpdates(`timeout=30&offset=${first.result[0]!.update_id + 1}`)
    const outcome = await Promise.race([held.then(() => "answered"), sleep(300).then(() => "held")])
    assert.strictEqual(outcome, "held")
    const started = Date.now()
    await instance!.dispose()
    const answer = await held
    assert.isBelow(Date.now() - started, 5000)
    assert.deepStrictEqual(answer, { ok: true, result: [] })
  })
})
