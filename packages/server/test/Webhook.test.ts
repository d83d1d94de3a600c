import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let publicUrl: string

/** A port nothing listens on right now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as AddressInfo).port
      probe.close(() => resolve(port))
    })
  })

beforeAll(async () => {
  fake = await FakeTelegram.start()
  const port = await freePort()
  publicUrl = `http://127.0.0.1:${port}`
  server = await startServer({ telegramApi: fake.apiRoot, port, publicUrl })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})


const botById = async (id: number) => (await server.call("/api/bots")).json.find((b: any) => b.id === id)

const addManagedBot = async (tg: FakeTelegram.FakeBot) => {
  const reply = await server.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })
  assert.strictEqual(reply.status, 200, reply.text)
  const id: number = reply.json.id
  await fake.waitForPoll(tg.id)
  return id
}

const setWebhookMode = async (id: number, webhook_mode: boolean) => {
  const reply = await server.call("/api/bots/update", { body: { id, webhook_mode } })
  assert.strictEqual(reply.status, 200, reply.text)
  assert.strictEqual(reply.json.webhook_mode, webhook_mode)
}

const storedTexts = async (botId: number, chatId: number): Promise<Array<string>> =>
  (await server.call(`/api/messages?bot_id=${botId}&chat_id=${chatId}`)).json.map((m: any) => m.text)

const captured = (botId: number, chatId: number, text: string) =>
  eventually(async () => (await storedTexts(botId, chatId)).includes(text) || undefined)

const post = async (botId: number | string, body: string, secret?: string) => {
  const response = await fetch(`${server.baseUrl}/telegram/webhook/${botId}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret === undefined ? {} : { "x-telegram-bot-api-secret-token": secret })
    },
    body
  })
  const text = await response.text()
  return { status: response.status, text, json: text === "" ? undefined : JSON.parse(text) }
}

const forged = (updateId: number, chatId: number, text: string) =>
  JSON.stringify({
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1,
      chat: { id: chatId, type: "private" },
      from: { id: chatId, is_bot: false, first_name: "X" },
      text
    }
  })

describe("webhook mode", () => {
  it("registers a webhook, takes updates through it, rejects bad secrets, unregisters when disabled", async () => {
    const tg = fake.addBot({ username: "hooked_bot" })
    const id = await addManagedBot(tg)
    await setWebhookMode(id, true)

    const registered = await fake.waitForCall((c) => c.botId === tg.id && c.method === "setWebhook")
    assert.strictEqual(registered.status, 200)
    assert.strictEqual(registered.params.url, `${publicUrl}/telegram/webhook/${id}`)
    const secret = registered.params.secret_token as string
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/)
    assert.include(registered.params.allowed_updates as Array<string>, "chat_member")
    await eventually(async () => (await botById(id))?.running === true || undefined)
    assert.notInclude((await server.call("/api/bots")).text, secret)
    assert.notInclude(server.logs.join("\n"), secret)

    const user = fake.addUser({ first_name: "Wes" })
    fake.userSends(tg.id, { user, text: "through the webhook" })
    await captured(id, user.id, "through the webhook")
    await eventually(() => fake.updatesConfirmed(tg.id).length === 1 || undefined)
    const pollsAfter = fake.calls.filter((c) =>
      c.botId === tg.id && c.method === "getUpdates" && c.receivedAt > registered.receivedAt
    )
    assert.deepStrictEqual(pollsAfter, [])

    assertError(await post(id, forged(900001, user.id, "forged wrong"), "x".repeat(43)), 401, "unauthorized")
    assertError(await post(id, forged(900002, user.id, "forged short"), "short"), 401, "unauthorized")
    assertError(await post(id, forged(900003, user.id, "forged none")), 401, "unauthorized")
    assertError(await post(9999, forged(900004, user.id, "unknown bot"), secret), 404, "not_found")
    assertError(await post("abc", forged(900005, user.id, "bad id"), secret), 404, "not_found")
    assert.strictEqual((await post(id, "not json", secret)).status, 400)
    assert.strictEqual((await post(id, JSON.stringify({ update_id: 1.5 }), secret)).status, 400)
    assertError(await post(id, forged(900009, user.id, "x".repeat(1024 * 1024)), secret), 413, "payload_too_large")

    const direct = await post(id, forged(900006, user.id, "direct post"), secret)
    assert.strictEqual(direct.status, 200, direct.text)
    assert.deepStrictEqual(direct.json, {})
    await captured(id, user.id, "direct post")
    const texts = await storedTexts(id, user.id)
    for (const text of ["forged wrong", "forged short", "forged none", "unknown bot", "bad id"]) {
      assert.notInclude(texts, text)
    }

    const disabled = await server.call(`/api/bots/toggle-disabled?id=${id}`, { method: "POST" })
    assert.strictEqual(disabled.status, 200, disabled.text)
    const removed = await fake.waitForCall((c) => c.botId === tg.id && c.method === "deleteWebhook")
    assert.notStrictEqual(removed.params.drop_pending_updates, true)
    await eventually(async () => (await botById(id))?.running === false || undefined)
    assertError(await post(id, forged(900007, user.id, "while disabled"), secret), 404, "not_found")

    fake.userSends(tg.id, { user, text: "sent while disabled" })
    // A window in which nobody may take the update from Telegram: nothing to wait for but time.
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.strictEqual(fake.pendingUpdates(tg.id).length, 1)
    await setWebhookMode(id, false)
    const enabled = await server.call(`/api/bots/toggle-disabled?id=${id}`, { method: "POST" })
    assert.strictEqual(enabled.status, 200, enabled.text)
    await fake.waitForPoll(tg.id)
    await captured(id, user.id, "sent while disabled")
    assert.strictEqual(fake.calls.filter((c) => c.botId === tg.id && c.method === "setWebhook").length, 1)
    assertError(await post(id, forged(900008, user.id, "after switching back"), secret), 404, "not_found")
  })

  it("switches from webhook back to polling without losing what Telegram holds", async () => {
    const tg = fake.addBot({ username: "switching_bot" })
    const id = await addManagedBot(tg)
    await setWebhookMode(id, true)
    await fake.waitForCall((c) => c.botId === tg.id && c.method === "setWebhook")
    await eventually(async () => (await botById(id))?.running === true || undefined)

    const user = fake.addUser({ first_name: "Pia" })
    fake.userSends(tg.id, { user, text: "first by webhook" })
    await captured(id, user.id, "first by webhook")

    await setWebhookMode(id, false)
    const removed = await fake.waitForCall((c) => c.botId === tg.id && c.method === "deleteWebhook")
    assert.notStrictEqual(removed.params.drop_pending_updates, true)
    fake.userSends(tg.id, { user, text: "then by polling" })
    await fake.waitForPoll(tg.id)
    await captured(id, user.id, "then by polling")
    await eventually(async () => (await botById(id))?.running === true || undefined)
  })

  it("refuses webhook mode without BOTRELAY_PUBLIC_URL", async () => {
    const plain = await startServer({ telegramApi: fake.apiRoot })
    try {
      const tg = fake.addBot()
      const added = await plain.call("/api/bots/add", { body: { token: tg.token } })
      assert.strictEqual(added.status, 200, added.text)
      const reply = await plain.call("/api/bots/update", { body: { id: added.json.id, webhook_mode: true } })
      assertError(reply, 400, "invalid_request")
      assert.isTrue(reply.json.details.some((d: any) => d.path === "webhook_mode"), reply.text)
      assert.include(reply.json.error, "BOTRELAY_PUBLIC_URL")
      assert.isFalse((await plain.call("/api/bots")).json[0].webhook_mode)
      assert.isFalse(fake.calls.some((c) => c.botId === tg.id && c.method === "setWebhook"))
    } finally {
      await plain.close()
    }
  })
})
