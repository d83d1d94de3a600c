import { createHash, randomBytes } from "node:crypto"
import * as Http from "node:http"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let tg: FakeTelegram.FakeBot
let botId: number
let user: { id: number }

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  tg = fake.addBot({ username: "media_bot", first_name: "Media" })
  user = fake.addUser({ first_name: "Ann" })
  botId = (await server.call("/api/bots/add", { body: { token: tg.token } })).json.id
})
afterAll(async () => {
  if (server !== undefined) assert.notInclude(server.logs.join("\n"), tg.token.split(":")[1]!, "a log line holds the token")
  await server?.close()
  await fake?.close()
})

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** A multipart POST of `fields` (in order) and a `file` part, as curl -F or a browser's FormData send it. */
const upload = async (
  fields: ReadonlyArray<readonly [string, string]>,
  file: { readonly bytes: Buffer; readonly name: string; readonly type: string } | undefined,
  options: { readonly key?: string; readonly fileFirst?: boolean; readonly after?: ReadonlyArray<readonly [string, string]> } = {}
) => {
  const form = new FormData()
  const addFile = () => {
    if (file !== undefined) form.append("file", new Blob([new Uint8Array(file.bytes)], { type: file.type }), file.name)
  }
  if (options.fileFirst === true) addFile()
  for (const [name, value] of fields) form.append(name, value)
  if (options.fileFirst !== true) addFile()
  for (const [name, value] of options.after ?? []) form.append(name, value)
  const response = await fetch(`${server.baseUrl}/api/messages/send-media`, {
    method: "POST",
    headers: { authorization: `Bearer ${options.key ?? server.adminKey}` },
    body: form
  })
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, text, json }
}

const sendMedia = (body: Record<string, unknown>, key?: string) =>
  server.call("/api/messages/send-media", { body: { bot_id: botId, chat_id: user.id, ...body }, ...(key === undefined ? {} : { key }) })

const history = async () => (await server.call(`/api/messages?bot_id=${botId}&chat_id=${user.id}`)).json as Array<any>

