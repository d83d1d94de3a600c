import { run } from "@grammyjs/runner"
import { Bot } from "grammy"
import { Bot as NtbaBot } from "node-telegram-bot-api"
import { Telegraf } from "telegraf"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { botInfo, eventually, pollWatch, startServer, type TestServer } from "./Harness.js"

// Real bot frameworks pointed at Botrelay's /tgapi instead of Telegram: their getUpdates is served
// from Botrelay's buffer (Botrelay itself polls the fake Telegram), every other call goes through to
// the fake, and what they send lands in the message history.

let fake: FakeTelegram.FakeTelegram
let server: TestServer
const polls = pollWatch()
const stops: Array<() => Promise<void>> = []

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot, extra: polls.layer })
})
afterAll(async () => {
  for (const stop of stops.reverse()) await stop()
  await server?.close()
  await fake?.close()
})


/** Registers the fake bot in Botrelay with history and the long-poll buffer on. */
const register = async (tg: FakeTelegram.FakeBot) => {
  const reply = await server.call("/api/bots/add", {
    body: { token: tg.token, name: tg.username, manage_enabled: true, long_poll_enabled: true }
  })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { id: number }
}

interface Stored {
  readonly id: number
  readonly text: string
  readonly direction: string
  readonly reply_to_message_id?: number
}

const history = async (botId: number, chatId: number) => {
  const reply = await server.call(`/api/messages?bot_id=${botId}&chat_id=${chatId}&limit=200`)
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as Array<Stored>
}

/** Waits until the bot's history in the chat holds `text` sent in `direction`. */
const stored = (botId: number, chatId: number, text: string, direction: "in" | "out") =>
  eventually(async () => (await history(botId, chatId)).find((m) => m.text === text && m.direction === direction))

const echoed = (tg: FakeTelegram.FakeBot, text: string) =>
  fake.waitForSent((s) => s.botId === tg.id && s.message.text === text)

/**
 * getUpdates calls a framework made to Botrelay's /tgapi never reach Telegram: only Botrelay's own polls do, the
 * first of them asking for every update type (Telegram keeps that for the next).
 */
const assertOwnPollsOnly = (tg: FakeTelegram.FakeBot) => {
  const polls = fake.calls.filter((c) => c.botId === tg.id && c.method === "getUpdates")
  assert.isTrue(polls.length > 0 && polls.every((c) => c.userAgent?.startsWith("botrelay (") === true))
  const allowed = polls[0]!.params.allowed_updates
  assert.isTrue(Array.isArray(allowed) && allowed.length > 10)
}

