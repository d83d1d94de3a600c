import type { BotApi } from "@botrelay/telegram"
import { TelegramClient, TelegramError } from "@botrelay/telegram"
import { FetchHttpClient } from "@effect/platform"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as FakeTelegram from "../src/FakeTelegram.js"

const post = async (url: string, body: unknown) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const get = async (url: string) => {
  const response = await fetch(url)
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const withFake = async <A>(f: (fake: FakeTelegram.FakeTelegram) => Promise<A>, options?: FakeTelegram.Options) => {
  const fake = await FakeTelegram.start(options)
  try {
    return await f(fake)
  } finally {
    await fake.close()
  }
}

const clientLayer = (fake: FakeTelegram.FakeTelegram) =>
  TelegramClient.layer({ apiRoot: fake.apiRoot }).pipe(Layer.provide(FetchHttpClient.layer))

describe("FakeTelegram over plain fetch", () => {
  it("creates bots with realistic tokens and answers getMe like Telegram", () =>
    withFake(async (fake) => {
      assert.match(fake.apiRoot, /^http:\/\/127\.0\.0\.1:\d+$/)
      const bot = fake.addBot({ username: "relay_bot", first_name: "Relay" })
      const other = fake.addBot()
      assert.match(bot.token, /^\d+:[A-Za-z0-9_-]{35}$/)
      assert.isTrue(bot.token.startsWith(`${bot.id}:`))
      assert.notStrictEqual(bot.id, other.id)
      assert.notStrictEqual(bot.token.split(":")[1], other.token.split(":")[1])
      const { status, body } = await get(`${fake.apiRoot}/bot${bot.token}/getMe`)
      assert.strictEqual(status, 200)
      assert.deepStrictEqual(body, {
        ok: true,
        result: {
          id: bot.id,
          is_bot: true,
          first_name: "Relay",
          username: "relay_bot",
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
          can_connect_to_business: false,
          has_main_web_app: false
        }
      })
    }))

  it("sendMessage returns a full Message, numbers messages per chat and records them", () =>
    withFake(async (fake) => {
      const bot = fake.addBot({ username: "relay_bot", first_name: "Relay" })
      const user = fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann" })
      const url = `${fake.apiRoot}/bot${bot.token}/sendMessage`
      const first = await post(url, { chat_id: user.id, text: "hello", disable_notification: true })
      assert.strictEqual(first.status, 200)
      assert.deepStrictEqual(first.body, {
        ok: true,
        result: {
          message_id: 1,
          from: { id: bot.id, is_bot: true, first_name: "Relay", username: "relay_bot" },
          chat: { id: user.id, first_name: "Ann", last_name: "Lee", username: "ann", type: "private" },
          date: 1_700_000_000,
          text: "hello"
        }
      })
      const reply = await post(url, { chat_id: String(user.id), text: "again", reply_parameters: { message_id: 1 } })
      const result = reply.body["result"] as Record<string, unknown>
      assert.strictEqual(result["message_id"], 2)
      assert.deepStrictEqual(result["reply_to_message"], first.body["result"])
      const legacy = await post(url, { chat_id: user.id, text: "third", reply_to_message_id: 2 })
      const legacyReply = (legacy.body["result"] as Record<string, unknown>)["reply_to_message"]
      assert.strictEqual((legacyReply as Record<string, unknown>)["message_id"], 2)
      assert.notProperty(legacyReply, "reply_to_message")

      const group = fake.addGroup({ title: "Team" })
      const inGroup = await post(url, { chat_id: group.id, text: "hi team" })
      assert.deepStrictEqual((inGroup.body["result"] as Record<string, unknown>)["chat"], {
        id: group.id,
        title: "Team",
        type: "group"
      })
      assert.strictEqual((inGroup.body["result"] as Record<string, unknown>)["message_id"], 1)
      assert.isBelow(group.id, 0)

      const channel = fake.addGroup({ type: "channel", title: "News", username: "news_channel" })
      const post1 = await post(url, { chat_id: "@News_Channel", text: "headline" })
      const channelPost = post1.body["result"] as Record<string, unknown>
      assert.deepStrictEqual(channelPost["chat"], {
        id: channel.id,
        title: "News",
        username: "news_channel",
        type: "channel"
      })
      assert.deepStrictEqual(channelPost["sender_chat"], channelPost["chat"])
      assert.notProperty(channelPost, "from")

      assert.deepStrictEqual(fake.sent(bot.id).map((sent) => sent.message.text), [
        "hello",
        "again",
        "third",
        "hi team",
        "headline"
      ])
      assert.deepStrictEqual(fake.sent(bot.id + 1), [])
      assert.isTrue(fake.sent().every((sent) => sent.botId === bot.id && sent.method === "sendMessage"))
    }, { now: () => 1_700_000_000 }))

  it("message ids of private chats are per bot, of groups per chat", () =>
    withFake(async (fake) => {
      const a = fake.addBot()
      const b = fake.addBot()
      const user = fake.addUser()
      const group = fake.addGroup({ type: "supergroup" })
      const send = async (token: string, chat_id: number) =>
        ((await post(`${fake.apiRoot}/bot${token}/sendMessage`, { chat_id, text: "x" })).body["result"] as {
          message_id: number
        }).message_id
      assert.deepStrictEqual(
        [await send(a.token, user.id), await send(b.token, user.id), await send(a.token, user.id)],
        [1, 1, 2]
      )
      assert.deepStrictEqual([await send(a.token, group.id), await send(b.token, group.id)], [1, 2])
    }))

  it("answers sendMessage mistakes with Telegram's errors", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const other = fake.addBot()
      const user = fake.addUser()
      const url = `${fake.apiRoot}/bot${bot.token}/sendMessage`
      const cases: ReadonlyArray<readonly [unknown, number, string]> = [
        [{ text: "hi" }, 400, "Bad Request: chat_id is empty"],
        [{ chat_id: "", text: "hi" }, 400, "Bad Request: chat_id is empty"],
        [{ chat_id: user.id }, 400, "Bad Request: message text is empty"],
        [{ chat_id: user.id, text: "" }, 400, "Bad Request: message text is empty"],
        [{ chat_id: user.id, text: "   " }, 400, "Bad Request: message text is empty"],
        [{ chat_id: user.id, text: "x".repeat(4097) }, 400, "Bad Request: message is too long"],
        [{ chat_id: 999, text: "hi" }, 400, "Bad Request: chat not found"],
        [{ chat_id: "@nobody_here", text: "hi" }, 400, "Bad Request: chat not found"],
        [{ chat_id: user.id, text: "hi", parse_mode: "BBCode" }, 400, "Bad Request: unsupported parse_mode"],
        [
          { chat_id: user.id, text: "hi", reply_parameters: { message_id: 77 } },
          400,
          "Bad Request: message to be replied not found"
        ],
        [{ chat_id: other.id, text: "hi" }, 403, "Forbidden: bot can't send messages to bots"]
      ]
      for (const [params, code, description] of cases) {
        const { status, body } = await post(url, params)
        assert.strictEqual(status, code, description)
        assert.deepStrictEqual(body, { ok: false, error_code: code, description })
      }
      const ok = await post(url, { chat_id: user.id, text: "x".repeat(4096) })
      assert.strictEqual(ok.status, 200)
      const orphan = await post(url, {
        chat_id: user.id,
        text: "hi",
        reply_parameters: { message_id: 77, allow_sending_without_reply: true }
      })
      assert.strictEqual(orphan.status, 200)
      assert.notProperty(orphan.body["result"], "reply_to_message")
      assert.strictEqual(fake.sent().length, 2)
    }))

  it("401 for unknown tokens, 404 for malformed paths and unknown methods", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const unauthorized = { ok: false, error_code: 401, description: "Unauthorized" }
      const notFound = { ok: false, error_code: 404, description: "Not Found" }
      assert.deepStrictEqual(await get(`${fake.apiRoot}/bot123:AAnotARealTokenAtAllxxxxxxxxxxxxxxxx/getMe`), {
        status: 401,
        body: unauthorized
      })
      assert.deepStrictEqual(await get(`${fake.apiRoot}/bot${bot.token}/noSuchMethod`), { status: 404, body: notFound })
      assert.deepStrictEqual(await get(`${fake.apiRoot}/botnot-a-token/getMe`), { status: 404, body: notFound })
      assert.deepStrictEqual(await get(`${fake.apiRoot}/bot${bot.token}`), { status: 404, body: notFound })
      assert.deepStrictEqual(await get(`${fake.apiRoot}/bot${bot.token}/getMe/extra`), { status: 404, body: notFound })
      assert.deepStrictEqual(await get(`${fake.apiRoot}/`), { status: 404, body: notFound })
    }))

  it("method names are case-insensitive; params come from the query string, JSON, forms or multipart", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const base = `${fake.apiRoot}/bot${bot.token}`
      assert.strictEqual((await get(`${base}/GETME`)).status, 200)
      assert.strictEqual((await get(`${base}/getme`)).status, 200)

      const viaQuery = await get(`${base}/SendMessage?chat_id=${user.id}&text=${encodeURIComponent("from query")}`)
      assert.strictEqual(viaQuery.status, 200)
      assert.strictEqual((viaQuery.body["result"] as Record<string, unknown>)["text"], "from query")

      const form = await fetch(`${base}/sendmessage`, {
        method: "POST",
        body: new URLSearchParams({
          chat_id: String(user.id),
          text: "from form",
          reply_parameters: JSON.stringify({ message_id: 1 })
        })
      })
      const formBody = (await form.json()) as { result: { text: string; reply_to_message: { text: string } } }
      assert.strictEqual(formBody.result.text, "from form")
      assert.strictEqual(formBody.result.reply_to_message.text, "from query")

      const multipart = new FormData()
      multipart.set("chat_id", String(user.id))
      multipart.set("text", "from multipart")
      const viaMultipart = await fetch(`${base}/sendMessage`, { method: "POST", body: multipart })
      assert.strictEqual(((await viaMultipart.json()) as { result: { text: string } }).result.text, "from multipart")

      const mixed = await post(`${base}/sendMessage?chat_id=${user.id}`, { text: "query and body" })
      assert.strictEqual(mixed.status, 200)

      const badJson = await fetch(`${base}/sendMessage`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{not json"
      })
      assert.strictEqual(badJson.status, 400)

      assert.deepStrictEqual(
        fake.calls.map((call) => call.method),
        ["getMe", "getMe", "sendMessage", "sendMessage", "sendMessage", "sendMessage", "sendMessage"]
      )
      assert.deepStrictEqual({ ...fake.calls[2]!, receivedAt: 0, userAgent: "" }, {
        receivedAt: 0,
        userAgent: "",
        botId: bot.id,
        method: "sendMessage",
        params: { chat_id: String(user.id), text: "from query" },
        status: 200
      })
    }))

  it("records when each call arrived and its User-Agent", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const before = Date.now()
      await fetch(`${fake.apiRoot}/bot${bot.token}/getMe`, { headers: { "user-agent": "botrelay (i1)" } })
      const [call] = fake.calls
      assert.strictEqual(call?.userAgent, "botrelay (i1)")
      assert.isAtLeast(call!.receivedAt, before)
      assert.isAtMost(call!.receivedAt, Date.now())
    }))

  it("failNext injects a one-shot error with parameters and the matching HTTP status", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const other = fake.addBot()
      const user = fake.addUser()
      fake.failNext("SENDMESSAGE", { error_code: 429, description: "Too Many Requests: retry after 3", retry_after: 3 })
      fake.failNext("getMe", { error_code: 403, description: "Forbidden: bot was blocked by the user" }, {
        botId: other.id
      })
      const url = `${fake.apiRoot}/bot${bot.token}/sendMessage`
      assert.deepStrictEqual(await post(url, { chat_id: user.id, text: "hi" }), {
        status: 429,
        body: {
          ok: false,
          error_code: 429,
          description: "Too Many Requests: retry after 3",
          parameters: { retry_after: 3 }
        }
      })
      assert.strictEqual((await post(url, { chat_id: user.id, text: "hi" })).status, 200)
      assert.strictEqual((await get(`${fake.apiRoot}/bot${bot.token}/getMe`)).status, 200)
      assert.strictEqual((await get(`${fake.apiRoot}/bot${other.token}/getMe`)).status, 403)
      assert.strictEqual((await get(`${fake.apiRoot}/bot${other.token}/getMe`)).status, 200)
      assert.strictEqual(fake.sent().length, 1)
    }))

  it("dropNext carries the call out and drops the connection before the answer, once", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      fake.dropNext("SendMessage", { botId: bot.id })
      const url = `${fake.apiRoot}/bot${bot.token}/sendMessage`
      const dropped = await post(url, { chat_id: user.id, text: "lost answer" }).then(() => "answered", () => "dropped")
      assert.strictEqual(dropped, "dropped")
      assert.deepStrictEqual(fake.sent(bot.id).map((s) => s.message.text), ["lost answer"])
      assert.strictEqual((await post(url, { chat_id: user.id, text: "answered" })).status, 200)
      fake.failNext("sendMessage", FakeTelegram.blockedByUser)
      assert.deepStrictEqual((await post(url, { chat_id: user.id, text: "blocked" })).body, {
        ok: false,
        error_code: 403,
        description: "Forbidden: bot was blocked by the user"
      })
      assert.strictEqual(fake.sent(bot.id).length, 2)
    }))

  it("keeps tokens out of the call log", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      await get(`${fake.apiRoot}/bot${bot.token}/getMe`)
      const wrong = `${bot.token.slice(0, -1)}${bot.token.endsWith("x") ? "y" : "x"}`
      await get(`${fake.apiRoot}/bot${wrong}/getMe`)
      assert.deepStrictEqual(fake.calls.map((call) => [call.botId, call.status]), [[bot.id, 200], [undefined, 401]])
      assert.notInclude(JSON.stringify(fake.calls), bot.token.split(":")[1]!)
    }))

  it("waitForSent resolves on past and future messages and rejects on timeout", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const url = `${fake.apiRoot}/bot${bot.token}/sendMessage`
      await post(url, { chat_id: user.id, text: "early" })
      assert.strictEqual((await fake.waitForSent((sent) => sent.message.text === "early")).message.message_id, 1)
      const later = fake.waitForSent((sent) => sent.message.text === "later", "2 seconds")
      await post(url, { chat_id: user.id, text: "later" })
      assert.strictEqual((await later).message.message_id, 2)
      await expect(fake.waitForSent(() => false, 50)).rejects.toThrow(/no matching message/)
    }))

  it("close ends open keep-alive connections and stops the server", async () => {
    const fake = await FakeTelegram.start()
    const bot = fake.addBot()
    const response = await fetch(`${fake.apiRoot}/bot${bot.token}/getMe`, { headers: { connection: "keep-alive" } })
    assert.strictEqual(response.status, 200)
    const pending = fake.waitForSent(() => true, "10 seconds")
    const started = Date.now()
    await fake.close()
    assert.isBelow(Date.now() - started, 1000)
    await expect(pending).rejects.toThrow(/closed/)
    await expect(fetch(`${fake.apiRoot}/bot${bot.token}/getMe`)).rejects.toThrow()
  })
})

