import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { eventually, FakeTelegram } from "@botrelay/testing"
import { afterAll, afterEach, assert, beforeAll, beforeEach, describe, it } from "vitest"
import { type BotrelayApp, BotrelayError, createBotrelay, Facade } from "../src/index.js"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The BotrelayError `promise` rejects with. */
const failure = async (promise: Promise<unknown>): Promise<BotrelayError> => {
  try {
    await promise
  } catch (error) {
    assert.instanceOf(error, BotrelayError)
    return error
  }
  throw new Error("expected a BotrelayError")
}

let fake: FakeTelegram.FakeTelegram
let dir: string
let app: BotrelayApp

beforeAll(async () => {
  fake = await FakeTelegram.start()
})
afterAll(async () => {
  await fake?.close()
})
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "botrelay-facade-"))
  app = await createBotrelay({
    database: join(dir, "data", "botrelay.db"),
    telegramApi: fake.apiRoot,
    logLevel: "None"
  })
})
afterEach(async () => {
  await app?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("bots", () => {
  it("add, list, get, update, toggleDisabled and remove with the API's JSON shapes", async () => {
    const tg = fake.addBot()
    const added = await app.bots.add({ token: tg.token, name: "relay" })
    const mask = `${tg.id}:…${tg.token.slice(-4)}`
    assert.strictEqual(added.token, mask)
    assert.isTrue(added.token_set)
    assert.strictEqual(added.secret_token, "")
    assert.isFalse(added.secret_token_set)
    assert.strictEqual(added.name, "relay")
    assert.strictEqual(added.source, "web")
    assert.isFalse(added.disabled)
    assert.deepStrictEqual(await app.bots.list(), [added])
    assert.deepStrictEqual(await app.bots.get(added.id), added)
    JSON.parse(JSON.stringify(added))

    const updated = await app.bots.update({ id: added.id, description: "the relay", secret_token: "s3cret" })
    assert.strictEqual(updated.description, "the relay")
    assert.strictEqual(updated.secret_token, "***")
    assert.isTrue(updated.secret_token_set)
    assert.strictEqual(updated.token, mask)

    const disabled = await app.bots.toggleDisabled(added.id)
    assert.isTrue(disabled.disabled)
    assert.isFalse((await app.bots.toggleDisabled(added.id)).disabled)

    const removed = await app.bots.remove(added.id)
    assert.strictEqual(removed.id, added.id)
    assert.strictEqual(removed.token, mask)
    assert.notInclude(JSON.stringify([added, updated, removed]), tg.token.split(":")[1]!)
    assert.deepStrictEqual(await app.bots.list(), [])
  })

  it("refuses invalid input with invalid_request and its details, and changes nothing", async () => {
    const tg = fake.addBot()
    const bot = await app.bots.add({ token: tg.token })
    const before = await app.bots.list()

    const badAdd = await failure(app.bots.add({ token: "has space" }))
    assert.strictEqual(badAdd.code, "invalid_request")
    assert.strictEqual(badAdd.status, 400)
    assert.strictEqual(badAdd.message, "invalid request: token: token must not contain whitespace")
    assert.deepStrictEqual(badAdd.details, [{ path: "token", message: "token must not contain whitespace" }])
    const badUrl = await failure(app.bots.add({ token: fake.addBot().token, backend_url: "ftp://x" }))
    assert.deepStrictEqual(badUrl.details?.[0], {
      path: "backend_url",
      message: "backend_url must be an absolute http or https URL"
    })

    const badUpdate = await failure(app.bots.update({ id: bot.id, name: 7 as unknown as string }))
    assert.strictEqual(badUpdate.code, "invalid_request")
    assert.strictEqual(badUpdate.details?.[0]?.path, "name")

    const crossField = await failure(app.bots.update({ id: bot.id, proxy_enabled: true }))
    assert.strictEqual(crossField.code, "invalid_request")
    assert.isAbove(crossField.details?.length ?? 0, 0)

    const badId = await failure(app.bots.get(-1))
    assert.strictEqual(badId.code, "invalid_request")
    assert.strictEqual(badId.status, 400)

    assert.deepStrictEqual(await app.bots.list(), before)
  })

  it("answers not found with 404 and a duplicate token with a conflict, never showing the token", async () => {
    const tg = fake.addBot()
    const bot = await app.bots.add({ token: tg.token })

    for (const call of [app.bots.get(bot.id + 100), app.bots.remove(bot.id + 100), app.bots.toggleDisabled(999)]) {
      const missing = await failure(call)
      assert.strictEqual(missing.code, "bot_not_found")
      assert.strictEqual(missing.status, 404)
    }

    const duplicate = await failure(app.bots.add({ token: tg.token }))
    assert.strictEqual(duplicate.code, "duplicate_token")
    assert.strictEqual(duplicate.status, 409)
    assert.notInclude(duplicate.message, tg.token)
    assert.notInclude(duplicate.message, tg.token.split(":")[1]!)
    assert.notInclude(String(duplicate.stack), tg.token)

    const other = fake.addBot()
    const second = await app.bots.add({ token: other.token })
    const clash = await failure(app.bots.update({ id: second.id, token: tg.token }))
    assert.strictEqual(clash.code, "duplicate_token")
    assert.notInclude(clash.message, tg.token)
    assert.notInclude(JSON.stringify(clash.details ?? []), tg.token)
  })
})

describe("routes", () => {
  it("add, list, update, remove and sends", async () => {
    const a = await app.bots.add({ token: fake.addBot().token })
    const b = await app.bots.add({ token: fake.addBot().token })
    const route = await app.routes.add({
      source_bot_id: a.id,
      target_bot_id: b.id,
      action: "copy",
      condition_type: "keyword",
      condition_value: " hello , world "
    })
    assert.strictEqual(route.condition_value, "hello,world")
    assert.isTrue(route.enabled)
    assert.deepStrictEqual(await app.routes.list(), [route])
    assert.deepStrictEqual(await app.routes.list(b.id), [route])
    assert.deepStrictEqual(await app.routes.list(b.id + 100), [])

    const updated = await app.routes.update({ ...route, enabled: false })
    assert.isFalse(updated.enabled)

    const invalid = await failure(
      app.routes.add({ source_bot_id: a.id, target_bot_id: b.id, action: "copy", condition_type: "regex" })
    )
    assert.strictEqual(invalid.code, "invalid_request")
    assert.strictEqual(invalid.details?.[0]?.path, "condition_value")

    const unknownBot = await failure(app.routes.add({ source_bot_id: a.id, target_bot_id: 999, action: "forward" }))
    assert.strictEqual(unknownBot.code, "bot_not_found")

    assert.deepStrictEqual(await app.routes.sends(), [])
    assert.deepStrictEqual(await app.routes.sends({ bot_id: b.id, status: "dead", limit: 5 }), [])
    const badLimit = await failure(app.routes.sends({ limit: 0 }))
    assert.strictEqual(badLimit.code, "invalid_request")
    assert.deepStrictEqual(badLimit.details?.[0], { path: "limit", message: "limit must be an integer from 1 to 500" })

    assert.strictEqual((await app.routes.remove(route.id)).id, route.id)
    assert.deepStrictEqual(await app.routes.list(), [])
    const gone = await failure(app.routes.remove(route.id))
    assert.strictEqual(gone.code, "route_not_found")
    assert.strictEqual(gone.status, 404)
  })
})

describe("tags", () => {
  it("add, list and remove", async () => {
    const bot = await app.bots.add({ token: fake.addBot().token })
    const tag = await app.tags.add({ bot_id: bot.id, chat_id: -100, user_id: 5, tag: " vip ", color: "gold" })
    assert.strictEqual(tag.tag, "vip")
    assert.strictEqual(tag.bot_id, bot.id)
    assert.deepStrictEqual(await app.tags.list(-100), [tag])
    assert.deepStrictEqual(await app.tags.list(-100, 5, bot.id), [tag])
    assert.deepStrictEqual(await app.tags.list(-100, 5, bot.id + 1), [])
    assert.deepStrictEqual(await app.tags.list(-100, 6), [])
    const noBot = await failure(app.tags.add({ bot_id: 999, chat_id: -100, user_id: 5, tag: "x" }))
    assert.strictEqual(noBot.code, "bot_not_found")
    assert.strictEqual((await app.tags.remove(tag.id)).id, tag.id)
    assert.strictEqual((await failure(app.tags.remove(tag.id))).code, "tag_not_found")
    assert.strictEqual((await failure(app.tags.list(1.5))).code, "invalid_request")
  })
})

describe("apiKeys", () => {
  it("create returns the secret once; list never shows it", async () => {
    const created = await app.apiKeys.create({ name: "ops", role: "admin" })
    assert.match(created.key, /^brk_[A-Za-z0-9_-]{43}$/)
    assert.strictEqual(created.role, "admin")
    const listed = await app.apiKeys.list()
    assert.strictEqual(listed.length, 1)
    assert.notProperty(listed[0], "key")
    assert.notInclude(JSON.stringify(listed), created.key)
    const { key: _, ...record } = created
    assert.deepStrictEqual(listed[0], record)

    const last = await failure(app.apiKeys.toggle(created.id))
    assert.strictEqual(last.code, "last_admin_key")
    assert.strictEqual(last.status, 409)
    const operator = await app.apiKeys.create({ name: "op" })
    assert.strictEqual(operator.role, "operator")
    assert.isFalse((await app.apiKeys.toggle(operator.id)).enabled)
    assert.strictEqual((await app.apiKeys.remove(operator.id)).id, operator.id)
    assert.strictEqual((await failure(app.apiKeys.remove(operator.id))).code, "api_key_not_found")
    assert.strictEqual((await failure(app.apiKeys.create({ name: " " }))).code, "invalid_request")
  })
})

describe("messages", () => {
  it("lists what a user sent a managed bot, and sends", async () => {
    const tg = fake.addBot()
    const bot = await app.bots.add({ token: tg.token, manage_enabled: true })
    await fake.waitForPoll(tg.id)
    const sent = fake.userSends(tg.id, { text: "hi" })
    const page = await eventually(async () => {
      const messages = await app.messages.list({ bot_id: bot.id, chat_id: sent.chat.id })
      return messages.length > 0 ? messages : undefined
    })
    assert.strictEqual(page[0]?.text, "hi")
    assert.strictEqual(page[0]?.direction, "in")

    const reply = await app.messages.send({ bot_id: bot.id, chat_id: sent.chat.id, text: "hello back" })
    assert.strictEqual(reply.direction, "out")
    assert.strictEqual(fake.sent(tg.id).at(-1)?.message.text, "hello back")
    const latest = await app.messages.list({ bot_id: bot.id, chat_id: sent.chat.id, limit: 1 })
    assert.deepStrictEqual(latest, [reply])

    const badQuery = await failure(app.messages.list({ bot_id: bot.id, chat_id: sent.chat.id, limit: 1000 }))
    assert.strictEqual(badQuery.code, "invalid_request")
    assert.deepStrictEqual(badQuery.details?.[0], { path: "limit", message: "limit must be an integer from 1 to 200" })
    const empty = await failure(app.messages.send({ bot_id: bot.id, chat_id: sent.chat.id, text: "" }))
    assert.deepStrictEqual(empty.details, [{ path: "text", message: "text must not be empty" }])
  })
})

describe("the HTTP API", () => {
  it("answers the same results and errors through the handler", async () => {
    const { key } = await app.apiKeys.create({ name: "admin", role: "admin" })
    const server = createServer(app.handler)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const call = async (path: string, body?: unknown) => {
        const response = await fetch(`${base}${path}`, {
          method: body === undefined ? "GET" : "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
        return { status: response.status, json: await response.json() }
      }
      const asAnswer = (e: BotrelayError) => ({
        status: e.status,
        json: e.details === undefined
          ? { error: e.message, code: e.code }
          : { error: e.message, code: e.code, details: e.details }
      })
      const tg = fake.addBot()
      const bot = await app.bots.add({ token: tg.token })
      assert.deepStrictEqual(await call("/api/bots"), { status: 200, json: [bot] })
      assert.deepStrictEqual(
        await call("/api/bots/add", { token: "a b", backend_url: "nope" }),
        asAnswer(await failure(app.bots.add({ token: "a b", backend_url: "nope" })))
      )
      assert.deepStrictEqual(
        await call("/api/bots/add", { token: tg.token }),
        asAnswer(await failure(app.bots.add({ token: tg.token })))
      )
      assert.deepStrictEqual(
        await call("/api/routes/sends?limit=0"),
        asAnswer(await failure(app.routes.sends({ limit: 0 })))
      )
      assert.deepStrictEqual(
        await call(`/api/messages?bot_id=${bot.id}&chat_id=1&limit=1000`),
        asAnswer(await failure(app.messages.list({ bot_id: bot.id, chat_id: 1, limit: 1000 })))
      )
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe("close", () => {
  it("stops polling, is idempotent, and later calls fail with code closed", async () => {
    const tg = fake.addBot()
    await app.bots.add({ token: tg.token, manage_enabled: true })
    await fake.waitForPoll(tg.id)
    await app.close()
    const closedAt = Date.now()
    await app.close()
    fake.userSends(tg.id, { text: "after close" })
    await sleep(300)
    assert.strictEqual(fake.pendingUpdates(tg.id).length, 1)
    const polls = fake.calls.filter((c) => c.botId === tg.id && c.method === "getUpdates" && c.receivedAt >= closedAt)
    assert.deepStrictEqual(polls, [])
    const late = await failure(app.bots.list())
    assert.strictEqual(late.code, "closed")
  })

  it("exposes the handler and the module namespace", () => {
    assert.isFunction(app.handler)
    assert.isFunction(app.handler.handles)
    assert.strictEqual(Facade.createBotrelay, createBotrelay)
    assert.strictEqual(Facade.BotrelayError, BotrelayError)
  })
})