describe("grammY through /tgapi", () => {
  it("bot.start() long-polls Botrelay's buffer; replies reach the user and the history", async () => {
    const tg = fake.addBot({ username: "grammy_tgapi_bot" })
    const { id } = await register(tg)
    const bot = new Bot(tg.token, { botInfo: botInfo(tg), client: { apiRoot: `${server.baseUrl}/tgapi` } })
    bot.on("message:text", (ctx) => ctx.reply(`echo: ${ctx.message.text}`, { reply_parameters: { message_id: ctx.message.message_id } }))
    bot.catch(() => undefined)
    const started = new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }))
    stops.push(() => bot.stop())
    await started

    const user = fake.addUser({ first_name: "Gus" })
    const message = fake.userSends(tg.id, { user, text: "hello through the proxy" })
    const echo = await echoed(tg, "echo: hello through the proxy")
    assert.strictEqual(echo.message.chat.id, user.id)
    assert.strictEqual(echo.message.reply_to_message?.message_id, message.message_id)

    await stored(id, user.id, "hello through the proxy", "in")
    const out = await stored(id, user.id, "echo: hello through the proxy", "out")
    assert.strictEqual(out.reply_to_message_id, message.message_id)
    assert.isFalse(fake.calls.some((c) => c.botId === tg.id && c.method === "deleteWebhook"))
    assertOwnPollsOnly(tg)
  })

  it("a restarted bot gets only what it did not confirm: nothing lost, nothing twice", async () => {
    const tg = fake.addBot()
    const { id } = await register(tg)
    const user = fake.addUser()
    const seen: Array<string> = []
    const start = async () => {
      const bot = new Bot(tg.token, { botInfo: botInfo(tg), client: { apiRoot: `${server.baseUrl}/tgapi` } })
      bot.on("message:text", (ctx) => void seen.push(ctx.message.text))
      bot.catch(() => undefined)
      await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }))
      return bot
    }

    const first = await start()
    for (const text of ["one", "two", "three"]) fake.userSends(tg.id, { user, text })
    await eventually(() => seen.length === 3 ? true : undefined)
    await first.stop()

    for (const text of ["four", "five"]) fake.userSends(tg.id, { user, text })
    await stored(id, user.id, "five", "in")
    const second = await start()
    stops.push(() => second.stop())
    await eventually(() => seen.length === 5 ? true : undefined)
    fake.userSends(tg.id, { user, text: "six" })
    await eventually(() => seen.length === 6 ? true : undefined)
    assert.deepStrictEqual(seen, ["one", "two", "three", "four", "five", "six"])
  })

  it("@grammyjs/runner polls concurrently and handles every update once", async () => {
    const tg = fake.addBot()
    const { id } = await register(tg)
    const bot = new Bot(tg.token, { botInfo: botInfo(tg), client: { apiRoot: `${server.baseUrl}/tgapi` } })
    const seen: Array<string> = []
    bot.on("message:text", async (ctx) => {
      seen.push(ctx.message.text)
      await ctx.reply(`ack ${ctx.message.text}`)
    })
    const runner = run(bot)
    stops.push(async () => {
      if (runner.isRunning()) await runner.stop()
    })

    const user = fake.addUser()
    const texts = Array.from({ length: 8 }, (_, i) => `runner ${i}`)
    for (const text of texts) fake.userSends(tg.id, { user, text })
    for (const text of texts) await echoed(tg, `ack ${text}`)
    assert.deepStrictEqual([...seen].sort(), [...texts].sort())
    await stored(id, user.id, "ack runner 7", "out")
  })
})

describe("Telegraf through /tgapi/ (trailing slash)", () => {
  it("launch() polls with timeout 50, is answered as soon as a message arrives, and replies", async () => {
    const tg = fake.addBot({ username: "telegraf_tgapi_bot" })
    const { id } = await register(tg)
    const bot = new Telegraf(tg.token, { telegram: { apiRoot: `${server.baseUrl}/tgapi/` } })
    bot.botInfo = botInfo(tg)
    bot.on("text", (ctx) => ctx.reply(`telegraf: ${ctx.message.text}`))
    const launched = new Promise<void>((resolve) => void bot.launch({}, () => resolve()).catch(() => undefined))
    stops.push(async () => bot.stop("test over"))
    await launched

    const user = fake.addUser()
    fake.userSends(tg.id, { user, text: "first" })
    await echoed(tg, "telegraf: first")
    // Its next poll (timeout 50) is held by Botrelay; a new message must end it at once.
    await polls.untilHeld(id)
    const sentAt = Date.now()
    fake.userSends(tg.id, { user, text: "second" })
    await echoed(tg, "telegraf: second")
    assert.isBelow(Date.now() - sentAt, 10_000)
    await stored(id, user.id, "telegraf: second", "out")
    assertOwnPollsOnly(tg)
  })
})

describe("node-telegram-bot-api 2.x through /tgapi (form-encoded requests)", () => {
  it("startPolling() receives messages and its form-encoded replies go through", async () => {
    const tg = fake.addBot()
    const { id } = await register(tg)
    const bot = new NtbaBot(tg.token, { apiRoot: `${server.baseUrl}/tgapi` })
    bot.on("message", (ctx) => ctx.reply(`ntba: ${ctx.message?.text ?? ""}`))
    bot.catch(() => undefined)
    const polling = bot.startPolling()
    stops.push(async () => {
      bot.stop()
      await polling.catch(() => undefined)
    })

    const user = fake.addUser()
    fake.userSends(tg.id, { user, text: "form me" })
    const echo = await echoed(tg, "ntba: form me")
    assert.strictEqual(echo.message.chat.id, user.id)
    await stored(id, user.id, "ntba: form me", "out")
  })
})
