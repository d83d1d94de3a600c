import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Bot, webhookCallback } from "grammy"
import { Telegraf } from "telegraf"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { botInfo, eventually, startServer, type TestServer } from "./Harness.js"

// Real bot frameworks as Botrelay backends: Botrelay polls the fake Telegram, POSTs each update to
// the framework's webhook handler, and runs any webhook reply the framework answers with.

let fake: FakeTelegram.FakeTelegram
let server: TestServer
const closers: Array<() => Promise<void>> = []

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
})
afterAll(async () => {
  for (const close of closers.reverse()) await close()
  await server?.close()
  await fake?.close()
})


/** What a backend answered to one request Botrelay made. */
interface Exchange {
  readonly url: string | undefined
  readonly secret: string | undefined
  readonly status: number
  /** The body of the answer: empty, or a webhook reply. */
  readonly body: string
}

/**
 * Serves a framework's webhook handler on 127.0.0.1 port 0 (closed in afterAll) and records each
 * answer. A rejected handler answers 500 instead of becoming an unhandled rejection.
 */
const serve = async (handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) => {
  const exchanges: Array<Exchange> = []
  const http: Server = createServer((req, res) => {
    let body = ""
    const end = res.end.bind(res) as (...args: Array<unknown>) => ServerResponse
    res.end = ((...args: Array<unknown>) => {
      if (typeof args[0] === "string" || args[0] instanceof Uint8Array) body += Buffer.from(args[0]).toString()
      return end(...args)
    }) as typeof res.end
    res.on("finish", () => {
      exchanges.push({
        url: req.url,
        secret: req.headers["x-telegram-bot-api-secret-token"] as string | undefined,
        status: res.statusCode,
        body
      })
    })
    handler(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  closers.push(() => new Promise<void>((resolve) => http.close(() => resolve())))
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  return { origin, exchanges }
}


const addBot = async (tg: FakeTelegram.FakeBot, body: Record<string, unknown>) => {
  const reply = await server.call("/api/bots/add", { body: { token: tg.token, ...body } })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { id: number }
}

const deliveries = async (botId: number) => {
  const reply = await server.call(`/api/bots/deliveries?bot_id=${botId}`)
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as Array<{ update_id: number; status: string; attempts: number; last_error: string }>
}

describe("grammY as a backend", () => {
  it("echoes a text message; the reply reaches the user's chat", async () => {
    const tg = fake.addBot({ username: "grammy_echo_bot" })
    const bot = new Bot(tg.token, { botInfo: botInfo(tg), client: { apiRoot: fake.apiRoot } })
    const seen: Array<{ text: string; chat: number; update_id: number }> = []
    bot.on("message:text", async (ctx) => {
      seen.push({ text: ctx.message.text, chat: ctx.chat.id, update_id: ctx.update.update_id })
      await ctx.reply("echo: " + ctx.message.text)
    })
    const backend = await serve(webhookCallback(bot, "http", { secretToken: "grammy_secret" }))
    const added = await addBot(tg, {
      proxy_enabled: true,
      backend_url: `${backend.origin}/hook`,
      secret_token: "grammy_secret"
    })

    const user = fake.addUser({ first_name: "Gia" })
    const message = fake.userSends(tg.id, { user, text: "hello grammY" })
    const echo = await fake.waitForSent((s) => s.botId === tg.id && s.message.text === "echo: hello grammY")

    assert.strictEqual(echo.method, "sendMessage")
    assert.strictEqual(echo.message.chat.id, user.id)
    assert.deepStrictEqual(seen.map(({ text, chat }) => ({ text, chat })), [{ text: "hello grammY", chat: user.id }])
    // grammY's webhook replies are opt-in (canUseWebhookReply defaults to false): it called sendMessage
    // itself and answered Botrelay 200 with an empty body, after checking the secret.
    const [answer] = await eventually(() => backend.exchanges.length > 0 ? backend.exchanges : undefined)
    assert.deepStrictEqual(answer, { url: "/hook", secret: "grammy_secret", status: 200, body: "" })
    const call = fake.calls.find((c) => c.botId === tg.id && c.method === "sendMessage")
    assert.deepInclude(call?.params, { chat_id: user.id, text: "echo: hello grammY" })
    const [delivery] = await eventually(async () => {
      const list = await deliveries(added.id)
      return list.length === 1 && list[0]?.status === "delivered" ? list : undefined
    })
    assert.strictEqual(delivery?.update_id, seen[0]?.update_id)
    assert.strictEqual(seen.length, 1)
    assert.isTrue(fake.updatesConfirmed(tg.id).some((u) => u.message?.message_id === message.message_id))
  })

  it("runs grammY's webhook reply when the bot opts in", async () => {
    const tg = fake.addBot()
    const bot = new Bot(tg.token, {
      botInfo: botInfo(tg),
      client: { apiRoot: fake.apiRoot, canUseWebhookReply: (method) => method === "sendMessage" }
    })
    bot.on("message:text", (ctx) => ctx.reply("echo: " + ctx.message.text))
    const backend = await serve(webhookCallback(bot, "http", { secretToken: "grammy_secret" }))
    await addBot(tg, { proxy_enabled: true, backend_url: `${backend.origin}/hook`, secret_token: "grammy_secret" })

    const user = fake.addUser()
    fake.userSends(tg.id, { user, text: "reply in the body" })
    const echo = await fake.waitForSent((s) => s.botId === tg.id && s.message.text === "echo: reply in the body")

    assert.strictEqual(echo.message.chat.id, user.id)
    // The sendMessage came back in grammY's HTTP answer, and Botrelay executed it with the bot's token.
    const [answer] = await eventually(() => backend.exchanges.length > 0 ? backend.exchanges : undefined)
    assert.strictEqual(answer?.status, 200)
    assert.deepStrictEqual(JSON.parse(answer!.body), {
      method: "sendMessage",
      chat_id: user.id,
      text: "echo: reply in the body"
    })
    assert.strictEqual(fake.calls.filter((c) => c.botId === tg.id && c.method === "sendMessage").length, 1)
  })

  it("rejects a wrong secret: grammY answers 401 every time, the handler never runs, Botrelay retries", async () => {
    const tg = fake.addBot()
    const bot = new Bot(tg.token, { botInfo: botInfo(tg), client: { apiRoot: fake.apiRoot } })
    const seen: Array<string> = []
    bot.on("message:text", (ctx) => void seen.push(ctx.message.text))
    const backend = await serve(webhookCallback(bot, "http", { secretToken: "grammy_secret" }))
    // Another Botrelay bot pointing at the same grammY backend, with the wrong secret.
    const intruder = fake.addBot()
    const added = await addBot(intruder, {
      proxy_enabled: true,
      backend_url: `${backend.origin}/hook`,
      secret_token: "not_the_secret"
    })

    fake.userSends(intruder.id, { text: "should not pass" })
    const refused = await eventually(async () => {
      const list = await deliveries(added.id)
      return list.length === 1 && list[0]!.attempts >= 1 ? list[0]! : undefined
    })

    // Never acknowledged: pending for a retry (or already dead-lettered under the harness's short max age).
    assert.oneOf(refused.status, ["pending", "dead"])
    assert.strictEqual(refused.last_error, "HTTP 401")
    // The retry comes after the outbox backoff (well under 3 s with any runtime timings) and is refused too.
    await eventually(() => backend.exchanges.length >= 2 || undefined, 3000)
    const wrongSecret = (e: Exchange) => e.url === "/hook" && e.secret === "not_the_secret" && e.status === 401
    assert.isTrue(backend.exchanges.every(wrongSecret), JSON.stringify(backend.exchanges))
    assert.strictEqual(backend.exchanges[0]?.body, "secret token is wrong")
    assert.deepStrictEqual(seen, [])
    assert.notStrictEqual((await deliveries(added.id))[0]?.status, "delivered")
    assert.isFalse(fake.calls.some((c) => c.botId === intruder.id && c.method === "sendMessage"))
  })
})

describe("Telegraf as a backend", () => {
  it("answers a callback query by webhook reply, which Botrelay executes", async () => {
    const tg = fake.addBot({ username: "telegraf_cb_bot" })
    const bot = new Telegraf(tg.token, { telegram: { apiRoot: fake.apiRoot } })
    bot.botInfo = botInfo(tg)
    const queries: Array<{ id: string; data: string | undefined }> = []
    bot.on("callback_query", (ctx) => {
      const query = ctx.callbackQuery
      queries.push({ id: query.id, data: "data" in query ? query.data : undefined })
      return ctx.answerCbQuery("got it")
    })
    const backend = await serve(bot.webhookCallback("/hook", { secretToken: "telegraf_secret" }))
    await addBot(tg, { proxy_enabled: true, backend_url: `${backend.origin}/hook`, secret_token: "telegraf_secret" })

    const user = fake.addUser()
    const message = fake.userSends(tg.id, { user, text: "menu" })
    const query = fake.userPresses(tg.id, message, "data")
    const call = await fake.waitForCall((c) => c.botId === tg.id && c.method === "answerCallbackQuery")

    assert.deepInclude(call.params, { callback_query_id: query.id, text: "got it" })
    assert.strictEqual(call.status, 200)
    assert.isUndefined(call.webhookReply)
    assert.deepStrictEqual(queries, [{ id: query.id, data: "data" }])
    // Telegraf put the answerCallbackQuery in its HTTP answer instead of calling Telegram itself.
    const answers = await eventually(() => backend.exchanges.length === 2 ? backend.exchanges : undefined)
    assert.deepStrictEqual(answers[0], { url: "/hook", secret: "telegraf_secret", status: 200, body: "" })
    assert.deepInclude(answers[1], { url: "/hook", secret: "telegraf_secret", status: 200 })
    assert.deepStrictEqual(JSON.parse(answers[1]!.body), {
      method: "answerCallbackQuery",
      callback_query_id: query.id,
      text: "got it"
    })
    assert.strictEqual(fake.calls.filter((c) => c.botId === tg.id && c.method === "answerCallbackQuery").length, 1)
  })
})
