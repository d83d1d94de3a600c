import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import type { Layer } from "effect"
import { recordingTracer, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
const servers: Array<TestServer> = []

beforeAll(async () => {
  fake = await FakeTelegram.start()
})
afterAll(async () => {
  for (const server of servers) await server.close()
  await fake?.close()
})

const start = async (telegramApi?: string, extra?: Layer.Layer<never>) => {
  const server = await startServer({
    ...(telegramApi === undefined ? {} : { telegramApi }),
    ...(extra === undefined ? {} : { extra })
  })
  servers.push(server)
  return server
}

const assertNoSecret = (server: TestServer, texts: ReadonlyArray<string>, secrets: ReadonlyArray<string>) => {
  for (const secret of secrets) {
    for (const text of texts) assert.notInclude(text, secret)
    for (const line of server.logs) assert.notInclude(line, secret)
  }
}

describe("secrets", () => {
  it("a bot token never reaches error bodies or logs when Telegram is unreachable", async () => {
    const server = await start()
    const token = "4242:unreachable-secret-token"
    const bot = (await server.call("/api/bots/add", { body: { token, secret_token: "webhook_secret_1" } })).json
    const sent = await server.call("/api/messages/send", { body: { bot_id: bot.id, chat_id: 1, text: "x" } })
    assert.strictEqual(sent.status, 503)
    const validated = await server.call(`/api/bots/validate?token=${encodeURIComponent(token)}`)
    assert.strictEqual(validated.status, 503)
    const duplicate = await server.call("/api/bots/add", { body: { token } })
    assert.strictEqual(duplicate.status, 409)
    assert.isAbove(server.logs.length, 0)
    assertNoSecret(server, [sent.text, validated.text, duplicate.text], [token, "webhook_secret_1", server.adminKey])
  })

  it("a bot token never reaches error bodies or logs when Telegram says no", async () => {
    const server = await start(fake.apiRoot)
    const tg = fake.addBot()
    const bot = (await server.call("/api/bots/add", { body: { token: tg.token } })).json
    fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: bot was blocked by the user" })
    const blocked = await server.call("/api/messages/send", { body: { bot_id: bot.id, chat_id: 1, text: "x" } })
    assert.strictEqual(blocked.status, 502)
    assert.include(blocked.json.error, "bot was blocked by the user")
    fake.failNext("sendMessage", { error_code: 500, description: "Internal Server Error" })
    const failed = await server.call("/api/messages/send", { body: { bot_id: bot.id, chat_id: 1, text: "x" } })
    assert.strictEqual(failed.status, 502)
    const rejected = await server.call(`/api/bots/validate?token=${encodeURIComponent(`${tg.id}:wrong`)}`)
    assert.strictEqual(rejected.status, 400)
    const bad = await server.call("/api/bots/add", { body: { token: `${tg.id}: spaced`, secret_token: "bad secret" } })
    assert.strictEqual(bad.status, 400)
    assertNoSecret(server, [blocked.text, failed.text, rejected.text, bad.text], [tg.token, `${tg.id}:wrong`, "bad secret"])
  })

  it("spans carry neither tokens nor keys", async () => {
    const tracing = recordingTracer()
    const server = await start(fake.apiRoot, tracing.layer)
    const tg = fake.addBot()
    const bot = (await server.call("/api/bots/add", { body: { token: tg.token, secret_token: "span_secret" } })).json
    assert.strictEqual((await server.call(`/api/bots/validate?token=${encodeURIComponent(tg.token)}`)).status, 200)
    assert.strictEqual((await server.call("/api/messages/send", { body: { bot_id: bot.id, chat_id: 1, text: "x" } })).status, 502)
    const names = tracing.spans.map((s) => s.name)
    assert.include(names, "Messages.send")
    assert.isTrue(tracing.spans.some((span) =>
      span.name.startsWith("TelegramClient.") && [...span.attributes].some(([k, v]) => k === "telegram.method" && v === "sendMessage")
    ))
    const recorded = JSON.stringify(tracing.spans.map((s) => [s.name, [...s.attributes]]))
    for (const secret of [tg.token, encodeURIComponent(tg.token), tg.token.split(":")[1]!, "span_secret", server.adminKey]) {
      assert.notInclude(recorded, secret)
    }
  })
})