describe("POST /api/messages/send-media, multipart", () => {
  it("streams a 3 MiB file to Telegram, byte for byte, and stores and returns the message", async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 17)
    const reply = await upload(
      [["bot_id", String(botId)], ["chat_id", String(user.id)], ["type", "document"], ["caption", "the report"]],
      { bytes, name: "report.pdf", type: "application/pdf" }
    )
    assert.strictEqual(reply.status, 200, reply.text)
    const uploaded = fake.uploads(tg.id).at(-1)!
    assert.strictEqual(uploaded.method, "sendDocument")
    assert.strictEqual(uploaded.field, "document")
    assert.strictEqual(uploaded.file_name, "report.pdf")
    assert.strictEqual(uploaded.mime_type, "application/pdf")
    assert.strictEqual(uploaded.file_size, bytes.length)
    assert.strictEqual(uploaded.sha256, sha256(bytes))
    assert.strictEqual(sha256(fake.fileBytes(uploaded.file_id)!), sha256(bytes))
    const sent = fake.sent(tg.id).at(-1)!.message
    assert.deepStrictEqual(reply.json, {
      id: sent.message_id,
      chat_id: user.id,
      bot_id: botId,
      user_id: tg.id,
      username: "media_bot",
      first_name: "Media",
      last_name: "",
      text: "the report",
      date: sent.date,
      media_type: "document",
      file_id: uploaded.file_id,
      direction: "out",
      edit_date: 0,
      delivery: "sent",
      delivery_error: "",
      delivery_at: reply.json.delivery_at,
      local_id: reply.json.local_id
    })
    assert.deepStrictEqual((await history())[0], reply.json)
  })

  it("streams a body without a declared length (chunked) too", async () => {
    const boundary = "----botrelaytest"
    const bytes = randomBytes(1536 * 1024)
    const head = Buffer.from(
      [["bot_id", String(botId)], ["chat_id", String(user.id)], ["type", "voice"]]
        .map(([name, value]) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
        .join("") +
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="note.ogg"\r\ncontent-type: audio/ogg\r\n\r\n`
    )
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const chunks = [head, bytes.subarray(0, 500_000), bytes.subarray(500_000), tail]
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift()
        if (next === undefined) controller.close()
        else controller.enqueue(next)
      }
    })
    const response = await fetch(`${server.baseUrl}/api/messages/send-media`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminKey}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: "half"
    } as RequestInit)
    const json = await response.json()
    assert.strictEqual(response.status, 200, JSON.stringify(json))
    assert.strictEqual(json.media_type, "voice")
    const uploaded = fake.uploads(tg.id).at(-1)!
    assert.strictEqual(uploaded.method, "sendVoice")
    assert.strictEqual(uploaded.sha256, sha256(bytes))
  })

  it("passes reply_to_message_id, disable_notification and reply_markup on", async () => {
    const first = (await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text: "hi" } })).json
    const markup = { inline_keyboard: [[{ text: "Open", url: "https://example.com" }]] }
    const reply = await upload(
      [
        ["bot_id", String(botId)],
        ["chat_id", String(user.id)],
        ["type", "photo"],
        ["reply_to_message_id", String(first.id)],
        ["disable_notification", "true"],
        ["reply_markup", JSON.stringify(markup)]
      ],
      { bytes: randomBytes(2048), name: "cat.jpg", type: "image/jpeg" }
    )
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.media_type, "photo")
    assert.strictEqual(reply.json.reply_to_message_id, first.id)
    const call = fake.calls.filter((c) => c.method === "sendPhoto").at(-1)!
    assert.strictEqual(call.params.disable_notification, "true")
    assert.deepStrictEqual(JSON.parse(call.params.reply_markup as string), markup)
    assert.deepStrictEqual(fake.sent(tg.id).at(-1)!.message.reply_markup, markup)
  })

  it("400 and nothing sent: fields after the file, a file before the fields, no file, bad fields", async () => {
    const uploads = fake.uploads(tg.id).length
    const sends = fake.sent(tg.id).length
    const fields = [["bot_id", String(botId)], ["chat_id", String(user.id)], ["type", "document"]] as const
    const file = { bytes: randomBytes(1024 * 1024 + 5), name: "a.bin", type: "application/octet-stream" }
    assertError(await upload(fields, file, { after: [["caption", "late"]] }), 400, "invalid_request")
    assertError(await upload(fields, file, { fileFirst: true }), 400, "invalid_request")
    assertError(await upload(fields, undefined), 400, "invalid_request")
    for (const bad of [
      [["bot_id", "x"], ["chat_id", String(user.id)], ["type", "document"]],
      [["bot_id", String(botId)], ["chat_id", String(user.id)], ["type", "video_note"]],
      [["bot_id", String(botId)], ["type", "document"]],
      [["bot_id", String(botId)], ["chat_id", String(user.id)], ["type", "document"], ["caption", "x".repeat(1025)]],
      [["bot_id", String(botId)], ["chat_id", String(user.id)], ["type", "sticker"], ["caption", "no"]],
      [["bot_id", String(botId)], ["chat_id", String(user.id)], ["type", "photo"], ["reply_markup", "{\"nope\":1}"]]
    ] as const) {
      const reply = await upload(bad, file)
      assertError(reply, 400, "invalid_request")
      assert.isArray(reply.json.details)
    }
    assert.strictEqual(fake.uploads(tg.id).length, uploads)
    assert.strictEqual(fake.sent(tg.id).length, sends)
  })

  it("413 for a body declared over Telegram's 50 MB limit, before any of it is read", async () => {
    const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = Http.request(`${server.baseUrl}/api/messages/send-media`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${server.adminKey}`,
          "content-type": "multipart/form-data; boundary=x",
          "content-length": String(51 * 1024 * 1024)
        }
      }, (response) => {
        let body = ""
        response.on("data", (chunk: Buffer) => body += chunk.toString())
        response.on("end", () => {
          request.destroy()
          resolve({ status: response.statusCode!, body })
        })
      })
      request.on("error", reject)
      request.flushHeaders()
    })
    assert.strictEqual(reply.status, 413)
    assert.strictEqual(JSON.parse(reply.body).code, "payload_too_large")
  })

  it("403 outside the key's scope, 404 for an unknown bot, 409 for a disabled one; nothing sent", async () => {
    const other = (await server.call("/api/bots/add", { body: { token: fake.addBot().token } })).json.id
    const op = (await server.call("/api/auth/api-keys", { body: { name: "op", role: "operator", bot_ids: [other] } })).json.key
    const uploads = fake.uploads(tg.id).length
    const file = { bytes: randomBytes(100), name: "a.txt", type: "text/plain" }
    const fields = (id: number) => [["bot_id", String(id)], ["chat_id", String(user.id)], ["type", "document"]] as const
    assertError(await upload(fields(botId), file, { key: op }), 403, "forbidden")
    assertError(await upload(fields(999999), file), 404, "bot_not_found")
    await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
    try {
      assertError(await upload(fields(botId), file), 409, "bot_disabled")
    } finally {
      await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
    }
    assert.strictEqual(fake.uploads(tg.id).length, uploads)
  })

  it("502 with Telegram's description when Telegram refuses the upload", async () => {
    const reply = await upload(
      [["bot_id", String(botId)], ["chat_id", "123456789"], ["type", "document"]],
      { bytes: randomBytes(100), name: "a.txt", type: "text/plain" }
    )
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "chat not found")
    assert.notInclude(reply.text, tg.token)
  })
})

