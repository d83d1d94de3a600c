import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { BotStore, Bots, Deliveries, Events, InboxStore, LongPoll, MessageStore, Pipeline, SentMessages } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { TgApi } from "@botrelay/http"
import { eventually, FakeTelegram } from "@botrelay/testing"
import { Effect, Exit, Layer, ManagedRuntime, Redacted, Scope } from "effect"
import type { Bot } from "@botrelay/core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as NodeHttpExchange from "../src/NodeHttpExchange.js"
import * as ProxyFastPath from "../src/ProxyFastPath.js"

/** A Telegram API root where nothing listens. */
const unreachableTelegram = "http://127.0.0.1:9"

// The fast path in front of the app: what it takes, what it leaves to the app (here a stand-in that
// answers 418), and that it forgets bots when they change.

let fake: FakeTelegram.FakeTelegram
const closers: Array<() => Promise<void>> = []

beforeAll(async () => {
  fake = await FakeTelegram.start()
})
afterAll(async () => {
  for (const close of closers.reverse()) await close()
  await fake?.close()
})

const serve = async (apiRoot: string) => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(Bots.layer, SentMessages.layer, LongPoll.layer(), Deliveries.layer).pipe(
      Layer.provideMerge(
        Layer.mergeAll(SqliteStores.layer({ filename: ":memory:" }), Events.layer, NodeHttpExchange.layer, TgApi.upstream(apiRoot))
      )
    )
  )
  const scope = await runtime.runPromise(Scope.make())
  const front = await runtime.runPromise(Scope.extend(ProxyFastPath.make, scope))
  const http: Server = createServer((req, res) => {
    if (!front(req, res)) res.writeHead(418).end()
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  closers.push(async () => {
    http.closeAllConnections()
    await new Promise<void>((resolve) => http.close(() => resolve()))
    await runtime.runPromise(Scope.close(scope, Exit.void))
    await runtime.dispose()
  })
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`
  const call = async (path: string, body?: unknown, contentType = "application/json", signal?: AbortSignal) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": contentType } }),
      ...(signal === undefined ? {} : { signal })
    })
    return { status: response.status, text: await response.text() }
  }
  const addBot = (token: string, manage_enabled = true, long_poll_enabled = false) =>
    runtime.runPromise(Effect.flatMap(BotStore.BotStore, (bots) =>
      bots.insertBot({
        token: Redacted.make(token),
        name: "fast",
        source: "web",
        manage_enabled,
        proxy_enabled: false,
        backend_url: "",
        secret_token: Redacted.make(""),
        long_poll_enabled,
        description: "",
        created_at: new Date().toISOString()
      })))
  const stored = (botId: number, chatId: number) =>
    runtime.runPromise(Effect.flatMap(MessageStore.MessageStore, (messages) =>
      messages.listMessages({ bot_id: botId, chat_id: chatId, limit: 100, offset: 0 })))
  const changed = (botId: number) =>
    runtime.runPromise(Events.publish(Events.Event.BotChanged({ id: botId })))
  /** Telegram sends updates of these texts; the pipeline puts them in the bot's long-poll buffer. */
  const arrive = (bot: Bot.StoredBot, updateIds: ReadonlyArray<number>) =>
    runtime.runPromise(Effect.gen(function*() {
      const inbox = yield* InboxStore.InboxStore
      const received_at = new Date().toISOString()
      const updates = updateIds.map((id) => ({
        bot_id: bot.id,
        update_id: id,
        payload: `{"update_id":${id},"message":{"text":"u${id}"}}`,
        received_at
      }))
      yield* inbox.commitUpdates(bot.id, updates, updateIds[updateIds.length - 1]! + 1)
      yield* Pipeline.drain(bot.id, { current: () => bot })
    }))
  const waiting = (botId: number) => runtime.runPromise(Effect.map(LongPoll.LongPoll, (poll) => (poll as LongPoll.LongPollInternals).waiting(botId)))
  return { call, addBot, stored, changed, arrive, waiting }
}

/** A FakeTelegram bot a user has written to, registered with the proxy. */
const botWithChat = async (proxy: Awaited<ReturnType<typeof serve>>, manage_enabled = true) => {
  const tg = fake.addBot()
  const user = fake.addUser()
  fake.userSends(tg.id, { user, text: "hi" })
  const bot = await proxy.addBot(tg.token, manage_enabled)
  return { tg, user, bot, send: `/tgapi/bot${tg.token}/sendMessage` }
}

describe("the proxy's fast path", () => {
  it("leaves a bot's first call to the app, then passes calls on itself and captures them", async () => {
    const proxy = await serve(fake.apiRoot)
    const { bot, send: path, tg, user } = await botWithChat(proxy)

    assert.strictEqual((await proxy.call(path, { chat_id: user.id, text: "first" })).status, 418)
    const answer = await eventually(async () => {
      const reply = await proxy.call(path, { chat_id: user.id, text: "fast" })
      return reply.status === 418 ? undefined : reply
    })
    assert.strictEqual(answer.status, 200)
    assert.strictEqual(JSON.parse(answer.text).result.text, "fast")
    await fake.waitForSent((s) => s.botId === tg.id && s.message.text === "fast")
    const history = await eventually(async () => {
      const list = await proxy.stored(bot.id, user.id)
      return list.length > 0 ? list : undefined
    })
    assert.deepStrictEqual(history.map((m) => [m.text, m.direction]), [["fast", "out"]])

    const failing = await proxy.call(path, { chat_id: user.id, text: "" })
    assert.strictEqual(failing.status, 400)
    assert.include(JSON.parse(failing.text).description, "message text is empty")
  })

  it("records calls answered together, and answers each client only once its record is stored", async () => {
    const proxy = await serve(fake.apiRoot)
    const { bot, send: path, tg, user } = await botWithChat(proxy)
    await proxy.call(path, { chat_id: user.id, text: "learn" })
    await eventually(async () => (await proxy.call(path, { chat_id: user.id, text: "warm" })).status === 200 || undefined)
    const before = (await proxy.stored(bot.id, user.id)).length

    const texts = Array.from({ length: 30 }, (_, i) => `together ${i}`)
    const answers = await Promise.all(texts.map((text) => proxy.call(path, { chat_id: user.id, text })))
    assert.deepStrictEqual(answers.map((a) => a.status), texts.map(() => 200))
    const history = await proxy.stored(bot.id, user.id)
    assert.strictEqual(history.length, before + texts.length)
    assert.sameMembers(history.filter((m) => m.text.startsWith("together")).map((m) => m.text), texts)

    const [first, second] = answers.map((a) => JSON.parse(a.text).result.message_id as number)
    const [deleted, copiedAnswer] = await Promise.all([
      proxy.call(`/tgapi/bot${tg.token}/deleteMessage`, { chat_id: user.id, message_id: first }),
      proxy.call(`/tgapi/bot${tg.token}/copyMessage`, { chat_id: user.id, from_chat_id: user.id, message_id: second })
    ])
    assert.strictEqual(deleted.status, 200)
    const copy = JSON.parse(copiedAnswer.text).result.message_id as number
    const after = await proxy.stored(bot.id, user.id)
    assert.isTrue(after.find((m) => m.id === first)?.deleted)
    assert.strictEqual(after.find((m) => m.id === copy)?.text, "together 1")
  })

  it("never takes local methods, uploads or file paths, and forgets bots on every change", async () => {
    const proxy = await serve(fake.apiRoot)
    const { bot, send, tg, user } = await botWithChat(proxy, false)
    await proxy.call(send, { chat_id: user.id, text: "learn" })
    await eventually(async () => (await proxy.call(send, { chat_id: user.id, text: "x" })).status === 200 || undefined)

    assert.strictEqual((await proxy.call(`/tgapi/bot${tg.token}/LogOut`, {})).status, 418)
    assert.strictEqual((await proxy.call(`/tgapi/bot${tg.token}/setWebhook`, { url: "" })).status, 418)
    assert.strictEqual((await proxy.call(send, { chat_id: 1 }, "multipart/form-data; boundary=x")).status, 418)
    assert.strictEqual((await proxy.call(`/tgapi/file/bot${tg.token}/photos/1.jpg`)).status, 418)

    await proxy.changed(bot.id)
    assert.strictEqual((await proxy.call(send, { chat_id: user.id, text: "after a change" })).status, 418)
  })

  it("answers a Telegram it cannot reach with Telegram's 502 shape, without the token", async () => {
    const proxy = await serve(unreachableTelegram)
    const token = "4242:AAunreachable_token_0123456789abcdef"
    await proxy.addBot(token)
    const path = `/tgapi/bot${token}/sendMessage`
    await proxy.call(path, { chat_id: 1, text: "learn" })
    const answer = await eventually(async () => {
      const reply = await proxy.call(path, { chat_id: 1, text: "x" })
      return reply.status === 418 ? undefined : reply
    })
    assert.strictEqual(answer.status, 502)
    assert.deepStrictEqual(JSON.parse(answer.text), {
      ok: false,
      error_code: 502,
      description: "Bad Gateway: Telegram could not be reached (ECONNREFUSED)"
    })
    assert.notInclude(answer.text, "unreachable_token")
  })

  it("answers getUpdates from the long-poll buffer: held until an update comes, 409 to an older poll, ended when its client goes", async () => {
    const proxy = await serve(fake.apiRoot)
    const tg = fake.addBot()
    const bot = await proxy.addBot(tg.token, false, true)
    const path = `/tgapi/bot${tg.token}/getUpdates`
    await proxy.call(path, { timeout: 0 })
    await eventually(async () => (await proxy.call(path, { timeout: 0 })).status === 200 || undefined)

    const held = proxy.call(path, { offset: 0, timeout: 30 })
    await eventually(async () => (await proxy.waiting(bot.id)) === 1 || undefined)
    await proxy.arrive(bot, [700_000_001, 700_000_002])
    const answer = await held
    assert.strictEqual(answer.status, 200)
    assert.strictEqual(
      answer.text,
      `{"ok":true,"result":[{"update_id":700000001,"message":{"text":"u700000001"}},{"update_id":700000002,"message":{"text":"u700000002"}}]}`
    )
    const confirmed = await proxy.call(path, { offset: 700_000_003, timeout: 0 })
    assert.deepStrictEqual(JSON.parse(confirmed.text), { ok: true, result: [] })

    const older = proxy.call(path, { offset: 700_000_003, timeout: 30 })
    await eventually(async () => (await proxy.waiting(bot.id)) === 1 || undefined)
    const newer = proxy.call(`${path}?offset=700000003&timeout=30`)
    const ended = await older
    assert.strictEqual(ended.status, 409)
    assert.include(JSON.parse(ended.text).description, "terminated by other getUpdates request")
    await proxy.arrive(bot, [700_000_003])
    assert.deepStrictEqual(JSON.parse((await newer).text).result.map((u: { update_id: number }) => u.update_id), [700_000_003])

    const going = new AbortController()
    const gone = proxy.call(path, { offset: 700_000_004, timeout: 30 }, "application/json", going.signal).catch(() => "aborted")
    await eventually(async () => (await proxy.waiting(bot.id)) === 1 || undefined)
    going.abort()
    assert.strictEqual(await gone, "aborted")
    await eventually(async () => (await proxy.waiting(bot.id)) === 0 || undefined)

    const tooMany = await proxy.call(path, { allowed_updates: "not a list" })
    assert.strictEqual(tooMany.status, 400)
  })
})