describe("FakeTelegram through TelegramClient", () => {
  it.scopedLive("getMe and sendMessage decode, awaitSent sees the message", () =>
    Effect.gen(function*() {
      const fake = yield* FakeTelegram.make()
      const bot = fake.addBot({ username: "relay_bot" })
      const user = fake.addUser({ first_name: "Ann" })
      const client = yield* Effect.provide(TelegramClient.TelegramClient, clientLayer(fake))
      const token = Redacted.make(bot.token)
      const me = yield* client.getMe(token)
      assert.strictEqual(me.id, bot.id)
      assert.strictEqual(me.username, "relay_bot")
      assert.strictEqual(me.can_join_groups, true)
      const waiting = yield* Effect.fork(FakeTelegram.awaitSent(fake, (sent) => sent.message.text === "hi Ann"))
      const sent = yield* client.sendMessage(token, { chat_id: user.id, text: "hi Ann" })
      assert.strictEqual(sent.chat.id, user.id)
      assert.strictEqual(sent.chat.type, "private")
      assert.strictEqual(sent.from?.id, bot.id)
      const seen = yield* waiting
      assert.deepStrictEqual(seen.message, sent)
      const reply = yield* client.sendMessage(token, {
        chat_id: user.id,
        text: "and again",
        reply_parameters: { message_id: sent.message_id }
      })
      assert.strictEqual(reply.reply_to_message?.text, "hi Ann")
      const raw = yield* client.call(token, "GETME", {})
      assert.strictEqual((raw as { id: number }).id, bot.id)
    }))

  it.scopedLive("maps the fake's errors to TelegramApiError", () =>
    Effect.gen(function*() {
      const fake = yield* FakeTelegram.make()
      const bot = fake.addBot()
      const user = fake.addUser()
      const client = yield* Effect.provide(TelegramClient.TelegramClient, clientLayer(fake))
      const token = Redacted.make(bot.token)
      const apiError = (error: TelegramError.TelegramError) => {
        assert.instanceOf(error, TelegramError.TelegramApiError)
        return error
      }

      fake.failNext("sendMessage", { error_code: 429, description: "Too Many Requests: retry after 3", retry_after: 3 })
      const limited = apiError(yield* Effect.flip(client.sendMessage(token, { chat_id: user.id, text: "hi" })))
      assert.strictEqual(limited.error_code, 429)
      assert.strictEqual(limited.retry_after, 3)
      assert.strictEqual(limited.method, "sendMessage")

      const notFound = apiError(yield* Effect.flip(client.sendMessage(token, { chat_id: 1, text: "hi" })))
      assert.strictEqual(notFound.error_code, 400)
      assert.strictEqual(notFound.description, "Bad Request: chat not found")

      const empty = apiError(yield* Effect.flip(client.sendMessage(token, { chat_id: user.id, text: "" })))
      assert.strictEqual(empty.description, "Bad Request: message text is empty")

      const tooLong = apiError(
        yield* Effect.flip(client.sendMessage(token, { chat_id: user.id, text: "x".repeat(5000) }))
      )
      assert.strictEqual(tooLong.description, "Bad Request: message is too long")

      const wrongToken = `${bot.id}:AA${"x".repeat(33)}`
      const unauthorized = apiError(yield* Effect.flip(client.getMe(Redacted.make(wrongToken))))
      assert.strictEqual(unauthorized.error_code, 401)
      assert.strictEqual(unauthorized.description, "Unauthorized")
      assert.notInclude(JSON.stringify(unauthorized), wrongToken)
      assert.notInclude(unauthorized.message, wrongToken)

      const unknown = apiError(yield* Effect.flip(client.call(token, "noSuchMethod")))
      assert.strictEqual(unknown.error_code, 404)

      const after = yield* Effect.either(client.sendMessage(token, { chat_id: user.id, text: "hi" }))
      assert.isTrue(Either.isRight(after))
    }))

  it.scopedLive("a closed fake surfaces as an Unsent transport error: nothing could connect", () =>
    Effect.gen(function*() {
      const fake = yield* Effect.promise(() => FakeTelegram.start())
      const bot = fake.addBot()
      yield* Effect.promise(() => fake.close())
      const client = yield* Effect.provide(TelegramClient.TelegramClient, clientLayer(fake))
      const error = yield* Effect.flip(client.getMe(Redacted.make(bot.token)))
      assert.instanceOf(error, TelegramError.TelegramTransportError)
      assert.strictEqual(error._tag === "TelegramTransportError" && error.reason, "Unsent")
      assert.notInclude(error.message, bot.token)
      assert.notInclude(error.message, fake.apiRoot)
    }))
})

type Body = Record<string, any>

