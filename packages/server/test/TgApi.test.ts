import { createHash, randomBytes } from "node:crypto"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { eventually, pollWatch, startServer, type TestServer, unreachableTelegram } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
const polls = pollWatch()

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot, allowPrivateBackends: true, extra: polls.layer })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
  readonly bytes: Uint8Array
}

/** A request to Botrelay's /tgapi, as a bot framework would make it. */
const tgapi = async (path: string, init: RequestInit = {}, base = server.baseUrl): Promise<Answer> => {
  const response = await fetch(`${base}/tgapi${path}`, init)
  const bytes = new Uint8Array(await response.arrayBuffer())
  const text = new TextDecoder().decode(bytes)
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json, bytes }
}

const postJson = (path: string, body: unknown, base?: string) =>
  tgapi(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }, base)

const addBot = async (tg: FakeTelegram.FakeBot, body: Record<string, unknown> = {}, on = server) => {
  const reply = await on.call("/api/bots/add", { body: { token: tg.token, ...body } })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { id: number }
}

const botById = async (id: number) => (await server.call("/api/bots")).json.find((b: any) => b.id === id)

const history = async (botId: number, chatId: number) => {
  const reply = await server.call(`/api/messages?bot_id=${botId}&chat_id=${chatId}&limit=200`)
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as Array<any>
}

const callsOf = (botId: number | undefined, method?: string) =>
  fake.calls.filter((c) => c.botId === botId && (method === undefined || c.method === method))

/** A GET sent with its path exactly as written (fetch would resolve dot segments first). */
const raw = (path: string, base = server.baseUrl) =>
  new Promise<{ readonly status: number; readonly text: string }>((resolve, reject) => {
    const request = httpRequest(`${base}/`, { path, method: "GET" }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
    })
    request.on("error", reject)
    request.end()
  })

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