describe("POST /api/messages/send-media, JSON", () => {
  it("sends a photo Telegram already has by file_id, with caption and reply_markup", async () => {
    const photo = fake.userSends(tg.id, { user: fake.addUser(), photo: true }).photo!.at(-1)!
    const markup = { inline_keyboard: [[{ text: "Like", callback_data: "like" }]] }
    const reply = await sendMedia({ type: "photo", file_id: photo.file_id, caption: "again", reply_markup: markup })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.media_type, "photo")
    assert.strictEqual(reply.json.file_id, photo.file_id)
    assert.strictEqual(reply.json.text, "again")
    const call = fake.calls.filter((c) => c.method === "sendPhoto").at(-1)!
    assert.strictEqual(call.params.photo, photo.file_id)
    assert.deepStrictEqual(call.params.reply_markup, markup)
    assert.deepStrictEqual((await history())[0], reply.json)
  })

  it("sends a document Telegram fetches from a url", async () => {
    const reply = await sendMedia({ type: "document", url: "https://example.com/files/guide.pdf", disable_notification: true })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.media_type, "document")
    const sent = fake.sent(tg.id).at(-1)!
    assert.strictEqual(sent.method, "sendDocument")
    assert.strictEqual(sent.message.document?.file_name, "guide.pdf")
    const call = fake.calls.filter((c) => c.method === "sendDocument").at(-1)!
    assert.strictEqual(call.params.disable_notification, true)
  })

  it("reads the body as JSON whatever its content type, as curl -d sends it", async () => {
    const photo = fake.userSends(tg.id, { user: fake.addUser(), photo: true }).photo!.at(-1)!
    const response = await fetch(`${server.baseUrl}/api/messages/send-media`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminKey}`, "content-type": "application/x-www-form-urlencoded" },
      body: JSON.stringify({ bot_id: botId, chat_id: user.id, type: "photo", file_id: photo.file_id })
    })
    assert.strictEqual(response.status, 200)
    assert.strictEqual((await response.json()).file_id, photo.file_id)
    const broken = await server.call("/api/messages/send-media", { raw: "{\"bot_id\": " })
    assertError(broken, 400, "invalid_json")
    const tooBig = await server.call("/api/messages/send-media", {
      body: { bot_id: botId, chat_id: user.id, type: "photo", file_id: "x", caption: "y".repeat(1024 * 1024) }
    })
    assertError(tooBig, 413, "payload_too_large")
  })

  it("400 for both or neither of file_id and url, a bad type or url; nothing sent", async () => {
    const sends = fake.sent(tg.id).length
    for (const body of [
      { type: "photo" },
      { type: "photo", file_id: "a", url: "https://example.com/a.jpg" },
      { type: "gif", file_id: "a" },
      { type: "photo", url: "ftp://example.com/a.jpg" },
      { type: "photo", file_id: "" },
      { type: "photo", file_id: "a", reply_markup: [1] }
    ]) {
      assertError(await sendMedia(body), 400, "invalid_request")
    }
    assert.strictEqual(fake.sent(tg.id).length, sends)
  })

  it("502 with Telegram's description for a file_id Telegram does not know", async () => {
    const reply = await sendMedia({ type: "photo", file_id: "AgACAgIAAxkBAAIunknown" })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "wrong file identifier")
  })
})

describe("POST /api/messages/send, more", () => {
  it("passes reply_markup and disable_notification on; the keyboard is on the sent message", async () => {
    const markup = { inline_keyboard: [[{ text: "Yes", callback_data: "y" }, { text: "No", callback_data: "n" }]] }
    const reply = await server.call("/api/messages/send", {
      body: { bot_id: botId, chat_id: user.id, text: "Sure?", reply_markup: markup, disable_notification: true }
    })
    assert.strictEqual(reply.status, 200, reply.text)
    const call = fake.calls.filter((c) => c.method === "sendMessage").at(-1)!
    assert.deepStrictEqual(call.params.reply_markup, markup)
    assert.strictEqual(call.params.disable_notification, true)
    assert.deepStrictEqual(fake.sent(tg.id).at(-1)!.message.reply_markup, markup)
    for (const other of [{ remove_keyboard: true }, { force_reply: true, input_field_placeholder: "Why?" }, {
      keyboard: [["A", { text: "B" }]],
      resize_keyboard: true
    }]) {
      assert.strictEqual(
        (await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: user.id, text: "k", reply_markup: other } }))
          .status,
        200
      )
      assert.deepStrictEqual(fake.calls.filter((c) => c.method === "sendMessage").at(-1)!.params.reply_markup, other)
    }
  })

  it("400 for a reply_markup that is none of Telegram's four; nothing sent", async () => {
    const sends = fake.sent(tg.id).length
    for (const markup of ["x", [], { inline_keyboard: "x" }, { remove_keyboard: false }, { something: 1 }]) {
      const reply = await server.call("/api/messages/send", {
        body: { bot_id: botId, chat_id: user.id, text: "k", reply_markup: markup }
      })
      assertError(reply, 400, "invalid_request")
      assert.include(reply.json.error, "reply_markup")
    }
    assert.strictEqual(fake.sent(tg.id).length, sends)
  })
})