const callApi = async (fake: FakeTelegram.FakeTelegram, token: string, method: string, params: unknown = {}) => {
  const response = await fetch(`${fake.apiRoot}/bot${token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params)
  })
  return { status: response.status, body: (await response.json()) as Body }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const eventually = async (check: () => boolean | Promise<boolean>, ms = 3000) => {
  const until = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not met in time")
    await sleep(10)
  }
}

interface Received {
  readonly headers: Http.IncomingHttpHeaders
  readonly update: Body
}

type Respond = (update: Body, attempt: number) => {
  readonly status: number
  readonly body?: string
  readonly contentType?: string
}

/** A webhook backend on 127.0.0.1 that records what it gets and answers with `respond`. */
const receiver = async (respond: Respond = () => ({ status: 200 })) => {
  const received: Array<Received> = []
  let active = 0
  let maxActive = 0
  const server = Http.createServer((req, res) => {
    active++
    maxActive = Math.max(maxActive, active)
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const update = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Body
      received.push({ headers: req.headers, update })
      const attempt = received.filter((r) => r.update["update_id"] === update["update_id"]).length
      const answer = respond(update, attempt)
      setTimeout(() => {
        active--
        res.writeHead(answer.status, { "content-type": answer.contentType ?? "application/json" })
        res.end(answer.body ?? "")
      }, 5)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    maxActive: () => maxActive,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

const texts = (updates: ReadonlyArray<Body>) => updates.map((update) => update["message"]?.["text"])

describe("FakeTelegram getUpdates", () => {
  it("update ids start high and grow; an offset confirms everything below it", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const other = fake.addBot()
      const user = fake.addUser()
      for (const text of ["a", "b", "c"]) fake.userSends(bot.id, { user, text })
      const pending = fake.pendingUpdates(bot.id)
      const ids = pending.map((update) => update.update_id)
      assert.isAbove(ids[0]!, 1)
      assert.deepStrictEqual(ids, [ids[0]!, ids[0]! + 1, ids[0]! + 2])
      assert.deepStrictEqual(fake.pendingUpdates(other.id), [])
      assert.deepStrictEqual(pending[0]!.message?.from, user)
      assert.deepStrictEqual(pending[0]!.message?.chat, { id: user.id, first_name: user.first_name, type: "private" })

      const all = await callApi(fake, bot.token, "getUpdates")
      assert.strictEqual(all.status, 200)
      assert.deepStrictEqual(all.body["result"], JSON.parse(JSON.stringify(pending)))
      assert.deepStrictEqual(texts((await callApi(fake, bot.token, "getUpdates", { offset: 1 })).body["result"]), [
        "a",
        "b",
        "c"
      ])
      assert.deepStrictEqual(fake.updatesConfirmed(bot.id), [])

      const rest = await callApi(fake, bot.token, "getUpdates", { offset: ids[1] })
      assert.deepStrictEqual(texts(rest.body["result"]), ["b", "c"])
      assert.deepStrictEqual(fake.updatesConfirmed(bot.id).map((update) => update.update_id), [ids[0]])
      const none = await callApi(fake, bot.token, "getUpdates", { offset: ids[2]! + 1 })
      assert.deepStrictEqual(none.body["result"], [])
      assert.deepStrictEqual(fake.updatesConfirmed(bot.id).map((update) => update.update_id), ids)
      assert.deepStrictEqual(fake.pendingUpdates(bot.id), [])
      fake.userSends(bot.id, { user, text: "d" })
      assert.strictEqual(fake.pendingUpdates(bot.id)[0]!.update_id, ids[2]! + 1)
    }))

  it("a negative offset returns the last N updates and forgets the earlier ones", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      for (const text of ["1", "2", "3", "4", "5"]) fake.userSends(bot.id, { text })
      const last = await callApi(fake, bot.token, "getUpdates", { offset: -2 })
      assert.deepStrictEqual(texts(last.body["result"]), ["4", "5"])
      assert.deepStrictEqual(texts(fake.pendingUpdates(bot.id)), ["4", "5"])
      assert.deepStrictEqual(fake.updatesConfirmed(bot.id), [])
      assert.deepStrictEqual(texts((await callApi(fake, bot.token, "getUpdates", { offset: -10 })).body["result"]), [
        "4",
        "5"
      ])
    }))

  it("limit is 1..100, default 100, clamped", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      for (let i = 0; i < 105; i++) fake.enqueue(bot.id, { message: { message_id: i, date: 0, chat: { id: 1 } } })
      const count = async (params: Body) =>
        ((await callApi(fake, bot.token, "getUpdates", params)).body["result"] as Array<unknown>).length
      assert.strictEqual(await count({}), 100)
      assert.strictEqual(await count({ limit: 3 }), 3)
      assert.strictEqual(await count({ limit: 0 }), 1)
      assert.strictEqual(await count({ limit: 1000 }), 100)
      assert.strictEqual(await count({ limit: "7" }), 7)
    }))

  it("timeout holds the request open and answers as soon as an update arrives", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const polling = callApi(fake, bot.token, "getUpdates", { timeout: 10 })
      await fake.waitForPoll(bot.id)
      const started = Date.now()
      fake.userSends(bot.id, { text: "first" })
      fake.userSends(bot.id, { text: "second" })
      const answer = await polling
      assert.isBelow(Date.now() - started, 500)
      assert.deepStrictEqual(texts(answer.body["result"]), ["first", "second"])

      const offset = (answer.body["result"] as Array<Body>)[1]!["update_id"] + 1
      const before = Date.now()
      const empty = await callApi(fake, bot.token, "getUpdates", { offset, timeout: 1 })
      assert.deepStrictEqual(empty.body, { ok: true, result: [] })
      assert.isAtLeast(Date.now() - before, 900)
    }))

  it("allowed_updates is kept when left out; [] means every kind but the opt-in ones", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const earlier = fake.userSends(bot.id, { text: "before the filter" })
      await callApi(fake, bot.token, "getUpdates", { allowed_updates: ["callback_query"] })
      assert.deepStrictEqual(texts(fake.pendingUpdates(bot.id)), ["before the filter"])
      fake.userSends(bot.id, { text: "filtered" })
      await callApi(fake, bot.token, "getUpdates", { offset: fake.pendingUpdates(bot.id)[0]!.update_id + 1 })
      fake.userSends(bot.id, { text: "still filtered" })
      assert.deepStrictEqual(fake.pendingUpdates(bot.id), [])
      fake.userPresses(bot.id, earlier, "x")
      assert.deepStrictEqual(fake.pendingUpdates(bot.id).map((update) => update.callback_query?.data), ["x"])

      await callApi(fake, bot.token, "getUpdates", { allowed_updates: [] })
      fake.userSends(bot.id, { text: "back" })
      assert.isUndefined(fake.enqueue(bot.id, { chat_member: {} }))
      assert.strictEqual(fake.pendingUpdates(bot.id).length, 2)
      const form = await fetch(`${fake.apiRoot}/bot${bot.token}/getUpdates`, {
        method: "POST",
        body: new URLSearchParams({ allowed_updates: JSON.stringify(["chat_member"]) })
      })
      assert.strictEqual(form.status, 200)
      assert.isDefined(fake.enqueue(bot.id, { chat_member: {} }))
      assert.isUndefined(fake.enqueue(bot.id, { message: {} }))
    }))

  it("a newer getUpdates ends a held one with 409", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const older = callApi(fake, bot.token, "getUpdates", { timeout: 20 })
      await fake.waitForPoll(bot.id)
      const started = Date.now()
      const newer = await callApi(fake, bot.token, "getUpdates", { timeout: 0 })
      assert.strictEqual(newer.status, 200)
      assert.deepStrictEqual(await older, {
        status: 409,
        body: {
          ok: false,
          error_code: 409,
          description:
            "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
        }
      })
      assert.isBelow(Date.now() - started, 1000)
    }))

  it("getUpdates while a webhook is set is 409, and setting one ends a held poll", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const conflict = {
        ok: false,
        error_code: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
      }
      const held = callApi(fake, bot.token, "getUpdates", { timeout: 20 })
      await fake.waitForPoll(bot.id)
      const set = await callApi(fake, bot.token, "setWebhook", { url: "http://127.0.0.1:9/hook" })
      assert.deepStrictEqual(set.body, { ok: true, result: true, description: "Webhook was set" })
      assert.deepStrictEqual(await held, { status: 409, body: conflict })
      assert.deepStrictEqual(await callApi(fake, bot.token, "getUpdates"), { status: 409, body: conflict })
      const deleted = await callApi(fake, bot.token, "deleteWebhook")
      assert.deepStrictEqual(deleted.body, { ok: true, result: true, description: "Webhook was deleted" })
      assert.strictEqual((await callApi(fake, bot.token, "getUpdates")).status, 200)
      const again = await callApi(fake, bot.token, "deleteWebhook")
      assert.strictEqual(again.body["description"], "Webhook is already deleted")
    }))

  it("a client that gives up on a held poll frees it", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const controller = new AbortController()
      const aborted = fetch(`${fake.apiRoot}/bot${bot.token}/getUpdates?timeout=20`, { signal: controller.signal })
      await fake.waitForPoll(bot.id)
      controller.abort()
      await expect(aborted).rejects.toThrow()
      await fake.waitForCall((call) => call.method === "getUpdates")
      fake.userSends(bot.id, { text: "kept" })
      await sleep(20)
      assert.deepStrictEqual(texts(fake.pendingUpdates(bot.id)), ["kept"])
    }))
})

describe("FakeTelegram webhooks", () => {
  it("delivers updates one at a time, in order, as JSON with the secret header", async () => {
    const backend = await receiver()
    await withFake(async (fake) => {
      const bot = fake.addBot()
      fake.userSends(bot.id, { text: "queued before" })
      const set = await callApi(fake, bot.token, "setWebhook", { url: backend.url, secret_token: "s3cret_-X" })
      assert.strictEqual(set.status, 200)
      for (const text of ["one", "two", "three"]) fake.userSends(bot.id, { text })
      await eventually(() => backend.received.length === 4)
      assert.deepStrictEqual(texts(backend.received.map((r) => r.update)), ["queued before", "one", "two", "three"])
      assert.strictEqual(backend.maxActive(), 1)
      for (const { headers } of backend.received) {
        assert.strictEqual(headers["content-type"], "application/json")
        assert.strictEqual(headers["x-telegram-bot-api-secret-token"], "s3cret_-X")
      }
      await eventually(() => fake.pendingUpdates(bot.id).length === 0)
      assert.deepStrictEqual(
        fake.updatesConfirmed(bot.id).map((update) => update.update_id),
        backend.received.map((r) => r.update["update_id"])
      )
      const info = await callApi(fake, bot.token, "getWebhookInfo")
      assert.deepStrictEqual(info.body["result"], {
        url: backend.url,
        has_custom_certificate: false,
        pending_update_count: 0,
        max_connections: 40
      })
    }).finally(backend.close)
  })

  it("validates the URL and the secret; drop_pending_updates drops the queue", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const unallowed = {
        ok: false,
        error_code: 400,
        description: "Bad Request: secret token contains unallowed characters"
      }
      for (const secret of ["has space", "colon:no", "x".repeat(257), "ünï"]) {
        assert.deepStrictEqual(
          await callApi(fake, bot.token, "setWebhook", { url: "https://example.test/", secret_token: secret }),
          { status: 400, body: unallowed }
        )
      }
      assert.deepStrictEqual((await callApi(fake, bot.token, "setWebhook", { url: "ftp://example.test" })).body, {
        ok: false,
        error_code: 400,
        description: "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
      })
      fake.userSends(bot.id, { text: "dropped" })
      const set = await callApi(fake, bot.token, "setWebhook", {
        url: "http://127.0.0.1:9/x",
        secret_token: "A".repeat(256),
        drop_pending_updates: true,
        max_connections: 5,
        allowed_updates: ["message"]
      })
      assert.strictEqual(set.status, 200)
      assert.deepStrictEqual(fake.pendingUpdates(bot.id), [])
      assert.deepStrictEqual((await callApi(fake, bot.token, "getWebhookInfo")).body["result"], {
        url: "http://127.0.0.1:9/x",
        has_custom_certificate: false,
        pending_update_count: 0,
        max_connections: 5,
        allowed_updates: ["message"]
      })
      assert.strictEqual(
        (await callApi(fake, bot.token, "setWebhook", { url: "http://127.0.0.1:9/x" })).body["description"],
        "Webhook is already set"
      )
      const removed = await callApi(fake, bot.token, "setWebhook", { url: "" })
      assert.deepStrictEqual(removed.body, { ok: true, result: true, description: "Webhook was deleted" })
      assert.deepStrictEqual((await callApi(fake, bot.token, "getWebhookInfo")).body["result"], {
        url: "",
        has_custom_certificate: false,
        pending_update_count: 0
      })
    }))

  it("retries non-2xx answers until a 2xx, the update at the head; getWebhookInfo shows the error", async () => {
    const backend = await receiver((_, attempt) => ({ status: attempt <= 2 ? 500 : 200 }))
    await withFake(async (fake) => {
      const bot = fake.addBot()
      await callApi(fake, bot.token, "setWebhook", { url: backend.url })
      fake.userSends(bot.id, { text: "a" })
      fake.userSends(bot.id, { text: "b" })
      await eventually(() => fake.pendingUpdates(bot.id).length === 0)
      assert.deepStrictEqual(texts(backend.received.map((r) => r.update)), ["a", "a", "a", "b", "b", "b"])
      const info = await callApi(fake, bot.token, "getWebhookInfo")
      assert.deepStrictEqual(info.body["result"], {
        url: backend.url,
        has_custom_certificate: false,
        pending_update_count: 0,
        last_error_date: 1_700_000_000,
        last_error_message: "Wrong response from the webhook: 500 Internal Server Error",
        max_connections: 40
      })
    }, { now: () => 1_700_000_000, webhookRetryDelay: 10 }).finally(backend.close)
  })

  it("a connection error is retried; deleteWebhook stops delivery and keeps the update", async () => {
    const gone = await receiver()
    await gone.close()
    await withFake(async (fake) => {
      const bot = fake.addBot()
      await callApi(fake, bot.token, "setWebhook", { url: gone.url })
      fake.userSends(bot.id, { text: "waiting" })
      await eventually(async () =>
        (await callApi(fake, bot.token, "getWebhookInfo")).body["result"]["last_error_message"] === "Connection refused"
      )
      const info = (await callApi(fake, bot.token, "getWebhookInfo")).body["result"]
      assert.strictEqual(info["pending_update_count"], 1)
      assert.isNumber(info["last_error_date"])
      await callApi(fake, bot.token, "deleteWebhook")
      await sleep(50)
      assert.deepStrictEqual(texts((await callApi(fake, bot.token, "getUpdates")).body["result"]), ["waiting"])
      await callApi(fake, bot.token, "setWebhook", { url: gone.url })
      await callApi(fake, bot.token, "deleteWebhook", { drop_pending_updates: true })
      assert.deepStrictEqual(fake.pendingUpdates(bot.id), [])
    }, { webhookRetryDelay: 10 })
  })

  it("a webhook response holding a method is run as the bot's call", async () => {
    const backend = await receiver((update) => {
      if (update["message"] !== undefined) {
        return {
          status: 200,
          body: JSON.stringify({ method: "sendMessage", chat_id: update["message"]["chat"]["id"], text: "pong" })
        }
      }
      return {
        status: 200,
        contentType: "application/x-www-form-urlencoded",
        body: new URLSearchParams({ method: "answerCallbackQuery", callback_query_id: update["callback_query"]["id"] })
          .toString()
      }
    })
    await withFake(async (fake) => {
      const bot = fake.addBot()
      await callApi(fake, bot.token, "setWebhook", { url: backend.url, secret_token: "abc" })
      const ping = fake.userSends(bot.id, { text: "ping" })
      const pong = await fake.waitForSent((sent) => sent.message.text === "pong")
      assert.strictEqual(pong.botId, bot.id)
      assert.strictEqual(pong.message.chat.id, ping.chat.id)
      const query = fake.userPresses(bot.id, pong.message, "press")
      const answered = await fake.waitForCall((call) => call.method === "answerCallbackQuery")
      assert.deepStrictEqual({ ...answered, receivedAt: 0 }, {
        receivedAt: 0,
        botId: bot.id,
        method: "answerCallbackQuery",
        params: { callback_query_id: query.id },
        status: 200,
        webhookReply: true
      })
      const reply = fake.calls.find((call) => call.method === "sendMessage")
      assert.strictEqual(reply?.webhookReply, true)
      assert.deepStrictEqual(
        (await callApi(fake, bot.token, "answerCallbackQuery", { callback_query_id: query.id })).body["description"],
        "Bad Request: query is too old and response timeout expired or query ID is invalid"
      )
    }).finally(backend.close)
  })
})

describe("FakeTelegram chats and messages", () => {
  it("a bot only sees private chats of users who wrote to it and groups it is in", () =>
    withFake(async (fake) => {
      const a = fake.addBot()
      const b = fake.addBot()
      const shy = fake.addUser({ startedBots: [] })
      const group = fake.addGroup({ type: "supergroup", members: [a.id] })
      const send = (token: string, chat_id: number) => callApi(fake, token, "sendMessage", { chat_id, text: "hi" })
      assert.deepStrictEqual((await send(a.token, shy.id)).body, {
        ok: false,
        error_code: 403,
        description: "Forbidden: bot can't initiate conversation with a user"
      })
      fake.userSends(a.id, { user: shy, text: "/start" })
      assert.deepStrictEqual(fake.pendingUpdates(a.id)[0]!.message?.entities, [
        { offset: 0, length: 6, type: "bot_command" }
      ])
      assert.strictEqual((await send(a.token, shy.id)).status, 200)
      assert.strictEqual((await send(b.token, shy.id)).status, 403)

      assert.strictEqual((await send(a.token, group.id)).status, 200)
      assert.deepStrictEqual((await send(b.token, group.id)).body["description"], "Bad Request: chat not found")
      expect(() => fake.userSends(b.id, { chat: group, text: "x" })).toThrow(/not a member/)
      fake.addToGroup(group.id, b.id)
      assert.strictEqual((await send(b.token, group.id)).status, 200)

      const inGroup = fake.userSends(a.id, { user: shy, chat: group.id, text: "hello all" })
      assert.strictEqual(inGroup.message_id, 3)
      const forA = fake.pendingUpdates(a.id).at(-1)!
      const forB = fake.pendingUpdates(b.id).at(-1)!
      assert.deepStrictEqual(forA.message, inGroup)
      assert.deepStrictEqual(forB.message, inGroup)
      assert.deepStrictEqual(inGroup.chat, group)
    }))

  it("forwardMessage sets forward_origin and numbers the copy in the target chat", () =>
    withFake(async (fake) => {
      const a = fake.addBot()
      const b = fake.addBot()
      const user = fake.addUser({ first_name: "Ann" })
      const group = fake.addGroup()
      const channel = fake.addGroup({ type: "channel", title: "News" })
      await callApi(fake, a.token, "sendMessage", { chat_id: group.id, text: "earlier" })
      const original = fake.userSends(a.id, { user, text: "hello" })
      const forwarded = await callApi(fake, a.token, "forwardMessage", {
        chat_id: group.id,
        from_chat_id: user.id,
        message_id: original.message_id
      })
      assert.strictEqual(forwarded.status, 200)
      assert.deepStrictEqual(forwarded.body["result"], {
        message_id: 2,
        from: { id: a.id, is_bot: true, first_name: a.first_name, username: a.username },
        chat: group,
        date: 1_700_000_000,
        forward_origin: { type: "user", sender_user: user, date: 1_700_000_000 },
        forward_from: user,
        forward_date: 1_700_000_000,
        text: "hello"
      })
      assert.strictEqual(fake.sent(a.id).at(-1)?.method, "forwardMessage")

      const missing = { ok: false, error_code: 400, description: "Bad Request: message to forward not found" }
      assert.deepStrictEqual(
        (await callApi(fake, b.token, "forwardMessage", {
          chat_id: group.id,
          from_chat_id: user.id,
          message_id: original.message_id
        })).body,
        missing
      )
      assert.deepStrictEqual(
        (await callApi(fake, a.token, "forwardMessage", { chat_id: group.id, from_chat_id: user.id, message_id: 99 }))
          .body,
        missing
      )

      const post = fake.channelPost(a.id, channel.id, "headline")
      assert.deepStrictEqual(fake.pendingUpdates(b.id).at(-1)?.channel_post, post)
      const again = await callApi(fake, b.token, "forwardMessage", {
        chat_id: user.id,
        from_chat_id: channel.id,
        message_id: post.message_id
      })
      assert.deepStrictEqual(again.body["result"]["forward_origin"], {
        type: "channel",
        chat: channel,
        message_id: post.message_id,
        date: 1_700_000_000
      })
      assert.deepStrictEqual(again.body["result"]["forward_from_chat"], channel)
    }, { now: () => 1_700_000_000 }))

  it("copyMessage returns the new message_id and copies content with a new caption", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const group = fake.addGroup()
      const photo = fake.userSends(bot.id, { user, photo: true, caption: "old" })
      const copied = await callApi(fake, bot.token, "copyMessage", {
        chat_id: group.id,
        from_chat_id: user.id,
        message_id: photo.message_id,
        caption: "new"
      })
      assert.deepStrictEqual(copied.body, { ok: true, result: { message_id: 1 } })
      const copy = fake.sent(bot.id).at(-1)!
      assert.strictEqual(copy.method, "copyMessage")
      assert.deepStrictEqual(copy.message.photo, photo.photo)
      assert.strictEqual(copy.message.caption, "new")
      assert.notProperty(copy.message, "forward_origin")
      assert.strictEqual(copy.message.chat.id, group.id)

      const text = fake.userSends(bot.id, { user, text: "words" })
      const textCopy = await callApi(fake, bot.token, "copyMessage", {
        chat_id: group.id,
        from_chat_id: user.id,
        message_id: text.message_id,
        reply_parameters: { message_id: 1 }
      })
      assert.deepStrictEqual(textCopy.body["result"], { message_id: 2 })
      assert.strictEqual(fake.sent(bot.id).at(-1)!.message.text, "words")
      assert.strictEqual(fake.sent(bot.id).at(-1)!.message.reply_to_message?.message_id, 1)
      assert.deepStrictEqual(
        (await callApi(fake, bot.token, "copyMessage", { chat_id: group.id, from_chat_id: user.id, message_id: 50 }))
          .body,
        { ok: false, error_code: 400, description: "Bad Request: message to copy not found" }
      )
    }))

  it("editMessageText edits the bot's own text messages only, and refuses a no-op", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const keyboard = { inline_keyboard: [[{ text: "Yes", callback_data: "yes" }]] }
      const sent = await callApi(fake, bot.token, "sendMessage", {
        chat_id: user.id,
        text: "hi",
        reply_markup: keyboard
      })
      assert.deepStrictEqual(sent.body["result"]["reply_markup"], keyboard)
      const id = sent.body["result"]["message_id"]
      const same = await callApi(fake, bot.token, "editMessageText", {
        chat_id: user.id,
        message_id: id,
        text: "hi",
        reply_markup: keyboard
      })
      assert.deepStrictEqual(same.body, {
        ok: false,
        error_code: 400,
        description: "Bad Request: message is not modified: specified new message content and reply markup are " +
          "exactly the same as a current content and reply markup of the message"
      })
      const edited = await callApi(fake, bot.token, "editMessageText", {
        chat_id: user.id,
        message_id: id,
        text: "bye"
      })
      const { reply_markup: _, ...withoutKeyboard } = sent.body["result"]
      assert.deepStrictEqual(edited.body["result"], { ...withoutKeyboard, text: "bye", edit_date: 1_700_000_000 })
      const badRequest = async (params: Body) =>
        (await callApi(fake, bot.token, "editMessageText", params)).body["description"]
      assert.strictEqual(
        await badRequest({ chat_id: user.id, message_id: 77, text: "x" }),
        "Bad Request: message to edit not found"
      )
      const theirs = fake.userSends(bot.id, { user, text: "mine" })
      assert.strictEqual(
        await badRequest({ chat_id: user.id, message_id: theirs.message_id, text: "x" }),
        "Bad Request: message can't be edited"
      )
      assert.strictEqual(
        await badRequest({ chat_id: user.id, message_id: id, text: "" }),
        "Bad Request: message text is empty"
      )
    }, { now: () => 1_700_000_000 }))

  it("deleteMessage, sendChatAction, userEdits and enqueue", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const sent = await callApi(fake, bot.token, "sendMessage", { chat_id: user.id, text: "x" })
      const params = { chat_id: user.id, message_id: sent.body["result"]["message_id"] }
      assert.deepStrictEqual((await callApi(fake, bot.token, "deleteMessage", params)).body, { ok: true, result: true })
      assert.deepStrictEqual((await callApi(fake, bot.token, "deleteMessage", params)).body, {
        ok: false,
        error_code: 400,
        description: "Bad Request: message to delete not found"
      })
      assert.deepStrictEqual(
        (await callApi(fake, bot.token, "sendChatAction", { chat_id: user.id, action: "typing" })).body,
        { ok: true, result: true }
      )
      assert.strictEqual(
        (await callApi(fake, bot.token, "sendChatAction", { chat_id: user.id, action: "dancing" })).body["description"],
        "Bad Request: wrong parameter action in request"
      )

      const original = fake.userSends(bot.id, { user, text: "typo" })
      const edited = fake.userEdits(bot.id, user.id, original.message_id, "fixed")
      assert.strictEqual(edited.text, "fixed")
      assert.isNumber(edited.edit_date)
      assert.deepStrictEqual(fake.pendingUpdates(bot.id).at(-1)?.edited_message, edited)

      const raw = fake.enqueue(bot.id, { poll: { id: "p", question: "?" } })
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- needed: `poll` is no field of Body (tsc's excess-property check)
      assert.deepStrictEqual(raw, {
        update_id: fake.pendingUpdates(bot.id).at(-1)!.update_id,
        poll: { id: "p", question: "?" }
      } as Body)
    }))

  it("answerCallbackQuery answers a press once, and only by its bot", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const other = fake.addBot()
      const user = fake.addUser()
      const message = (await callApi(fake, bot.token, "sendMessage", {
        chat_id: user.id,
        text: "choose",
        reply_markup: { inline_keyboard: [[{ text: "A", callback_data: "a" }]] }
      })).body["result"] as BotApi.Message
      const query = fake.userPresses(bot.id, message, "a")
      const update = fake.pendingUpdates(bot.id).at(-1)!
      assert.deepStrictEqual(update.callback_query, query)
      assert.deepStrictEqual(query.from, user)
      assert.deepStrictEqual(query.message, message)
      assert.strictEqual(query.data, "a")
      assert.notStrictEqual(fake.userPresses(bot.id, message, "a").id, query.id)
      const answer = (token: string, id: string) =>
        callApi(fake, token, "answerCallbackQuery", { callback_query_id: id, text: "ok" })
      const tooOld = {
        ok: false,
        error_code: 400,
        description: "Bad Request: query is too old and response timeout expired or query ID is invalid"
      }
      assert.deepStrictEqual((await answer(other.token, query.id)).body, tooOld)
      assert.deepStrictEqual((await answer(bot.token, query.id)).body, { ok: true, result: true })
      assert.deepStrictEqual((await answer(bot.token, query.id)).body, tooOld)
      assert.deepStrictEqual((await answer(bot.token, "123")).body, tooOld)
    }))

  it("getFile describes a known file and /file/bot<token>/<path> serves its bytes, with ranges", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const message = fake.userSends(bot.id, { photo: true })
      const largest = message.photo!.at(-1)!
      const file = await callApi(fake, bot.token, "getFile", { file_id: largest.file_id })
      assert.strictEqual(file.status, 200)
      const result = file.body["result"] as BotApi.File
      assert.deepStrictEqual(result, {
        file_id: largest.file_id,
        file_unique_id: largest.file_unique_id,
        file_size: largest.file_size!,
        file_path: result.file_path!
      })
      const url = `${fake.apiRoot}/file/bot${bot.token}/${result.file_path}`
      const download = await fetch(url)
      assert.strictEqual(download.status, 200)
      const bytes = new Uint8Array(await download.arrayBuffer())
      assert.strictEqual(bytes.length, result.file_size)
      assert.deepStrictEqual([...bytes.slice(0, 3)], [0xff, 0xd8, 0xff])
      assert.deepStrictEqual(bytes, fake.fileBytes(largest.file_id))
      assert.deepStrictEqual(new Uint8Array(await (await fetch(url)).arrayBuffer()), bytes)

      const part = await fetch(url, { headers: { range: "bytes=10-19" } })
      assert.strictEqual(part.status, 206)
      assert.strictEqual(part.headers.get("content-range"), `bytes 10-19/${bytes.length}`)
      assert.deepStrictEqual(new Uint8Array(await part.arrayBuffer()), bytes.slice(10, 20))
      const tail = await fetch(url, { headers: { range: "bytes=-5" } })
      assert.deepStrictEqual(new Uint8Array(await tail.arrayBuffer()), bytes.slice(-5))
      assert.strictEqual((await fetch(url, { headers: { range: "bytes=99999999-" } })).status, 416)

      assert.strictEqual((await fetch(`${fake.apiRoot}/file/bot${bot.token}/photos/nope.jpg`)).status, 404)
      assert.strictEqual((await fetch(`${fake.apiRoot}/file/bot${bot.id}:AAwrong/${result.file_path}`)).status, 401)
      assert.deepStrictEqual((await callApi(fake, bot.token, "getFile", { file_id: "nope" })).body, {
        ok: false,
        error_code: 400,
        description: "Bad Request: invalid file_id"
      })
    }))

  it("a photo sent as bytes is one size whose file serves exactly those bytes", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const bytes = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9])
      const message = fake.userSends(bot.id, { photo: { bytes, width: 32, height: 24 }, caption: "box" })
      assert.strictEqual(message.caption, "box")
      assert.strictEqual(message.photo!.length, 1)
      const [size] = message.photo!
      assert.deepInclude(size, { width: 32, height: 24, file_size: bytes.length })
      const file = await callApi(fake, bot.token, "getFile", { file_id: size!.file_id })
      const path = (file.body["result"] as BotApi.File).file_path!
      const download = await fetch(`${fake.apiRoot}/file/bot${bot.token}/${path}`)
      assert.strictEqual(download.headers.get("content-type"), "image/jpeg")
      assert.deepStrictEqual(new Uint8Array(await download.arrayBuffer()), bytes)
    }))
})

describe("FakeTelegram error control", () => {
  it("revoke gives a new token; the old one gets 401, a held poll too", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const held = callApi(fake, bot.token, "getUpdates", { timeout: 20 })
      await fake.waitForPoll(bot.id)
      const renewed = fake.revoke(bot.id)
      assert.strictEqual(renewed.id, bot.id)
      assert.notStrictEqual(renewed.token, bot.token)
      const unauthorized = { ok: false, error_code: 401, description: "Unauthorized" }
      assert.deepStrictEqual(await held, { status: 401, body: unauthorized })
      assert.deepStrictEqual(await callApi(fake, bot.token, "getMe"), { status: 401, body: unauthorized })
      assert.strictEqual((await callApi(fake, renewed.token, "getMe")).status, 200)
    }))

  it("failAlways fails every matching call until clearFailures; failNext comes first", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const other = fake.addBot()
      fake.failAlways("getMe", { error_code: 403, description: "Forbidden: bot was blocked by the user" }, {
        botId: bot.id
      })
      fake.failNext("getme", { error_code: 429, description: "Too Many Requests: retry after 1", retry_after: 1 })
      const statuses = async (token: string) => (await callApi(fake, token, "getMe")).status
      assert.deepStrictEqual([await statuses(bot.token), await statuses(bot.token), await statuses(bot.token)], [
        429,
        403,
        403
      ])
      assert.strictEqual(await statuses(other.token), 200)
      fake.clearFailures()
      assert.strictEqual(await statuses(bot.token), 200)
    }))

  it("close ends held polls and webhook deliveries at once", async () => {
    const fake = await FakeTelegram.start({ webhookRetryDelay: "10 seconds" })
    const polling = fake.addBot()
    const hooked = fake.addBot()
    const held = callApi(fake, polling.token, "getUpdates", { timeout: 30 }).catch(() => "closed")
    await fake.waitForPoll(polling.id)
    await callApi(fake, hooked.token, "setWebhook", { url: "http://127.0.0.1:9/hook" })
    fake.userSends(hooked.id, { text: "never delivered" })
    await sleep(50)
    const started = Date.now()
    await fake.close()
    await held
    assert.isBelow(Date.now() - started, 1000)
  })
})

describe("FakeTelegram through TelegramClient, new methods", () => {
  it.scopedLive("getUpdates payloads, webhooks, copy and getFile", () =>
    Effect.gen(function*() {
      const fake = yield* FakeTelegram.make()
      const bot = fake.addBot()
      const user = fake.addUser()
      const client = yield* Effect.provide(TelegramClient.TelegramClient, clientLayer(fake))
      const token = Redacted.make(bot.token)
      const photo = fake.userSends(bot.id, { user, photo: true, caption: "pic" })
      fake.userSends(bot.id, { user, text: "hello" })
      const updates = yield* client.getUpdates(token, { timeout: 1, allowed_updates: [] })
      assert.deepStrictEqual(
        updates.map((update) => JSON.parse(update.payload)),
        JSON.parse(JSON.stringify(fake.pendingUpdates(bot.id)))
      )
      assert.deepStrictEqual(
        updates.map((update) => update.update_id),
        fake.pendingUpdates(bot.id).map((update) => update.update_id)
      )

      const copied = yield* client.copyMessage(token, {
        chat_id: user.id,
        from_chat_id: user.id,
        message_id: photo.message_id
      })
      assert.strictEqual(copied.message_id, 3)
      const file = yield* client.getFile(token, { file_id: photo.photo![0]!.file_id })
      assert.strictEqual(file.file_size, fake.fileBytes(photo.photo![0]!.file_id)?.length)

      const secret = Redacted.make("s_1")
      assert.isTrue(yield* client.setWebhook(token, { url: "http://127.0.0.1:9/x", secret_token: secret }))
      const info = yield* client.getWebhookInfo(token)
      assert.strictEqual(info.url, "http://127.0.0.1:9/x")
      const conflict = yield* Effect.flip(client.getUpdates(token))
      assert.strictEqual(conflict._tag === "TelegramApiError" && conflict.error_code, 409)
      assert.isTrue(yield* client.deleteWebhook(token, { drop_pending_updates: true }))
      assert.strictEqual((yield* client.getWebhookInfo(token)).pending_update_count, 0)
    }))
})

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** A file part for `upload`: bytes, a file name and, optionally, a Content-Type. */
interface FileField {
  readonly bytes: Uint8Array
  readonly name: string
  readonly type?: string
}

/** A multipart request as undici's FormData writes it. */
const upload = async (
  fake: FakeTelegram.FakeTelegram,
  token: string,
  method: string,
  fields: Readonly<Record<string, string | FileField>>
) => {
  const form = new FormData()
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === "string") {
      form.set(name, value)
    } else {
      const blob = new Blob([new Uint8Array(value.bytes)], value.type === undefined ? {} : { type: value.type })
      form.set(name, blob, value.name)
    }
  }
  const response = await fetch(`${fake.apiRoot}/bot${token}/${method}`, { method: "POST", body: form })
  return { status: response.status, body: (await response.json()) as Body }
}

/** A multipart body as grammY streams it: lowercase headers without spaces, unquoted file names. */
const grammyBody = (
  boundary: string,
  fields: Readonly<Record<string, string>>,
  files: ReadonlyArray<{ readonly id: string; readonly filename: string; readonly bytes: Uint8Array }>
): Buffer => {
  const parts = [
    ...Object.entries(fields).map(([key, value]) =>
      Buffer.from(`content-disposition:form-data;name="${key}"\r\n\r\n${value}`)
    ),
    ...files.map((file) =>
      Buffer.concat([
        Buffer.from(
          `content-disposition:form-data;name="${file.id}";filename=${file.filename}\r\n` +
            "content-type:application/octet-stream\r\n\r\n"
        ),
        file.bytes
      ])
    )
  ]
  const separator = Buffer.from(`\r\n--${boundary}\r\n`)
  return Buffer.concat([
    Buffer.from(`--${boundary}\r\n`),
    ...parts.flatMap((part, i) => (i === 0 ? [part] : [separator, part])),
    Buffer.from(`\r\n--${boundary}--\r\n`)
  ])
}

/** POSTs `body` chunked, 64 KiB at a time, as a streaming client does. */
const streamPost = (url: string, contentType: string, body: Buffer) =>
  new Promise<{ status: number; body: Body }>((resolve, reject) => {
    const request = Http.request(url, { method: "POST", headers: { "content-type": contentType } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) })
      )
    })
    request.on("error", reject)
    for (let offset = 0; offset < body.length; offset += 65_536) request.write(body.subarray(offset, offset + 65_536))
    request.end()
  })

/** The bytes `/file/bot<token>/<path>` serves for a file_id, found with getFile. */
const download = async (fake: FakeTelegram.FakeTelegram, token: string, fileId: string) => {
  const file = await callApi(fake, token, "getFile", { file_id: fileId })
  assert.strictEqual(file.status, 200)
  const response = await fetch(`${fake.apiRoot}/file/bot${token}/${file.body["result"]["file_path"]}`)
  assert.strictEqual(response.status, 200)
  return { path: file.body["result"]["file_path"] as string, bytes: new Uint8Array(await response.arrayBuffer()) }
}

/** Bytes no text decoding survives: invalid UTF-8, lone CRs and LFs, and near-boundaries. */
const awkwardBytes = (boundary: string, size: number) =>
  Buffer.concat([
    Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0d, 0x0a, 0x0d, 0x0a, 0x0d, 0x0a, 0x2d, 0x2d]),
    Buffer.from(`\r\n--${boundary.slice(0, -1)}\r\n--\r\n\r\ncontent-disposition:form-data;name="x"\r\n\r\n`),
    randomBytes(size),
    Buffer.from([0x0d, 0x0a, 0x2d, 0x2d, 0x0d])
  ])

describe("FakeTelegram media", () => {
  it("sendPhoto keeps an uploaded file byte for byte; getFile and /file/ serve it back", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const first = await callApi(fake, bot.token, "sendMessage", { chat_id: user.id, text: "here it comes" })
      const bytes = randomBytes(1024 * 1024)
      const sent = await upload(fake, bot.token, "sendPhoto", {
        chat_id: String(user.id),
        caption: "Café ✓ 📷",
        reply_parameters: JSON.stringify({ message_id: 1 }),
        photo: { bytes, name: "holiday.jpg", type: "image/jpeg" }
      })
      assert.strictEqual(sent.status, 200)
      const message = sent.body["result"] as BotApi.Message
      assert.strictEqual(message.message_id, 2)
      assert.strictEqual(message.caption, "Café ✓ 📷")
      assert.deepStrictEqual(message.reply_to_message, first.body["result"])
      const sizes = message.photo!
      assert.isAtLeast(sizes.length, 2)
      assert.strictEqual(sizes.at(-1)!.file_size, bytes.length)
      for (let i = 1; i < sizes.length; i++) {
        assert.isAbove(sizes[i]!.file_size!, sizes[i - 1]!.file_size!)
        assert.isAbove(sizes[i]!.width, sizes[i - 1]!.width)
      }
      assert.match(sizes.at(-1)!.file_id, /^AgAC/)

      const got = await download(fake, bot.token, sizes.at(-1)!.file_id)
      assert.match(got.path, /^photos\/file_\d+\.jpg$/)
      assert.isTrue(Buffer.from(got.bytes).equals(bytes))
      assert.isTrue(Buffer.from(fake.fileBytes(sizes.at(-1)!.file_id)!).equals(bytes))
      const part = await fetch(`${fake.apiRoot}/file/bot${bot.token}/${got.path}`, {
        headers: { range: "bytes=1000-1999" }
      })
      assert.isTrue(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(1000, 2000)))
      assert.strictEqual((await download(fake, bot.token, sizes[0]!.file_id)).bytes.length, sizes[0]!.file_size)

      const summary = {
        file_name: "holiday.jpg",
        mime_type: "image/jpeg",
        file_size: bytes.length,
        sha256: sha256(bytes)
      }
      assert.deepStrictEqual(fake.uploads(bot.id), [{
        botId: bot.id,
        method: "sendPhoto",
        field: "photo",
        file_id: sizes.at(-1)!.file_id,
        file_unique_id: sizes.at(-1)!.file_unique_id,
        ...summary
      }])
      assert.deepStrictEqual(fake.uploads(bot.id + 1), [])
      const record = await fake.waitForSent((s) => s.method === "sendPhoto")
      assert.deepStrictEqual(record.message, message)
      assert.deepStrictEqual(record.upload, fake.uploads()[0])
      const call = fake.calls.find((call) => call.method === "sendPhoto")!
      assert.deepStrictEqual(call.params["photo"], summary)
      assert.strictEqual(call.params["caption"], "Café ✓ 📷")
    }))

  it("reads grammY's streamed multipart (attach://, unquoted names, no Content-Type) and Telegraf's", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const boundary = "----------" + "k3j2h4g5f6d7s8a9q0w1e2r3t4y5u6i7"
      const bytes = awkwardBytes(boundary, 300_000)
      const body = grammyBody(boundary, {
        chat_id: String(user.id),
        document: "attach://x7Fq2",
        caption: "Отчёт 📎",
        reply_markup: JSON.stringify({ inline_keyboard: [[{ text: "Open", callback_data: "open" }]] })
      }, [{ id: "x7Fq2", filename: "report 2024.pdf", bytes }])
      const sent = await streamPost(
        `${fake.apiRoot}/bot${bot.token}/sendDocument`,
        `multipart/form-data; boundary=${boundary}`,
        body
      )
      assert.strictEqual(sent.status, 200)
      const document = sent.body["result"]["document"] as BotApi.Document
      assert.deepStrictEqual(Object.keys(document).sort(), [
        "file_id",
        "file_name",
        "file_size",
        "file_unique_id",
        "mime_type"
      ])
      assert.strictEqual(document.file_name, "report 2024.pdf")
      assert.strictEqual(document.mime_type, "application/pdf")
      assert.strictEqual(document.file_size, bytes.length)
      assert.strictEqual(sent.body["result"]["caption"], "Отчёт 📎")
      assert.deepStrictEqual(sent.body["result"]["reply_markup"], {
        inline_keyboard: [[{ text: "Open", callback_data: "open" }]]
      })
      const got = await download(fake, bot.token, document.file_id)
      assert.match(got.path, /^documents\/file_\d+\.pdf$/)
      assert.isTrue(Buffer.from(got.bytes).equals(bytes))
      assert.deepStrictEqual(
        { field: fake.uploads()[0]!.field, mime_type: fake.uploads()[0]!.mime_type, sha256: fake.uploads()[0]!.sha256 },
        { field: "x7Fq2", mime_type: "application/octet-stream", sha256: sha256(bytes) }
      )

      const telegrafBoundary = "telegraf-boundary-0123456789"
      const song = awkwardBytes(telegrafBoundary, 5_000)
      const telegraf = Buffer.concat([
        Buffer.from(
          `--${telegrafBoundary}\r\ncontent-disposition:form-data; name="chat_id"\r\n\r\n${user.id}` +
            `\r\n--${telegrafBoundary}\r\ncontent-disposition:form-data; name="title"\r\n\r\nSong` +
            `\r\n--${telegrafBoundary}\r\ncontent-disposition:form-data; name="audio"; filename="song.mp3"\r\n\r\n`
        ),
        song,
        Buffer.from(`\r\n--${telegrafBoundary}--`)
      ])
      const audio = await streamPost(
        `${fake.apiRoot}/bot${bot.token}/sendAudio`,
        `multipart/form-data; boundary=${telegrafBoundary}`,
        telegraf
      )
      assert.strictEqual(audio.status, 200)
      assert.include(audio.body["result"]["audio"], { file_name: "song.mp3", mime_type: "audio/mpeg", title: "Song" })
      assert.isTrue(Buffer.from(fake.fileBytes(audio.body["result"]["audio"]["file_id"])!).equals(song))

      const broken = await streamPost(
        `${fake.apiRoot}/bot${bot.token}/sendAudio`,
        `multipart/form-data; boundary=${telegrafBoundary}`,
        telegraf.subarray(0, telegraf.length - 40)
      )
      assert.deepStrictEqual(broken, {
        status: 400,
        body: { ok: false, error_code: 400, description: "Bad Request: can't parse multipart/form-data" }
      })
    }))

  it("every media send puts its kind's field on the Message; URLs and file_ids work too", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const send = async (method: string, params: Body) =>
        (await callApi(fake, bot.token, method, { chat_id: user.id, ...params })).body["result"] as Body
      const url = "https://example.com/media/"
      const photo = await send("sendPhoto", { photo: `${url}cat.jpg`, caption: "cat" })
      const document = await send("sendDocument", { document: `${url}Manual%20v2.pdf` })
      const video = await send("sendVideo", { video: `${url}clip.mp4`, duration: 12, width: 1280, height: 720 })
      const audio = await send("sendAudio", { audio: `${url}song.mp3`, performer: "Band", title: "Hit" })
      const voice = await send("sendVoice", { voice: `${url}note.ogg`, duration: 3 })
      const animation = await send("sendAnimation", { animation: `${url}fun.mp4` })
      const sticker = await send("sendSticker", { sticker: `${url}s.webp`, emoji: "👍" })
      const videoNote = await send("sendVideoNote", { video_note: `${url}round.mp4`, length: 360 })

      assert.strictEqual(photo["caption"], "cat")
      assert.isArray(photo["photo"])
      assert.include(document["document"], { file_name: "Manual v2.pdf", mime_type: "application/pdf" })
      assert.include(video["video"], { duration: 12, width: 1280, height: 720, mime_type: "video/mp4" })
      assert.include(audio["audio"], {
        performer: "Band",
        title: "Hit",
        file_name: "song.mp3",
        mime_type: "audio/mpeg"
      })
      assert.include(voice["voice"], { duration: 3, mime_type: "audio/ogg" })
      assert.notProperty(voice["voice"], "file_name")
      assert.include(animation["animation"], { file_name: "fun.mp4", mime_type: "video/mp4" })
      assert.include(sticker["sticker"], { type: "regular", emoji: "👍", is_animated: false, is_video: false })
      assert.notProperty(sticker["sticker"], "mime_type")
      assert.include(videoNote["video_note"], { length: 360 })
      assert.notProperty(videoNote["video_note"], "file_name")
      for (const [message, field] of [
        [document, "document"],
        [video, "video"],
        [audio, "audio"],
        [voice, "voice"],
        [animation, "animation"],
        [sticker, "sticker"],
        [videoNote, "video_note"]
      ] as const) {
        const file = message[field] as Body
        assert.includeMembers(Object.keys(file), ["file_id", "file_unique_id", "file_size"])
        assert.strictEqual((await download(fake, bot.token, file["file_id"])).bytes.length, file["file_size"])
      }
      assert.deepStrictEqual(
        fake.sent(bot.id).map((sent) => sent.method),
        [
          "sendPhoto",
          "sendDocument",
          "sendVideo",
          "sendAudio",
          "sendVoice",
          "sendAnimation",
          "sendSticker",
          "sendVideoNote"
        ]
      )
      assert.deepStrictEqual(fake.uploads(), [])
      assert.isTrue(fake.sent().every((sent) => sent.upload === undefined))

      const fromUser = fake.userSends(bot.id, { user, photo: true })
      const again = await send("sendPhoto", { photo: fromUser.photo![0]!.file_id })
      assert.deepStrictEqual(again["photo"], fromUser.photo)
      const sameDocument = await send("sendDocument", { document: document["document"]["file_id"], caption: "again" })
      assert.deepStrictEqual(sameDocument["document"], document["document"])
      assert.strictEqual(sameDocument["caption"], "again")
      assert.strictEqual((await fake.waitForSent((sent) => sent.message.caption === "again")).method, "sendDocument")
    }))

  it("media sends refuse what Telegram refuses, and honour injected failures", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const refusal = async (method: string, params: Body) =>
        (await callApi(fake, bot.token, method, { chat_id: user.id, ...params })).body["description"]
      const remote = "https://x.test/a.jpg"
      const cases: ReadonlyArray<readonly [string, Body, string]> = [
        ["sendPhoto", {}, "Bad Request: there is no photo in the request"],
        ["sendDocument", { document: "" }, "Bad Request: there is no document in the request"],
        ["sendVideo", {}, "Bad Request: there is no video in the request"],
        ["sendAudio", {}, "Bad Request: there is no audio in the request"],
        ["sendVoice", {}, "Bad Request: there is no voice in the request"],
        ["sendAnimation", {}, "Bad Request: there is no animation in the request"],
        ["sendSticker", {}, "Bad Request: there is no sticker in the request"],
        ["sendVideoNote", {}, "Bad Request: there is no video note in the request"],
        ["sendDocument", { document: "attach://missing" }, "Bad Request: there is no document in the request"],
        ["sendPhoto", { photo: "no-such-file-id" }, "Bad Request: wrong file identifier/HTTP URL specified"],
        ["sendPhoto", { photo: remote, caption: "x".repeat(1025) }, "Bad Request: message caption is too long"],
        ["sendPhoto", { photo: remote, parse_mode: "BBCode" }, "Bad Request: unsupported parse_mode"],
        ["sendPhoto", { photo: remote, chat_id: "" }, "Bad Request: chat_id is empty"],
        ["sendPhoto", { photo: remote, chat_id: 12345 }, "Bad Request: chat not found"],
        ["sendPhoto", { photo: remote, reply_to_message_id: 99 }, "Bad Request: message to be replied not found"]
      ]
      for (const [method, params, description] of cases) {
        assert.strictEqual(await refusal(method, params), description, `${method} ${JSON.stringify(params)}`)
      }
      const photo = fake.userSends(bot.id, { user, photo: true }).photo![0]!.file_id
      assert.strictEqual(await refusal("sendDocument", { document: photo }), "Bad Request: type of file mismatch")
      const missingPart = await upload(fake, bot.token, "sendPhoto", {
        chat_id: String(user.id),
        image: { bytes: randomBytes(10), name: "a.jpg" }
      })
      assert.strictEqual(missingPart.body["description"], "Bad Request: there is no photo in the request")
      assert.deepStrictEqual(fake.sent(), [])
      assert.deepStrictEqual(fake.uploads(), [])
      const longest = await callApi(fake, bot.token, "sendPhoto", {
        chat_id: user.id,
        photo: remote,
        caption: "x".repeat(1024)
      })
      assert.strictEqual(longest.status, 200)

      fake.failNext("SENDPHOTO", { error_code: 429, description: "Too Many Requests: retry after 7", retry_after: 7 })
      fake.failAlways("sendDocument", { error_code: 403, description: "Forbidden: bot was blocked by the user" }, {
        botId: bot.id
      })
      const limited = await upload(fake, bot.token, "sendPhoto", {
        chat_id: String(user.id),
        photo: { bytes: randomBytes(100), name: "a.jpg" }
      })
      assert.deepStrictEqual(limited, {
        status: 429,
        body: {
          ok: false,
          error_code: 429,
          description: "Too Many Requests: retry after 7",
          parameters: { retry_after: 7 }
        }
      })
      const blocked = () => callApi(fake, bot.token, "sendDocument", { chat_id: user.id, document: photo })
      assert.deepStrictEqual([(await blocked()).status, (await blocked()).status], [403, 403])
      assert.strictEqual(fake.sent().length, 1)
      assert.deepStrictEqual(fake.uploads(), [])
      assert.deepStrictEqual(
        fake.calls.slice(-3).map((call) => [call.method, call.status]),
        [["sendPhoto", 429], ["sendDocument", 403], ["sendDocument", 403]]
      )
    }))

  it("sendMediaGroup sends an album of uploads sharing a media_group_id", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const group = fake.addGroup({ type: "supergroup" })
      const first = await callApi(fake, bot.token, "sendMessage", { chat_id: group.id, text: "album below" })
      const one = randomBytes(200_000)
      const two = randomBytes(300_000)
      const sent = await upload(fake, bot.token, "sendMediaGroup", {
        chat_id: String(group.id),
        reply_parameters: JSON.stringify({ message_id: 1 }),
        media: JSON.stringify([
          { type: "photo", media: "attach://one", caption: "first" },
          { type: "video", media: "attach://two", width: 1920, height: 1080, duration: 5 }
        ]),
        one: { bytes: one, name: "one.jpg", type: "image/jpeg" },
        two: { bytes: two, name: "two.mp4", type: "video/mp4" }
      })
      assert.strictEqual(sent.status, 200)
      const messages = sent.body["result"] as ReadonlyArray<BotApi.Message>
      assert.deepStrictEqual(messages.map((message) => message.message_id), [2, 3])
      assert.isString(messages[0]!.media_group_id)
      assert.strictEqual(messages[0]!.media_group_id, messages[1]!.media_group_id)
      assert.strictEqual(messages[0]!.caption, "first")
      assert.notProperty(messages[1], "caption")
      assert.include(messages[1]!.video, { width: 1920, height: 1080, duration: 5, file_name: "two.mp4" })
      assert.deepStrictEqual(
        messages.map((message) => message.reply_to_message?.message_id),
        [first.body["result"]["message_id"], first.body["result"]["message_id"]]
      )
      const photoId = messages[0]!.photo!.at(-1)!.file_id
      assert.isTrue(Buffer.from((await download(fake, bot.token, photoId)).bytes).equals(one))
      assert.isTrue(Buffer.from((await download(fake, bot.token, messages[1]!.video!.file_id)).bytes).equals(two))

      const records = fake.sent(bot.id).filter((record) => record.method === "sendMediaGroup")
      assert.deepStrictEqual(records.map((record) => record.message), messages)
      assert.deepStrictEqual(records.map((record) => [record.upload?.field, record.upload?.sha256]), [
        ["one", sha256(one)],
        ["two", sha256(two)]
      ])
      assert.deepStrictEqual(fake.uploads().map((file) => file.file_id), [photoId, messages[1]!.video!.file_id])

      const mixed = await callApi(fake, bot.token, "sendMediaGroup", {
        chat_id: group.id,
        media: [
          { type: "photo", media: photoId },
          { type: "photo", media: "https://example.com/b.png" }
        ]
      })
      assert.strictEqual(mixed.status, 200)
      assert.deepStrictEqual(mixed.body["result"][0]["photo"], messages[0]!.photo)
      assert.notStrictEqual(mixed.body["result"][0]["media_group_id"], messages[0]!.media_group_id)
    }))

  it("sendMediaGroup refuses the albums Telegram refuses", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const photo = { type: "photo", media: "https://example.com/a.jpg" }
      const refusal = async (media: unknown) => {
        const params = { chat_id: user.id, ...(media === undefined ? {} : { media }) }
        return (await callApi(fake, bot.token, "sendMediaGroup", params)).body
      }
      const unparsable = "Bad Request: can't parse InputMedia:"
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [undefined, "Bad Request: parameter \"media\" is required"],
        ["[not json", "Bad Request: can't parse media JSON object"],
        [{ type: "photo" }, "Bad Request: expected an Array of InputMedia"],
        [[], "Bad Request: there are no messages to send"],
        [Array.from({ length: 11 }, () => photo), "Bad Request: too many messages to send as an album"],
        [[photo, { ...photo, type: "animation" }], `${unparsable} type "animation" can't be used in sendMediaGroup`],
        [[photo, { ...photo, type: "sticker" }], `${unparsable} type "sticker" is unsupported`],
        [[photo, { type: "photo", media: "attach://nothing" }], `${unparsable} media not found`],
        [[photo, { ...photo, type: "document" }], "Bad Request: document can't be mixed with other media types"],
        [[{ ...photo, type: "audio" }, photo], "Bad Request: audio can't be mixed with other media types"],
        [[photo, { ...photo, caption: "x".repeat(1025) }], "Bad Request: message caption is too long"]
      ]
      for (const [media, description] of cases) {
        assert.deepStrictEqual(await refusal(media), { ok: false, error_code: 400, description }, JSON.stringify(media))
      }
      assert.deepStrictEqual(fake.sent(), [])
      fake.failNext("sendMediaGroup", {
        error_code: 429,
        description: "Too Many Requests: retry after 2",
        retry_after: 2
      })
      assert.strictEqual((await refusal([photo, photo])).error_code, 429)
      assert.strictEqual((await refusal([photo, photo])).ok, true)
      assert.strictEqual(fake.sent().length, 2)
    }))

  it("editMessageCaption and editMessageReplyMarkup edit the bot's own messages and refuse no-ops", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const keyboard = { inline_keyboard: [[{ text: "Like", callback_data: "like" }]] }
      const photo = (await upload(fake, bot.token, "sendPhoto", {
        chat_id: String(user.id),
        caption: "old",
        photo: { bytes: randomBytes(2_000), name: "p.jpg" }
      })).body["result"] as Body
      const text = (await callApi(fake, bot.token, "sendMessage", { chat_id: user.id, text: "plain" })).body["result"]
      const edit = (method: string, params: Body) => callApi(fake, bot.token, method, { chat_id: user.id, ...params })
      const notModified = "Bad Request: message is not modified: specified new message content and reply markup " +
        "are exactly the same as a current content and reply markup of the message"

      const newCaption = { message_id: photo["message_id"], caption: "new", reply_markup: keyboard }
      const captioned = await edit("editMessageCaption", newCaption)
      assert.deepStrictEqual(captioned.body["result"], {
        ...photo,
        caption: "new",
        reply_markup: keyboard,
        edit_date: 1_700_000_000
      })
      const same = await edit("editMessageCaption", newCaption)
      assert.deepStrictEqual(same.body, { ok: false, error_code: 400, description: notModified })
      const cleared = await edit("editMessageCaption", { message_id: photo["message_id"], reply_markup: keyboard })
      assert.notProperty(cleared.body["result"], "caption")
      assert.deepStrictEqual(cleared.body["result"]["photo"], photo["photo"])
      assert.strictEqual(
        (await edit("editMessageCaption", { message_id: text["message_id"], caption: "x" })).body["description"],
        "Bad Request: there is no caption in the message to edit"
      )
      assert.strictEqual(
        (await edit("editMessageCaption", { ...newCaption, caption: "x".repeat(1025) })).body["description"],
        "Bad Request: message caption is too long"
      )

      const marked = await edit("editMessageReplyMarkup", { message_id: text["message_id"], reply_markup: keyboard })
      assert.deepStrictEqual(marked.body["result"], { ...text, reply_markup: keyboard, edit_date: 1_700_000_000 })
      assert.deepStrictEqual(
        (await edit("editMessageReplyMarkup", { message_id: text["message_id"], reply_markup: keyboard })).body,
        { ok: false, error_code: 400, description: notModified }
      )
      const unmarked = await edit("editMessageReplyMarkup", { message_id: text["message_id"] })
      assert.notProperty(unmarked.body["result"], "reply_markup")
      assert.strictEqual(unmarked.body["result"]["text"], "plain")
      const theirs = fake.userSends(bot.id, { user, text: "mine" })
      for (const method of ["editMessageCaption", "editMessageReplyMarkup"]) {
        assert.strictEqual(
          (await edit(method, { message_id: 404, reply_markup: keyboard })).body["description"],
          "Bad Request: message to edit not found"
        )
        assert.strictEqual(
          (await edit(method, { message_id: theirs.message_id, reply_markup: keyboard })).body["description"],
          "Bad Request: message can't be edited"
        )
      }
      assert.deepStrictEqual(fake.sent().map((sent) => sent.method), ["sendPhoto", "sendMessage"])
      assert.includeMembers(fake.calls.map((call) => call.method), ["editMessageCaption", "editMessageReplyMarkup"])
    }, { now: () => 1_700_000_000 }))

  it("takes a 45 MB upload intact; getFile refuses files over 20 MB like Telegram", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const bytes = randomBytes(45 * 1024 * 1024)
      const boundary = "----------bigbigbigbigbigbigbigbigbigbigbi"
      const sent = await streamPost(
        `${fake.apiRoot}/bot${bot.token}/sendVideo`,
        `multipart/form-data; boundary=${boundary}`,
        grammyBody(boundary, { chat_id: String(user.id), video: "attach://big" }, [
          { id: "big", filename: "video.mp4", bytes }
        ])
      )
      assert.strictEqual(sent.status, 200)
      const video = sent.body["result"]["video"] as BotApi.Video
      assert.strictEqual(video.file_size, bytes.length)
      assert.isTrue(Buffer.from(fake.fileBytes(video.file_id)!).equals(bytes))
      assert.strictEqual(fake.uploads()[0]!.sha256, sha256(bytes))
      assert.deepStrictEqual((await callApi(fake, bot.token, "getFile", { file_id: video.file_id })).body, {
        ok: false,
        error_code: 400,
        description: "Bad Request: file is too big"
      })
    }), 30_000)
})

