import { TelegramClient, TelegramError } from "@botrelay/telegram"
import { FetchHttpClient } from "@effect/platform"
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted } from "effect"
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
      assert.deepStrictEqual(fake.calls[2], {
        botId: bot.id,
        method: "sendMessage",
        params: { chat_id: String(user.id), text: "from query" },
        status: 200
      })
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

  it("keeps tokens out of the call log", () =>
    withFake(async (fake) => {
      const bot = fake.addBot()
      await get(`${fake.apiRoot}/bot${bot.token}/getMe`)
      await get(`${fake.apiRoot}/bot${bot.token.slice(0, -1)}x/getMe`)
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
        return error as TelegramError.TelegramApiError
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

  it.scopedLive("a closed fake surfaces as a Transport error", () =>
    Effect.gen(function*() {
      const fake = yield* Effect.promise(() => FakeTelegram.start())
      const bot = fake.addBot()
      yield* Effect.promise(() => fake.close())
      const client = yield* Effect.provide(TelegramClient.TelegramClient, clientLayer(fake))
      const error = yield* Effect.flip(client.getMe(Redacted.make(bot.token)))
      assert.instanceOf(error, TelegramError.TelegramTransportError)
      assert.strictEqual(error._tag === "TelegramTransportError" && error.reason, "Transport")
      assert.notInclude(error.message, bot.token)
      assert.notInclude(error.message, fake.apiRoot)
    }))
})
