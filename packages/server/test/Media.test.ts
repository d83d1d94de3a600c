import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let tg: FakeTelegram.FakeBot
let botId: number
let otherId: number
let user: ReturnType<FakeTelegram.FakeTelegram["addUser"]>

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  tg = fake.addBot({ username: "files_bot" })
  user = fake.addUser({ first_name: "Ann" })
  botId = (await server.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })).json.id
  otherId = (await server.call("/api/bots/add", { body: { token: fake.addBot().token } })).json.id
})
afterAll(async () => {
  if (server !== undefined) assert.notInclude(server.logs.join("\n"), tg.token.split(":")[1]!, "a log line holds the token")
  await server?.close()
  await fake?.close()
})

/** A user sends the bot a document (or a photo); resolves once the history holds it, with its file_id. */
const received = async (message: Omit<FakeTelegram.UserMessage, "user">) => {
  const sent = fake.userSends(tg.id, { user, ...message })
  const fileId = sent.document?.file_id ?? sent.photo!.at(-1)!.file_id
  await eventually(async () => {
    const history = (await server.call(`/api/messages?bot_id=${botId}&chat_id=${user.id}`)).json as Array<any>
    return history.some((m) => m.file_id === fileId) || undefined
  })
  return fileId
}

const media = (fileId: string, init: { readonly botId?: number; readonly key?: string; readonly range?: string } = {}) =>
  fetch(`${server.baseUrl}/api/media?bot_id=${init.botId ?? botId}&file_id=${encodeURIComponent(fileId)}`, {
    headers: {
      authorization: `Bearer ${init.key ?? server.adminKey}`,
      ...(init.range === undefined ? {} : { range: init.range })
    }
  })

const errorOf = async (response: Response) => ({ status: response.status, json: await response.json() })

describe("GET /api/media", () => {
  it("streams a file of the bot's history with its type, length and private caching", async () => {
    const fileId = await received({ document: { file_name: "manual.pdf", file_size: 70_000 } })
    const response = await media(fileId)
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("content-type"), "application/pdf")
    assert.strictEqual(response.headers.get("content-length"), "70000")
    assert.strictEqual(response.headers.get("cache-control"), "private")
    assert.strictEqual(response.headers.get("accept-ranges"), "bytes")
    const bytes = new Uint8Array(await response.arrayBuffer())
    assert.deepStrictEqual(bytes, new Uint8Array(fake.fileBytes(fileId)!))
  })

  it("takes the type from the path: a photo is image/jpeg, an unknown or unsafe extension plain bytes", async () => {
    const photo = await received({ photo: true })
    const response = await media(photo)
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("content-type"), "image/jpeg")
    await response.arrayBuffer()
    const page = await received({ document: { file_name: "page.html", mime_type: "text/html" } })
    const html = await media(page)
    assert.strictEqual(html.headers.get("content-type"), "application/octet-stream")
    assert.strictEqual(html.headers.get("x-content-type-options"), "nosniff")
    await html.arrayBuffer()
  })

  it("passes Range on: 206 with Content-Range for a satisfiable range, 416 for one past the end", async () => {
    const fileId = await received({ document: { file_name: "clip.mp4", file_size: 5000 } })
    const all = new Uint8Array(fake.fileBytes(fileId)!)
    const part = await media(fileId, { range: "bytes=100-199" })
    assert.strictEqual(part.status, 206)
    assert.strictEqual(part.headers.get("content-range"), "bytes 100-199/5000")
    assert.strictEqual(part.headers.get("content-length"), "100")
    assert.strictEqual(part.headers.get("content-type"), "video/mp4")
    assert.deepStrictEqual(new Uint8Array(await part.arrayBuffer()), all.subarray(100, 200))
    const tail = await media(fileId, { range: "bytes=-10" })
    assert.strictEqual(tail.status, 206)
    assert.deepStrictEqual(new Uint8Array(await tail.arrayBuffer()), all.subarray(4990))
    const beyond = await media(fileId, { range: "bytes=6000-" })
    assert.strictEqual(beyond.status, 416)
    assert.strictEqual(beyond.headers.get("content-range"), "bytes */5000")
    assert.strictEqual((await beyond.json()).code, "range_not_satisfiable")
  })

  it("404 for a file_id the bot's history never held, even one Telegram knows; getFile is not called", async () => {
    const getFiles = fake.calls.filter((c) => c.method === "getFile").length
    const reply = await errorOf(await media("BQACAgIAAxkBAAInever-seen"))
    assertError(reply, 404, "file_not_found")
    const elsewhere = fake.userSends(tg.id, { user: fake.addUser(), document: {} }).document!.file_id
    assertError(await errorOf(await media(elsewhere, { botId: otherId })), 404, "file_not_found")
    assert.strictEqual(fake.calls.filter((c) => c.method === "getFile").length, getFiles)
  })

  it("404 when Telegram no longer has the file", async () => {
    const fileId = await received({ document: {} })
    fake.failNext("getFile", { error_code: 400, description: "Bad Request: wrong file_id or the file is temporarily unavailable" })
    assertError(await errorOf(await media(fileId)), 404, "file_not_found")
  })

  it("400 file_too_big for a file over Telegram's 20 MB download limit", async () => {
    const fileId = await received({ document: { file_name: "movie.mkv", file_size: 25 * 1024 * 1024 } })
    const reply = await errorOf(await media(fileId))
    assertError(reply, 400, "file_too_big")
    assert.include(reply.json.error, "20 MB")
  })

  it("serves files the bot sent through the API, even without manage_enabled", async () => {
    const sent = await server.call("/api/messages/send-media", {
      body: { bot_id: otherId, chat_id: user.id, type: "document", url: "https://example.com/a/notes.pdf" }
    })
    assert.strictEqual(sent.status, 200, sent.text)
    const response = await media(sent.json.file_id, { botId: otherId })
    assert.strictEqual(response.status, 200)
    assert.deepStrictEqual(new Uint8Array(await response.arrayBuffer()), new Uint8Array(fake.fileBytes(sent.json.file_id)!))
  })

  it("400 for missing parameters, 403 outside scope, 404 for an unknown bot, 409 for a disabled one", async () => {
    const fileId = await received({ document: {} })
    for (const query of [`bot_id=${botId}`, `file_id=x`, `bot_id=0&file_id=x`, `bot_id=${botId}&file_id=`]) {
      const response = await fetch(`${server.baseUrl}/api/media?${query}`, {
        headers: { authorization: `Bearer ${server.adminKey}` }
      })
      assertError(await errorOf(response), 400, "invalid_request")
    }
    const op = (await server.call("/api/auth/api-keys", { body: { name: "op", role: "operator", bot_ids: [otherId] } })).json.key
    assertError(await errorOf(await media(fileId, { key: op })), 403, "forbidden")
    assertError(await errorOf(await media(fileId, { botId: 999999 })), 404, "bot_not_found")
    await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
    try {
      assertError(await errorOf(await media(fileId)), 409, "bot_disabled")
    } finally {
      await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
    }
  })
})