describe("FakeTelegram chat administration", () => {
  /** A supergroup with a creator, a member and the bot in it; `rights` make the bot an administrator. */
  const setup = (fake: FakeTelegram.FakeTelegram, rights?: Record<string, boolean>, type: "supergroup" | "group" | "channel" = "supergroup") => {
    const bot = fake.addBot({ username: "mod_bot" })
    const owner = fake.addUser({ first_name: "Owner" })
    const member = fake.addUser({ first_name: "Member" })
    const group = fake.addGroup({ type, title: "Room", creator: owner.id })
    fake.addMember(group.id, member.id)
    if (rights !== undefined) fake.setRights(group.id, bot.id, rights)
    const call = (method: string, params: Record<string, unknown> = {}) =>
      callApi(fake, bot.token, method, { chat_id: group.id, ...params })
    return { bot, owner, member, group, call }
  }
  const refusal = (description: string, error_code = 400) => ({ ok: false, error_code, description })

  it("getChat, getChatMemberCount, getChatAdministrators and getChatMember describe the group", () =>
    withFake(async (fake) => {
      const { bot, call, group, member, owner } = setup(fake, { can_restrict_members: true, can_pin_messages: true })
      const admin = fake.addUser({ first_name: "Admin" })
      fake.addMember(group.id, admin.id, { status: "administrator", rights: { can_delete_messages: true }, custom_title: "boss" })
      const chat = (await call("getChat")).body["result"]
      assert.strictEqual(chat.id, group.id)
      assert.strictEqual(chat.type, "supergroup")
      assert.strictEqual(chat.title, "Room")
      assert.isObject(chat.permissions)
      assert.deepStrictEqual((await call("getChatMemberCount")).body, { ok: true, result: 4 })
      assert.strictEqual(fake.memberCount(group.id), 4)
      const admins = (await call("getChatAdministrators")).body["result"] as Array<any>
      assert.deepStrictEqual(admins.map((a) => [a.user.id, a.status]), [
        [owner.id, "creator"],
        [bot.id, "administrator"],
        [admin.id, "administrator"]
      ])
      assert.strictEqual(admins[1].can_restrict_members, true)
      assert.strictEqual(admins[1].can_promote_members, false)
      assert.strictEqual(admins[1].can_pin_messages, true)
      assert.isUndefined(admins[1].can_post_messages)
      assert.strictEqual(admins[2].custom_title, "boss")
      assert.strictEqual(admins[2].can_be_edited, false)
      assert.deepStrictEqual((await call("getChatMember", { user_id: member.id })).body["result"], {
        status: "member",
        user: member
      })
      const user = fake.addUser()
      assert.strictEqual((await call("getChatMember", { user_id: user.id })).body["result"].status, "left")
      assert.deepStrictEqual(
        (await callApi(fake, bot.token, "getChatAdministrators", { chat_id: member.id })).body,
        refusal("Bad Request: there are no administrators in the private chat")
      )
    }))

  it("ban, unban and restrict need can_restrict_members and spare the owner and others' administrators", () =>
    withFake(async (fake) => {
      const { bot, call, group, member, owner } = setup(fake)
      const before = fake.chatMember(group.id, member.id, bot.id)
      assert.deepStrictEqual(
        (await call("banChatMember", { user_id: member.id })).body,
        refusal("Bad Request: not enough rights to restrict/unrestrict chat member")
      )
      assert.deepStrictEqual(fake.chatMember(group.id, member.id, bot.id), before)
      fake.setRights(group.id, bot.id, { can_restrict_members: true })
      assert.deepStrictEqual(
        (await call("banChatMember", { user_id: owner.id })).body,
        refusal("Bad Request: can't remove chat owner")
      )
      const admin = fake.addUser()
      fake.addMember(group.id, admin.id, { status: "administrator" })
      assert.deepStrictEqual(
        (await call("restrictChatMember", { user_id: admin.id, permissions: { can_send_messages: false } })).body,
        refusal("Bad Request: user is an administrator of the chat")
      )
      assert.deepStrictEqual(
        (await call("banChatMember", { user_id: member.id, until_date: 1_900_000_000 })).body,
        { ok: true, result: true }
      )
      assert.deepStrictEqual(fake.chatMember(group.id, member.id, bot.id), {
        status: "kicked",
        user: member,
        until_date: 1_900_000_000
      })
      assert.deepStrictEqual((await call("unbanChatMember", { user_id: member.id, only_if_banned: true })).body, {
        ok: true,
        result: true
      })
      assert.strictEqual(fake.chatMember(group.id, member.id, bot.id)["status"], "left")
      fake.addMember(group.id, member.id)
      assert.deepStrictEqual(
        (await call("restrictChatMember", {
          user_id: member.id,
          permissions: JSON.stringify({ can_send_messages: true }),
          until_date: 0
        })).body,
        { ok: true, result: true }
      )
      const restricted = fake.chatMember(group.id, member.id, bot.id)
      assert.strictEqual(restricted["status"], "restricted")
      assert.strictEqual(restricted["can_send_messages"], true)
      assert.strictEqual(restricted["can_send_photos"], false)
      assert.strictEqual(restricted["is_member"], true)
    }))

  it("methods of supergroups answer basic groups as Telegram does", () =>
    withFake(async (fake) => {
      const { call, member } = setup(fake, { can_restrict_members: true, can_promote_members: true }, "group")
      assert.deepStrictEqual(
        (await call("restrictChatMember", { user_id: member.id, permissions: {} })).body,
        refusal("Bad Request: method is available only for supergroups")
      )
      assert.deepStrictEqual(
        (await call("promoteChatMember", { user_id: member.id, can_pin_messages: true })).body,
        refusal("Bad Request: method is available for supergroup and channel chats only")
      )
      assert.deepStrictEqual(
        (await call("unbanChatMember", { user_id: member.id })).body,
        refusal("Bad Request: method is available for supergroup and channel chats only")
      )
    }))

  it("promote, demote and custom titles: the bot edits only the administrators it promoted", () =>
    withFake(async (fake) => {
      const { bot, call, group, member, owner } = setup(fake, { can_restrict_members: true })
      assert.deepStrictEqual(
        (await call("promoteChatMember", { user_id: member.id, can_pin_messages: true })).body,
        refusal("Bad Request: not enough rights")
      )
      fake.setRights(group.id, bot.id, { can_promote_members: true, can_pin_messages: true, can_delete_messages: true })
      assert.deepStrictEqual(
        (await call("promoteChatMember", { user_id: owner.id, can_pin_messages: true })).body,
        refusal("Bad Request: can't remove chat owner")
      )
      assert.deepStrictEqual(
        (await call("promoteChatMember", { user_id: member.id, can_change_info: true })).body,
        refusal("Bad Request: RIGHT_FORBIDDEN")
      )
      assert.deepStrictEqual(
        (await call("promoteChatMember", { user_id: member.id, can_pin_messages: true, can_delete_messages: "true" })).body,
        { ok: true, result: true }
      )
      const promoted = fake.chatMember(group.id, member.id, bot.id)
      assert.strictEqual(promoted["status"], "administrator")
      assert.strictEqual(promoted["can_be_edited"], true)
      assert.strictEqual(promoted["can_pin_messages"], true)
      assert.strictEqual(promoted["can_delete_messages"], true)
      assert.strictEqual(promoted["can_change_info"], false)
      assert.deepStrictEqual((await call("setChatAdministratorCustomTitle", { user_id: member.id, custom_title: "Mod" })).body, {
        ok: true,
        result: true
      })
      assert.strictEqual(fake.chatMember(group.id, member.id, bot.id)["custom_title"], "Mod")
      const other = fake.addUser()
      fake.addMember(group.id, other.id, { status: "administrator" })
      assert.deepStrictEqual(
        (await call("setChatAdministratorCustomTitle", { user_id: other.id, custom_title: "x" })).body,
        refusal("Bad Request: not enough rights to change custom title of the user")
      )
      assert.deepStrictEqual(
        (await call("promoteChatMember", { user_id: other.id })).body,
        refusal("Bad Request: CHAT_ADMIN_REQUIRED")
      )
      assert.deepStrictEqual(
        (await call("setChatAdministratorCustomTitle", { user_id: owner.id, custom_title: "x" })).body,
        refusal("Bad Request: only the owner can edit their custom title")
      )
      assert.deepStrictEqual((await call("promoteChatMember", { user_id: member.id })).body, { ok: true, result: true })
      assert.strictEqual(fake.chatMember(group.id, member.id, bot.id)["status"], "member")
      assert.deepStrictEqual(
        (await call("setChatAdministratorCustomTitle", { user_id: member.id, custom_title: "x" })).body,
        refusal("Bad Request: user is not an administrator")
      )
    }))

  it("pins and unpins with can_pin_messages; deletes others' messages with can_delete_messages", () =>
    withFake(async (fake) => {
      const { bot, call, group, member } = setup(fake)
      const own = (await call("sendMessage", { text: "rules" })).body["result"]
      const theirs = fake.userSends(bot.id, { chat: group.id, user: member, text: "hi" })
      assert.deepStrictEqual(
        (await call("pinChatMessage", { message_id: own.message_id })).body,
        refusal("Bad Request: not enough rights to manage pinned messages in the chat")
      )
      fake.setRights(group.id, bot.id, { can_pin_messages: true })
      assert.deepStrictEqual(
        (await call("pinChatMessage", { message_id: 9999 })).body,
        refusal("Bad Request: message to pin not found")
      )
      assert.deepStrictEqual((await call("pinChatMessage", { message_id: own.message_id, disable_notification: true })).body, {
        ok: true,
        result: true
      })
      assert.deepStrictEqual((await call("pinChatMessage", { message_id: theirs.message_id })).body, { ok: true, result: true })
      assert.deepStrictEqual(fake.pinnedMessages(bot.id, group.id), [own.message_id, theirs.message_id])
      assert.strictEqual((await call("getChat")).body["result"].pinned_message.message_id, theirs.message_id)
      assert.deepStrictEqual((await call("unpinChatMessage")).body, { ok: true, result: true })
      assert.deepStrictEqual(fake.pinnedMessages(bot.id, group.id), [own.message_id])
      assert.deepStrictEqual((await call("unpinChatMessage", { message_id: own.message_id })).body, { ok: true, result: true })
      assert.deepStrictEqual((await call("unpinChatMessage")).body, refusal("Bad Request: message to unpin not found"))

      assert.deepStrictEqual(
        (await call("deleteMessage", { message_id: theirs.message_id })).body,
        refusal("Bad Request: message can't be deleted")
      )
      assert.isTrue(fake.hasMessage(bot.id, group.id, theirs.message_id))
      fake.setRights(group.id, bot.id, { can_delete_messages: true })
      assert.deepStrictEqual((await call("deleteMessage", { message_id: theirs.message_id })).body, { ok: true, result: true })
      assert.isFalse(fake.hasMessage(bot.id, group.id, theirs.message_id))
      assert.deepStrictEqual(
        (await call("deleteMessage", { message_id: theirs.message_id })).body,
        refusal("Bad Request: message to delete not found")
      )
    }))

  it("leaveChat: the bot is no longer a member and Telegram says so", () =>
    withFake(async (fake) => {
      const { bot, call, group } = setup(fake, { can_pin_messages: true })
      assert.isTrue(fake.isMember(group.id, bot.id))
      assert.deepStrictEqual((await call("leaveChat")).body, { ok: true, result: true })
      assert.isFalse(fake.isMember(group.id, bot.id))
      assert.deepStrictEqual(
        (await call("sendMessage", { text: "still here?" })).body,
        refusal("Forbidden: bot is not a member of the supergroup chat", 403)
      )
      assert.deepStrictEqual(
        (await call("getChatAdministrators")).body,
        refusal("Forbidden: bot is not a member of the supergroup chat", 403)
      )
      fake.addToGroup(group.id, bot.id)
      assert.isTrue(fake.isMember(group.id, bot.id))
      assert.strictEqual(fake.chatMember(group.id, bot.id, bot.id)["status"], "member")
    }))

  it("userSends a document of a declared size: getFile refuses it over 20 MB without making its bytes", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      const user = fake.addUser()
      const big = fake.userSends(bot.id, { user, document: { file_name: "movie.mkv", file_size: 25 * 1024 * 1024 } })
      assert.strictEqual(big.document?.file_name, "movie.mkv")
      assert.strictEqual(big.document?.file_size, 25 * 1024 * 1024)
      assert.deepStrictEqual(
        (await callApi(fake, bot.token, "getFile", { file_id: big.document!.file_id })).body,
        refusal("Bad Request: file is too big")
      )
      const small = fake.userSends(bot.id, { user, document: { file_name: "notes.txt" }, caption: "notes" })
      assert.strictEqual(small.caption, "notes")
      const file = (await callApi(fake, bot.token, "getFile", { file_id: small.document!.file_id })).body["result"]
      assert.match(file.file_path, /^documents\/file_\d+\.txt$/)
      const part = await fetch(`${fake.apiRoot}/file/bot${bot.token}/${file.file_path}`, { headers: { range: "bytes=0-9" } })
      assert.strictEqual(part.status, 206)
      assert.strictEqual(part.headers.get("content-range"), "bytes 0-9/30000")
      assert.strictEqual((await part.arrayBuffer()).byteLength, 10)
    }))
})