describe("/tgapi: who is served", () => {
  it("answers an unknown token with Telegram's 401 and never relays it", async () => {
    const before = fake.calls.length
    const unknown = "123456:AAunknown_token_for_the_proxy_test_"
    for (const answer of [
      await postJson(`/bot${unknown}/sendMessage`, { chat_id: 1, text: "x" }),
      await tgapi(`/bot${unknown}/getMe`),
      await tgapi(`/bot${unknown}/getUpdates?timeout=1`),
      await tgapi(`/file/bot${unknown}/photos/file_1.jpg`)
    ]) {
      assert.strictEqual(answer.status, 401)
      assert.strictEqual(answer.text, `{"ok":false,"error_code":401,"description":"Unauthorized"}`)
      assert.include(answer.headers.get("content-type") ?? "", "application/json")
    }
    assert.strictEqual(fake.calls.length, before)
  })

  it("answers malformed paths with Telegram's 404 and never relays them", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const before = fake.calls.length
    const paths = ["", "/", "/getMe", "/bot/getMe", "/x/y"]
    for (const rest of ["", "/", "/get.Me", "/getMe/extra"]) paths.push(`/bot${tg.token}${rest}`)
    paths.push(`/file/bot${tg.token}/`, `/file/bot${tg.token}/a/../b`)
    for (const path of paths) {
      const answer = await tgapi(path)
      assert.strictEqual(answer.status, 404, path)
      assert.strictEqual(answer.text, `{"ok":false,"error_code":404,"description":"Not Found"}`, path)
    }
    assert.strictEqual(fake.calls.length, before)
  })

  it("refuses file paths that would climb out of the bot's files, in every encoding, relaying nothing", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const other = fake.addBot()
    const disabled = await addBot(other)
    assert.strictEqual((await server.call(`/api/bots/toggle-disabled?id=${disabled.id}`, { method: "POST" })).status, 200)
    const target = `bot${other.token}/sendMessage?chat_id=1&text=x`
    const attacks = [
      `%2e%2e/%2e%2e/${target}`,
      `%2E%2E/%2e%2E/${target}`,
      `.%2e/%2e./${target}`,
      `../../${target}`,
      `..\\..\\${target}`,
      `..%5c..%5C${target}`,
      `photos/..%2f..%2f..%2fbot${other.token}%2fgetMe`,
      `photos%2f%2e%2e%2f%2e%2e/${target}`,
      `./photos/x.jpg`,
      `photos//x.jpg`,
      `photos/%00/x.jpg`,
      `photos/x%0a.jpg`,
      `%c0%ae%c0%ae/${target}`,
      `%%32%65%%32%65/${target}`
    ]
    for (const path of attacks) {
      const answer = await raw(`/tgapi/file/bot${tg.token}/${path}`)
      assert.strictEqual(answer.status, 404, path)
      assert.strictEqual(answer.text, `{"ok":false,"error_code":404,"description":"Not Found"}`, path)
    }
    const doubled = await raw(`/tgapi/file/bot${tg.token}/%252e%252e/%252e%252e/${target}`)
    assert.strictEqual(doubled.status, 404)
    assert.strictEqual(callsOf(other.id).length, 0)
    assert.strictEqual(callsOf(tg.id).length, 0)
  })

  it("keeps file downloads under the API root's own path prefix", async () => {
    const seen: Array<string> = []
    const upstream = createServer((req, res) => {
      seen.push(req.url ?? "")
      const forward = httpRequest(`${fake.apiRoot}${(req.url ?? "").replace(/^\/prefix/, "")}`, {
        method: req.method,
        headers: req.headers
      }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      req.pipe(forward)
    })
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve))
    const { port } = upstream.address() as AddressInfo
    const prefixed = await startServer({ telegramApi: `http://127.0.0.1:${port}/prefix` })
    try {
      const tg = fake.addBot()
      await addBot(tg, {}, prefixed)
      for (const path of [`%2e%2e/%2e%2e/%2e%2e/bot${tg.token}/getMe`, `..%5C..%5C..%5Cbot${tg.token}/getMe`]) {
        assert.strictEqual((await raw(`/tgapi/file/bot${tg.token}/${path}`, prefixed.baseUrl)).status, 404)
      }
      const photo = fake.userSends(tg.id, { photo: true })
      const file = await tgapi(`/bot${tg.token}/getFile?file_id=${photo.photo!.at(-1)!.file_id}`, {}, prefixed.baseUrl)
      const whole = await raw(`/tgapi/file/bot${tg.token}/${file.json.result.file_path}`, prefixed.baseUrl)
      assert.strictEqual(whole.status, 200)
      assert.isAbove(seen.length, 0)
      for (const url of seen) assert.match(url, /^\/prefix\/(file\/)?bot/, url)
    } finally {
      await prefixed.close()
      await new Promise((resolve) => upstream.close(resolve))
    }
  })

  it("answers a disabled bot with a 403 that says so, without relaying", async () => {
    const tg = fake.addBot()
    const bot = await addBot(tg)
    assert.strictEqual((await server.call(`/api/bots/toggle-disabled?id=${bot.id}`, { method: "POST" })).status, 200)
    const answer = await postJson(`/bot${tg.token}/sendMessage`, { chat_id: 1, text: "x" })
    assert.strictEqual(answer.status, 403)
    assert.deepInclude(answer.json, { ok: false, error_code: 403 })
    assert.include(answer.json.description, "disabled in Botrelay")
    assert.strictEqual(callsOf(tg.id, "sendMessage").length, 0)
  })
})

