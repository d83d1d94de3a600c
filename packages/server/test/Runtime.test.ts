import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { Duration } from "effect"
import * as Config from "../src/Config.js"
import * as Main from "../src/Main.js"
import { assertError, eventually, fastRuntime, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})


interface Received {
  readonly body: any
  readonly secret: string | undefined
  readonly contentType: string | undefined
}

/** A backend on 127.0.0.1 that records what it receives and answers with `answer` (200 by default). */
const backend = async (answer: (req: IncomingMessage, n: number) => { status: number; body?: string; type?: string } = () => ({ status: 200 })) => {
  const received: Array<Received> = []
  let n = 0
  const http: Server = createServer((req, res) => {
    let text = ""
    req.on("data", (chunk) => text += chunk)
    req.on("end", () => {
      const reply = answer(req, n++)
      if (reply.status >= 200 && reply.status < 300) {
        received.push({
          body: JSON.parse(text),
          secret: req.headers["x-telegram-bot-api-secret-token"] as string | undefined,
          contentType: req.headers["content-type"]
        })
      }
      res.writeHead(reply.status, { "content-type": reply.type ?? "application/json" })
      res.end(reply.body ?? "")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`
  return { url, received, close: () => new Promise<void>((resolve) => http.close(() => resolve())) }
}

const addBot = async (tg: FakeTelegram.FakeBot, body: Record<string, unknown>) => {
  const reply = await server.call("/api/bots/add", { body: { token: tg.token, ...body } })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { id: number }
}

const botById = async (id: number) => (await server.call("/api/bots")).json.find((b: any) => b.id === id)

describe("the runtime", () => {
  it("polls a managed bot, shows it running with its username, and captures incoming messages", async () => {
    const tg = fake.addBot({ username: "history_bot" })
    const bot = await addBot(tg, { manage_enabled: true })
    await eventually(async () => (await botById(bot.id))?.running === true || undefined)
    const user = fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann" })
    const sent = fake.userSends(tg.id, { user, text: "hello relay" })
    const stored = await eventually(async () => {
      const page = await server.call(`/api/messages?bot_id=${bot.id}&chat_id=${user.id}`)
      return page.json.length > 0 ? page.json : undefined
    })
    assert.deepInclude(stored[0], {
      id: sent.message_id,
      chat_id: user.id,
      bot_id: bot.id,
      user_id: user.id,
      username: "ann",
      first_name: "Ann",
      last_name: "Lee",
      text: "hello relay",
      direction: "in",
      edit_date: 0
    })
    const listed = await botById(bot.id)
    assert.strictEqual(listed.username, "history_bot")
    assert.strictEqual(listed.last_error, "")
    assert.notStrictEqual(listed.last_update_at, "")
  })

  it("records edits and button presses", async () => {
    const tg = fake.addBot()
    const bot = await addBot(tg, { manage_enabled: true })
    const user = fake.addUser()
    const sent = fake.userSends(tg.id, { user, text: "first" })
    fake.userEdits(tg.id, user.id, sent.message_id, "second")
    fake.userPresses(tg.id, sent, "buy:42")
    const page = await eventually(async () => {
      const reply = await server.call(`/api/messages?bot_id=${bot.id}&chat_id=${user.id}`)
      return reply.json.length === 2 ? reply.json : undefined
    })
    const edited = page.find((m: any) => m.id === sent.message_id)
    assert.strictEqual(edited.text, "second")
    assert.isAbove(edited.edit_date, 0)
    const press = page.find((m: any) => m.media_type === "callback")
    assert.strictEqual(press.text, "buy:42")
    assert.strictEqual(press.reply_to_message_id, sent.message_id)
    assert.isBelow(press.id, 0)
  })

  it("forwards the original update with the secret header, in order, exactly once, through a failing spell", async () => {
    let failing = 3
    const hook = await backend(() => failing-- > 0 ? { status: 503 } : { status: 200 })
    const steady = await backend()
    try {
      const tg = fake.addBot()
      const other = fake.addBot()
      await addBot(tg, { proxy_enabled: true, backend_url: hook.url, secret_token: "hook_secret" })
      await addBot(other, { proxy_enabled: true, backend_url: steady.url })
      const user = fake.addUser()
      const texts = ["one", "two", "three", "four", "five"]
      for (const text of texts) fake.userSends(tg.id, { user, text })
      fake.userSends(other.id, { user, text: "unaffected" })
      await eventually(() => steady.received.length === 1 || undefined)
      await eventually(() => hook.received.length === texts.length || undefined, 15_000)
      assert.deepStrictEqual(hook.received.map((r) => r.body.message.text), texts)
      const ids = hook.received.map((r) => r.body.update_id)
      assert.deepStrictEqual(ids, [...ids].sort((a, b) => a - b))
      assert.isTrue(hook.received.every((r) => r.secret === "hook_secret" && r.contentType === "application/json"))
      // A window in which no duplicate delivery may come: nothing to wait for but time.
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.strictEqual(hook.received.length, texts.length)
    } finally {
      await hook.close()
      await steady.close()
    }
  }, 30_000)

  it("stops polling a disabled bot within a second and catches up after re-enabling", async () => {
    const tg = fake.addBot()
    const bot = await addBot(tg, { manage_enabled: true })
    await eventually(async () => (await botById(bot.id))?.running === true || undefined)
    await server.call(`/api/bots/toggle-disabled?id=${bot.id}`, { method: "POST" })
    await eventually(async () => (await botById(bot.id))?.running === false || undefined, 1000)
    const polls = () => fake.calls.filter((c) => c.botId === tg.id && c.method === "getUpdates").length
    const before = polls()
    const user = fake.addUser()
    fake.userSends(tg.id, { user, text: "while disabled" })
    // A window in which a disabled bot must not be polled: nothing to wait for but time.
    await new Promise((resolve) => setTimeout(resolve, 500))
    assert.isAtMost(polls() - before, 1)
    const empty = await server.call(`/api/messages?bot_id=${bot.id}&chat_id=${user.id}`)
    assert.deepStrictEqual(empty.json, [])
    await server.call(`/api/bots/toggle-disabled?id=${bot.id}`, { method: "POST" })
    await eventually(async () => {
      const page = await server.call(`/api/messages?bot_id=${bot.id}&chat_id=${user.id}`)
      return page.json.length === 1 || undefined
    })
  })

  it("marks a revoked token unauthorized and stops hammering Telegram", async () => {
    const tg = fake.addBot()
    fake.revoke(tg.id)
    const bot = await addBot(tg, { manage_enabled: true })
    const listed = await eventually(async () => {
      const b = await botById(bot.id)
      return b.last_error.startsWith("unauthorized") ? b : undefined
    })
    assert.notInclude(listed.last_error, tg.token)
    const calls = () => fake.calls.filter((c) => c.botId === tg.id).length
    const before = calls()
    // A window in which an unauthorized bot must not hammer Telegram: nothing to wait for but time.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    assert.isAtMost(calls() - before, 1)
  })

  it("dead-letters a delivery the backend keeps refusing, shows it, and delivers it on retry", async () => {
    let accept = false
    const hook = await backend(() => accept ? { status: 200 } : { status: 500 })
    try {
      const tg = fake.addBot()
      const bot = await addBot(tg, { proxy_enabled: true, backend_url: hook.url })
      fake.userSends(tg.id, { text: "refused" })
      const dead = await eventually(async () => {
        const reply = await server.call(`/api/bots/deliveries?bot_id=${bot.id}&status=dead`)
        return reply.json.length === 1 ? reply.json[0] : undefined
      }, 10_000)
      assert.deepInclude(dead, { bot_id: bot.id, url: hook.url, status: "dead", last_error: "HTTP 500" })
      assert.isAbove(dead.attempts, 1)
      assert.strictEqual(JSON.parse(dead.payload).message.text, "refused")
      accept = true
      const retried = await server.call(`/api/bots/deliveries/retry?id=${dead.id}`, { method: "POST" })
      assert.strictEqual(retried.status, 200, retried.text)
      assert.strictEqual(retried.json.status, "pending")
      await eventually(() => hook.received.length === 1 || undefined)
      const done = await eventually(async () => {
        const reply = await server.call(`/api/bots/deliveries?bot_id=${bot.id}`)
        return reply.json[0]?.status === "delivered" ? reply.json[0] : undefined
      })
      assert.strictEqual(done.id, dead.id)
      assertError(await server.call(`/api/bots/deliveries/retry?id=${dead.id}`, { method: "POST" }), 404, "delivery_not_found")
      assertError(await server.call(`/api/bots/deliveries?status=lost`), 400, "invalid_request")
    } finally {
      await hook.close()
    }
  }, 20_000)

  it("retries deliveries for BOTRELAY_DELIVERY_MAX_AGE before they are dead (24 h by default)", () => {
    assert.strictEqual(Config.fromValues({}, {}).deliveryMaxAge, 86_400)
    assert.strictEqual(Config.fromValues({}, { BOTRELAY_DELIVERY_MAX_AGE: "15m" }).deliveryMaxAge, 900)
    assert.throws(() => Config.fromValues({ "delivery-max-age": "0" }, {}), Config.ConfigError, /DELIVERY_MAX_AGE/)
    const outbox = Main.botrelayOptions(Config.fromValues({ "delivery-max-age": "90" }, {})).runtime?.outbox
    assert.isTrue(Duration.equals(Duration.decode(outbox!.maxAge), Duration.seconds(90)))
  })

  it("discards a dead delivery for good: never sent, listed as discarded, recorded in the audit log", async () => {
    const hook = await backend(() => ({ status: 500 }))
    try {
      const tg = fake.addBot()
      const bot = await addBot(tg, { proxy_enabled: true, backend_url: hook.url })
      fake.userSends(tg.id, { text: "given up" })
      const dead = await eventually(async () => {
        const reply = await server.call(`/api/bots/deliveries?bot_id=${bot.id}&status=dead`)
        return reply.json.length === 1 ? reply.json[0] : undefined
      }, 10_000)
      const tried = hook.received.length
      const discarded = await server.call(`/api/bots/deliveries/discard?id=${dead.id}`, { method: "POST" })
      assert.strictEqual(discarded.status, 200, discarded.text)
      assert.deepInclude(discarded.json, { id: dead.id, bot_id: bot.id, status: "discarded" })
      assert.deepStrictEqual(
        (await server.call(`/api/bots/deliveries?bot_id=${bot.id}`)).json.map((d: any) => [d.id, d.status]),
        [[dead.id, "discarded"]]
      )
      assertError(await server.call(`/api/bots/deliveries/discard?id=${dead.id}`, { method: "POST" }), 404, "delivery_not_found")
      assertError(await server.call(`/api/bots/deliveries/retry?id=${dead.id}`, { method: "POST" }), 404, "delivery_not_found")
      const audit = await server.call(`/api/audit?action=deliveries.discard`)
      const outcomes = audit.json.items.map((e: any) => [e.outcome, e.target_id, e.bot_id])
      assert.deepStrictEqual(outcomes, [["failed", String(dead.id), null], ["ok", String(dead.id), bot.id]])
      assert.strictEqual(hook.received.length, tried)
    } finally {
      await hook.close()
    }
  }, 20_000)

  it("waits retry_after on 429 and reports 409 conflicts without looping hot", async () => {
    const tg = fake.addBot()
    const polls = () => fake.calls.filter((c) => c.botId === tg.id && c.method === "getUpdates")
    fake.failNext("getUpdates", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 }, {
      botId: tg.id
    })
    const bot = await addBot(tg, { manage_enabled: true })
    fake.userSends(tg.id, { text: "answers the next poll at once" })
    const next = await fake.waitForCall((c) => c.botId === tg.id && c.method === "getUpdates" && c.status === 200, "10 seconds")
    const limited = polls()[0]!
    assert.strictEqual(limited.status, 429)
    assert.isAtLeast(next.receivedAt - limited.receivedAt, 950)

    fake.failAlways("getUpdates", {
      error_code: 409,
      description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
    }, { botId: tg.id })
    fake.userSends(tg.id, { text: "ends the held poll" })
    const listed = await eventually(async () => {
      const b = await botById(bot.id)
      return b.last_error.startsWith("conflict") ? b : undefined
    })
    assert.include(listed.last_error, "terminated by other getUpdates request")
    const before = polls().length
    // A window that bounds how often conflicts are retried: nothing to wait for but time.
    await new Promise((resolve) => setTimeout(resolve, 600))
    assert.isAtMost(polls().length - before, 4)
    fake.clearFailures()
    await eventually(async () => (await botById(bot.id)).last_error === "" || undefined, 10_000)
  }, 20_000)
})

describe("housekeeping", () => {
  it("deletes delivered deliveries after the retention and keeps the history", async () => {
    const own = await startServer({
      telegramApi: fake.apiRoot,
      runtime: { ...fastRuntime, housekeeping: { retention: "300 millis", interval: "100 millis" } }
    })
    try {
      const tg = fake.addBot()
      const hook = await backend()
      const added = await own.call("/api/bots/add", {
        body: { token: tg.token, manage_enabled: true, proxy_enabled: true, backend_url: hook.url }
      })
      assert.strictEqual(added.status, 200, added.text)
      const botId = (added.json as { id: number }).id
      const user = fake.addUser()
      for (const text of ["a", "b", "c"]) fake.userSends(tg.id, { user, text })
      await eventually(() => hook.received.length === 3 || undefined)
      await eventually(async () => {
        const list = await own.call(`/api/bots/deliveries?bot_id=${botId}`)
        return (list.json as Array<unknown>).length === 0 || undefined
      })
      const history = await own.call(`/api/messages?bot_id=${botId}&chat_id=${user.id}`)
      assert.deepStrictEqual((history.json as Array<{ text: string }>).map((m) => m.text), ["c", "b", "a"])
      await hook.close()
    } finally {
      await own.close()
    }
  })
})