describe("/tgapi: passing calls through", () => {
  it("passes JSON calls with any method case and returns Telegram's answer unchanged", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const user = fake.addUser()
    const answer = await postJson(`/bot${tg.token}/SENDmessage`, { chat_id: user.id, text: "hello, proxy" })
    assert.strictEqual(answer.status, 200, answer.text)
    const sent = fake.sent(tg.id).at(-1)!
    assert.deepStrictEqual(answer.json, { ok: true, result: sent.message })
    assert.strictEqual(answer.headers.get("content-type"), "application/json")
    const call = callsOf(tg.id, "sendMessage").at(-1)!
    assert.deepStrictEqual(call.params, { chat_id: user.id, text: "hello, proxy" })
  })

  it("passes GET calls with query-string parameters and urlencoded bodies", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const user = fake.addUser()
    const query = `chat_id=${user.id}&text=${encodeURIComponent("from a query ✓")}`
    const byGet = await tgapi(`/bot${tg.token}/sendMessage?${query}`)
    assert.strictEqual(byGet.status, 200, byGet.text)
    assert.strictEqual(byGet.json.result.text, "from a query ✓")
    assert.strictEqual(callsOf(tg.id, "sendMessage").at(-1)!.params.text, "from a query ✓")

    const keyboard = { inline_keyboard: [[{ text: "b", callback_data: "d" }]] }
    const form = new URLSearchParams({
      chat_id: String(user.id),
      text: "from a form",
      reply_markup: JSON.stringify(keyboard)
    })
    const byForm = await tgapi(`/bot${tg.token}/sendMessage`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString()
    })
    assert.strictEqual(byForm.status, 200, byForm.text)
    assert.deepStrictEqual(byForm.json.result.reply_markup, keyboard)
    const me = await tgapi(`/bot${tg.token}/getMe`)
    assert.deepInclude(me.json.result, { id: tg.id, is_bot: true, username: tg.username })
  })

  it("returns Telegram's errors unchanged: status, description and parameters", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const user = fake.addUser()
    fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 7", retry_after: 7 })
    const limited = await postJson(`/bot${tg.token}/sendMessage`, { chat_id: user.id, text: "x" })
    assert.strictEqual(limited.status, 429)
    assert.strictEqual(
      limited.text,
      `{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 7","parameters":{"retry_after":7}}`
    )
    const empty = await postJson(`/bot${tg.token}/sendMessage`, { chat_id: user.id, text: "" })
    assert.strictEqual(empty.status, 400)
    assert.deepStrictEqual(empty.json, {
      ok: false,
      error_code: 400,
      description: "Bad Request: message text is empty"
    })
    const unknownMethod = await postJson(`/bot${tg.token}/noSuchMethod`, {})
    assert.strictEqual(unknownMethod.status, 404)
  })

  it("streams a 5 MB multipart upload through byte for byte", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const user = fake.addUser()
    const bytes = randomBytes(5 * 1024 * 1024 + 17)
    const form = new FormData()
    form.set("chat_id", String(user.id))
    form.set("caption", "the report")
    form.set("document", new Blob([bytes], { type: "application/pdf" }), "report.pdf")
    const answer = await tgapi(`/bot${tg.token}/sendDocument`, { method: "POST", body: form })
    assert.strictEqual(answer.status, 200, answer.text)
    const upload = fake.uploads(tg.id).at(-1)!
    assert.strictEqual(upload.sha256, sha256(bytes))
    assert.strictEqual(upload.file_size, bytes.length)
    assert.strictEqual(upload.file_name, "report.pdf")
    assert.strictEqual(answer.json.result.document.file_id, upload.file_id)
    assert.strictEqual(answer.json.result.caption, "the report")
    assert.strictEqual(sha256(fake.fileBytes(upload.file_id)!), sha256(bytes))
  })

  it("streams a chunked multipart upload without a Content-Length", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const user = fake.addUser()
    const bytes = randomBytes(3 * 1024 * 1024)
    const boundary = "----botrelay-test-boundary"
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n${user.id}\r\n`),
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="document"; filename="blob.bin"\r\n`),
      Buffer.from("Content-Type: application/octet-stream\r\n\r\n"),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`)
    ])
    const size = 65536
    const chunks = Array.from(
      { length: Math.ceil(body.length / size) },
      (_, i) => body.subarray(i * size, (i + 1) * size)
    )
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift()
        if (next === undefined) controller.close()
        else controller.enqueue(next)
      }
    })
    const answer = await tgapi(`/bot${tg.token}/sendDocument`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body: stream,
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(answer.status, 200, answer.text)
    assert.strictEqual(fake.uploads(tg.id).at(-1)!.sha256, sha256(bytes))
  })

  it("refuses a body declared over 50 MB with a 413 before reading it", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const url = new URL(`${server.baseUrl}/tgapi/bot${tg.token}/sendDocument`)
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(url, {
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=x", "content-length": String(60 * 1024 * 1024) }
      }, (res) => {
        let body = ""
        res.on("data", (chunk) => body += chunk)
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
      })
      req.on("error", reject)
      req.write("--x\r\n")
    })
    assert.strictEqual(answer.status, 413)
    assert.deepStrictEqual(JSON.parse(answer.body), {
      ok: false,
      error_code: 413,
      description: "Request Entity Too Large"
    })
    assert.strictEqual(callsOf(tg.id, "sendDocument").length, 0)
    const huge = JSON.stringify({ token: "1:big", name: "x".repeat(2 * 1024 * 1024) })
    const api = await server.call("/api/bots/add", { raw: huge })
    assert.strictEqual(api.status, 413)
  })

  it("answers a chunked upload that runs past 50 MB with a 413 the client reads", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const chunk = new Uint8Array(1024 * 1024).fill(97)
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode("--x\r\ncontent-disposition: form-data; name=\"document\"; filename=\"a\"\r\n\r\n"))
        if (sent >= 52) return controller.close()
        sent++
        controller.enqueue(chunk)
      }
    })
    const answer = await tgapi(`/bot${tg.token}/sendDocument`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=x" },
      body,
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(answer.status, 413)
    assert.deepStrictEqual(answer.json, { ok: false, error_code: 413, description: "Request Entity Too Large" })
  })

  it("passes file downloads through with ranges, bytes unchanged", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const photo = fake.userSends(tg.id, { photo: true })
    const largest = photo.photo!.at(-1)!
    const file = await tgapi(`/bot${tg.token}/getFile?file_id=${encodeURIComponent(largest.file_id)}`)
    assert.strictEqual(file.status, 200, file.text)
    const path = file.json.result.file_path as string
    const expected = fake.fileBytes(largest.file_id)!

    const whole = await tgapi(`/file/bot${tg.token}/${path}`)
    assert.strictEqual(whole.status, 200)
    assert.strictEqual(sha256(whole.bytes), sha256(expected))
    assert.strictEqual(whole.headers.get("content-length"), String(expected.length))
    assert.strictEqual(whole.headers.get("content-type"), "image/jpeg")

    const part = await tgapi(`/file/bot${tg.token}/${path}`, { headers: { range: "bytes=100-1099" } })
    assert.strictEqual(part.status, 206)
    assert.strictEqual(part.headers.get("content-range"), `bytes 100-1099/${expected.length}`)
    assert.strictEqual(part.headers.get("content-length"), "1000")
    assert.deepStrictEqual(part.bytes, expected.subarray(100, 1100))

    const head = await tgapi(`/file/bot${tg.token}/${path}`, { method: "HEAD" })
    assert.strictEqual(head.status, 200)
    assert.strictEqual(head.headers.get("content-length"), String(expected.length))
    assert.strictEqual(head.bytes.length, 0)

    const missing = await tgapi(`/file/bot${tg.token}/photos/none.jpg`)
    assert.strictEqual(missing.status, 404)
  })
})

describe("/tgapi: answered by Botrelay", () => {
  it("setWebhook, getWebhookInfo, deleteWebhook, logOut and close never reach Telegram", async () => {
    const tg = fake.addBot()
    const bot = await addBot(tg)
    const set = await postJson(`/bot${tg.token}/setWebhook`, {
      url: "https://backend.example/hook",
      secret_token: "s3cr3t_-OK",
      drop_pending_updates: true
    })
    assert.deepStrictEqual(set.json, { ok: true, result: true, description: "Webhook was set" })
    assert.deepInclude(await botById(bot.id), {
      backend_url: "https://backend.example/hook",
      secret_token: "***",
      secret_token_set: true,
      proxy_enabled: true
    })

    const info = await tgapi(`/bot${tg.token}/getWebhookInfo`)
    assert.strictEqual(info.status, 200)
    assert.deepInclude(info.json.result, {
      url: "https://backend.example/hook",
      has_custom_certificate: false,
      pending_update_count: 0
    })
    assert.notInclude(info.text, "s3cr3t_-OK")

    const badSecret = await postJson(`/bot${tg.token}/setWebhook`, {
      url: "https://backend.example/x",
      secret_token: "no spaces"
    })
    assert.strictEqual(badSecret.status, 400)
    assert.deepStrictEqual(badSecret.json, {
      ok: false,
      error_code: 400,
      description: "Bad Request: secret token contains unallowed characters"
    })
    const badUrl = await tgapi(`/bot${tg.token}/setWebhook?url=not-a-url`)
    assert.strictEqual(badUrl.status, 400)
    assert.match(badUrl.json.description, /^Bad Request: bad webhook: /)
    assert.strictEqual((await botById(bot.id)).backend_url, "https://backend.example/hook")

    const deleted = await tgapi(`/bot${tg.token}/deleteWebhook`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "drop_pending_updates=true"
    })
    assert.deepStrictEqual(deleted.json, { ok: true, result: true, description: "Webhook was deleted" })
    assert.isFalse((await botById(bot.id)).proxy_enabled)
    assert.strictEqual((await tgapi(`/bot${tg.token}/GetWebhookInfo`)).json.result.url, "")

    assert.deepStrictEqual((await tgapi(`/bot${tg.token}/logOut`)).json, { ok: true, result: true })
    assert.deepStrictEqual((await postJson(`/bot${tg.token}/close`, {})).json, { ok: true, result: true })
    const local = ["setWebhook", "deleteWebhook", "getWebhookInfo", "logOut", "close"]
    assert.deepStrictEqual(callsOf(tg.id).filter((c) => local.includes(c.method)), [])
  })

  it("getWebhookInfo reports pending deliveries and the last forwarding error", async () => {
    const tg = fake.addBot()
    const bot = await addBot(tg)
    const set = await tgapi(`/bot${tg.token}/setWebhook?url=${encodeURIComponent(`${unreachableTelegram}/hook`)}`)
    assert.strictEqual(set.status, 200, set.text)
    await eventually(async () => (await botById(bot.id))?.running === true || undefined)
    fake.userSends(tg.id, { text: "to a backend that is down" })
    const info = await eventually(async () => {
      const answer = await tgapi(`/bot${tg.token}/getWebhookInfo`)
      return answer.json.result.last_error_message === undefined ? undefined : answer.json.result
    })
    assert.strictEqual(info.url, `${unreachableTelegram}/hook`)
    assert.isAbove(info.pending_update_count, 0)
    assert.isAbove(info.last_error_date, 0)
    assert.isString(info.last_error_message)
  })

  it("getUpdates serves the long-poll buffer, never Telegram", async () => {
    const tg = fake.addBot()
    const bot = await addBot(tg, { long_poll_enabled: true })
    const user = fake.addUser()
    const first = fake.userSends(tg.id, { user, text: "buffered one" })
    fake.userSends(tg.id, { user, text: "buffered two" })
    const answer = await eventually(async () => {
      const polled = await tgapi(`/bot${tg.token}/getUpdates?timeout=1`)
      return polled.json?.result?.length === 2 ? polled : undefined
    })
    assert.strictEqual(answer.status, 200)
    const updates = answer.json.result
    assert.deepStrictEqual(updates.map((u: any) => u.message.text), ["buffered one", "buffered two"])
    assert.deepStrictEqual(updates[0].message, first)
    const fromTelegram = [...fake.updatesConfirmed(tg.id), ...fake.pendingUpdates(tg.id)]
      .find((u) => u.message?.text === "buffered one")
    assert.include(answer.text, JSON.stringify(fromTelegram))

    const form = await tgapi(`/bot${tg.token}/getUpdates`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: `offset=${updates[1].update_id + 1}&timeout=0&allowed_updates=${encodeURIComponent("[\"message\"]")}`
    })
    assert.deepStrictEqual(form.json, { ok: true, result: [] })
    assert.isTrue(callsOf(tg.id, "getUpdates").every((c) => Array.isArray(c.params.allowed_updates)))

    const older = postJson(`/bot${tg.token}/getUpdates`, { timeout: 10.5 })
    await polls.untilHeld(bot.id)
    const newer = tgapi(`/bot${tg.token}/getUpdates?timeout=0`)
    const ended = await older
    assert.strictEqual(ended.status, 409)
    assert.deepStrictEqual(ended.json, {
      ok: false,
      error_code: 409,
      description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
    })
    assert.strictEqual((await newer).status, 200)
    assert.isTrue((await botById(bot.id)).long_poll_enabled)
  })

  it("getUpdates reads numbers as Telegram does and refuses bad allowed_updates, changing nothing", async () => {
    const tg = fake.addBot()
    await addBot(tg, { long_poll_enabled: true })
    fake.userSends(tg.id, { text: "one" })
    fake.userSends(tg.id, { text: "two" })
    const first = await eventually(async () => {
      const polled = await tgapi(`/bot${tg.token}/getUpdates?allowed_updates=${encodeURIComponent("[\"message\"]")}`)
      return polled.json?.result?.length === 2 ? polled.json.result[0].update_id as number : undefined
    })
    const texts = (answer: Answer) => answer.json.result.map((u: any) => u.message.text)
    assert.deepStrictEqual(texts(await tgapi(`/bot${tg.token}/getUpdates?offset=${first}.9&limit=1.5`)), ["one"])
    assert.deepStrictEqual(texts(await postJson(`/bot${tg.token}/getUpdates`, { offset: first + 0.5, limit: "1abc" })), [
      "one"
    ])
    assert.deepStrictEqual(
      texts(await tgapi(`/bot${tg.token}/getUpdates`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `offset=${first + 1}.0&limit=5.5&timeout=0.9`
      })),
      ["two"]
    )
    for (
      const bad of [
        "not json",
        `{"message":1}`,
        `["Message"]`,
        `["message", 5]`,
        `["${"a".repeat(65)}"]`,
        JSON.stringify(Array.from({ length: 33 }, (_, i) => `type_${String.fromCharCode(97 + (i % 26))}`))
      ]
    ) {
      const answer = await postJson(`/bot${tg.token}/getUpdates`, { allowed_updates: bad })
      assert.strictEqual(answer.status, 400, bad)
      assert.match(answer.json.description, /^Bad Request: .*allowed_updates/, bad)
    }
    const huge = await postJson(`/bot${tg.token}/getUpdates`, {
      allowed_updates: Array.from({ length: 50_000 }, () => "message")
    })
    assert.strictEqual(huge.status, 400)
    const info = await tgapi(`/bot${tg.token}/getWebhookInfo`)
    assert.deepStrictEqual(info.json.result.allowed_updates, ["message"])
  })

  it("refuses bodies over 1 MiB for the methods it answers itself, with Telegram's 413", async () => {
    const tg = fake.addBot()
    await addBot(tg, { long_poll_enabled: true })
    const big = JSON.stringify({ url: "", padding: "x".repeat(1024 * 1024) })
    assert.strictEqual((await postJson(`/bot${tg.token}/getWebhookInfo`, JSON.parse(big))).status, 413)
    const chunked = await tgapi(`/bot${tg.token}/setWebhook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Blob([big]).stream(),
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(chunked.status, 413)
    assert.deepStrictEqual(chunked.json, { ok: false, error_code: 413, description: "Request Entity Too Large" })
    const boundary = "b"
    const multipart = `--${boundary}\r\n${"content-disposition:;".repeat(40_000)}\r\n\r\nv\r\n--${boundary}--\r\n`
    const answer = await tgapi(`/bot${tg.token}/getWebhookInfo`, {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${boundary}` },
      body: multipart
    })
    assert.strictEqual(answer.status, 200)
    assert.isTrue(answer.json.ok)
  })

  it("getUpdates for a bot without long polling says how to turn it on", async () => {
    const tg = fake.addBot()
    await addBot(tg)
    const answer = await tgapi(`/bot${tg.token}/getUpdates`)
    assert.strictEqual(answer.status, 409)
    assert.strictEqual(answer.json.error_code, 409)
    assert.include(answer.json.description, "long_poll_enabled")
  })
})

describe("/tgapi: capture of what bots send", () => {
  it("stores sent, uploaded, album, copied and edited messages as 'out' and marks deletes", async () => {
    const tg = fake.addBot({ username: "capture_bot" })
    const bot = await addBot(tg, { manage_enabled: true })
    const user = fake.addUser()
    const incoming = fake.userSends(tg.id, { user, text: "question" })
    await eventually(async () => (await history(bot.id, user.id)).length > 0 || undefined)

    const text = await postJson(`/bot${tg.token}/sendMessage`, {
      chat_id: user.id,
      text: "answer",
      reply_parameters: { message_id: incoming.message_id }
    })
    assert.strictEqual(text.status, 200, text.text)

    const photoForm = new FormData()
    photoForm.set("chat_id", String(user.id))
    photoForm.set("caption", "a picture")
    photoForm.set("photo", new Blob([randomBytes(40_000)], { type: "image/jpeg" }), "p.jpg")
    const photo = await tgapi(`/bot${tg.token}/sendPhoto`, { method: "POST", body: photoForm })
    assert.strictEqual(photo.status, 200, photo.text)

    const albumForm = new FormData()
    albumForm.set("chat_id", String(user.id))
    albumForm.set("media", JSON.stringify([
      { type: "photo", media: "attach://one", caption: "album one" },
      { type: "photo", media: "attach://two" }
    ]))
    albumForm.set("one", new Blob([randomBytes(10_000)], { type: "image/jpeg" }), "1.jpg")
    albumForm.set("two", new Blob([randomBytes(10_000)], { type: "image/jpeg" }), "2.jpg")
    const album = await tgapi(`/bot${tg.token}/sendMediaGroup`, { method: "POST", body: albumForm })
    assert.strictEqual(album.status, 200, album.text)
    assert.strictEqual(album.json.result.length, 2)

    const copy = await tgapi(`/bot${tg.token}/copyMessage`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        chat_id: String(user.id),
        from_chat_id: String(user.id),
        message_id: String(photo.json.result.message_id),
        caption: "copied caption"
      }).toString()
    })
    assert.strictEqual(copy.status, 200, copy.text)

    const edit = await postJson(`/bot${tg.token}/editMessageText`, {
      chat_id: user.id,
      message_id: text.json.result.message_id,
      text: "answer, edited"
    })
    assert.strictEqual(edit.status, 200, edit.text)

    const gone = await postJson(`/bot${tg.token}/sendMessage`, { chat_id: user.id, text: "to be deleted" })
    const deleted = await tgapi(
      `/bot${tg.token}/deleteMessage?chat_id=${user.id}&message_id=${gone.json.result.message_id}`
    )
    assert.deepStrictEqual(deleted.json, { ok: true, result: true })

    const stored = await history(bot.id, user.id)
    const byId = new Map(stored.map((m) => [m.id, m]))
    const photoSizes = photo.json.result.photo
    assert.deepInclude(byId.get(text.json.result.message_id), {
      text: "answer, edited",
      direction: "out",
      reply_to_message_id: incoming.message_id,
      user_id: tg.id,
      username: "capture_bot"
    })
    assert.notProperty(byId.get(text.json.result.message_id), "deleted")
    assert.isAbove(byId.get(text.json.result.message_id).edit_date, 0)
    assert.deepInclude(byId.get(photo.json.result.message_id), {
      text: "a picture",
      direction: "out",
      media_type: "photo",
      file_id: photoSizes.at(-1).file_id
    })
    for (const [i, sent] of album.json.result.entries()) {
      assert.deepInclude(byId.get(sent.message_id), {
        text: i === 0 ? "album one" : "",
        direction: "out",
        media_type: "photo",
        file_id: sent.photo.at(-1).file_id
      })
    }
    assert.deepInclude(byId.get(copy.json.result.message_id), {
      text: "copied caption",
      direction: "out",
      media_type: "photo",
      file_id: photoSizes.at(-1).file_id
    })
    assert.deepInclude(byId.get(gone.json.result.message_id), { text: "to be deleted", deleted: true })
    assert.deepInclude(byId.get(incoming.message_id), { direction: "in" })
    assert.notProperty(byId.get(incoming.message_id), "deleted")
  })

  it("keeps no history for bots without manage_enabled, and failed calls store nothing", async () => {
    const tg = fake.addBot()
    const quiet = await addBot(tg)
    const user = fake.addUser()
    const unseen = await postJson(`/bot${tg.token}/sendMessage`, { chat_id: user.id, text: "unseen" })
    assert.strictEqual(unseen.status, 200)
    assert.deepStrictEqual(await history(quiet.id, user.id), [])

    const managed = fake.addBot()
    const bot = await addBot(managed, { manage_enabled: true })
    fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" })
    const blocked = await postJson(`/bot${managed.token}/sendMessage`, { chat_id: user.id, text: "no" })
    assert.strictEqual(blocked.status, 403)
    assert.deepStrictEqual(await history(bot.id, user.id), [])
  })
})

describe("/tgapi: when Telegram cannot be reached", () => {
  it("logs no token at any level when Telegram dies in the middle of a streamed upload", async () => {
    const dying = createServer((req) => req.once("data", () => req.socket.destroy()))
    await new Promise<void>((resolve) => dying.listen(0, "127.0.0.1", resolve))
    const { port } = dying.address() as AddressInfo
    const cut = await startServer({ telegramApi: `http://127.0.0.1:${port}` })
    try {
      const token = "4343:AAproxy-secret-token_dies-mid-upload"
      await addBot({ id: 4343, token, username: "", first_name: "" }, {}, cut)
      for (let i = 0; i < 3; i++) {
        const upload = new FormData()
        upload.set("chat_id", "1")
        upload.set("document", new Blob([randomBytes(2 * 1024 * 1024)]), "f.bin")
        const answer = await tgapi(`/bot${token}/sendDocument`, { method: "POST", body: upload }, cut.baseUrl)
        assert.strictEqual(answer.status, 502)
        assert.notInclude(answer.text, token)
      }
      await cut.close()
      assert.isAbove(cut.logs.length, 0)
      for (const line of cut.logs) {
        assert.notInclude(line, token)
        assert.notInclude(line, token.split(":")[1]!)
      }
    } finally {
      await cut.close()
      await new Promise((resolve) => dying.close(resolve))
    }
  })

  it("answers a Telegram-shaped 502 that names neither the token nor the URL, and logs no token", async () => {
    const offline = await startServer({ telegramApi: unreachableTelegram })
    try {
      const token = "4242:AAproxy-secret-token_unreachable"
      await addBot({ id: 4242, token, username: "", first_name: "" }, { manage_enabled: true }, offline)
      const answer = await postJson(`/bot${token}/sendMessage`, { chat_id: 1, text: "x" }, offline.baseUrl)
      assert.strictEqual(answer.status, 502)
      assert.strictEqual(answer.json.ok, false)
      assert.strictEqual(answer.json.error_code, 502)
      assert.match(answer.json.description, /^Bad Gateway: /)
      const download = await tgapi(`/file/bot${token}/photos/x.jpg`, {}, offline.baseUrl)
      assert.strictEqual(download.status, 502)
      const upload = new FormData()
      upload.set("chat_id", "1")
      upload.set("document", new Blob([randomBytes(256 * 1024)]), "f.bin")
      const streamed = await tgapi(`/bot${token}/sendDocument`, { method: "POST", body: upload }, offline.baseUrl)
      assert.strictEqual(streamed.status, 502)
      for (const text of [answer.text, download.text, streamed.text]) assert.notInclude(text, "127.0.0.1")
      assert.isAbove(offline.logs.length, 0)
      for (const text of [answer.text, download.text, streamed.text, ...offline.logs]) {
        assert.notInclude(text, token)
        assert.notInclude(text, token.split(":")[1]!)
      }
    } finally {
      await offline.close()
    }
  })
})
