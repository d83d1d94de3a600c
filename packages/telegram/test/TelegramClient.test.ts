import { HttpClient, HttpClientError, HttpClientResponse } from "@effect/platform"
import type { HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, Layer, Redacted, TestClock, Tracer } from "effect"
import { TelegramClient, TelegramError } from "../src/index.js"

const secret = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1"
const token = Redacted.make(secret)

interface Seen {
  readonly url: string
  readonly method: string
  readonly contentType: string | undefined
  readonly body: unknown
}

type Answer = (
  request: HttpClientRequest.HttpClientRequest,
  url: URL
) => Effect.Effect<Response, HttpClientError.HttpClientError>

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

const stub = (answer: Answer, seen: Array<Seen> = []) =>
  Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request, url) => {
      const body = request.body._tag === "Uint8Array" ? JSON.parse(new TextDecoder().decode(request.body.body)) : null
      seen.push({ url: url.toString(), method: request.method, contentType: request.headers["content-type"], body })
      return Effect.map(answer(request, url), (response) => HttpClientResponse.fromWeb(request, response))
    })
  )

const withClient = <A, E>(
  answer: Answer,
  f: (client: TelegramClient.Service) => Effect.Effect<A, E>,
  options: Partial<TelegramClient.Options> = {}
) =>
  Effect.gen(function*() {
    const client = yield* TelegramClient.TelegramClient
    return yield* f(client)
  }).pipe(
    Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test", ...options })),
    Effect.provide(stub(answer))
  )

const answerWith = (body: unknown, status = 200): Answer => () => Effect.succeed(json(body, status))

const bot = {
  id: 123456789,
  is_bot: true,
  first_name: "Relay",
  username: "relay_bot",
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  some_future_field: { nested: 1 }
}

const message = {
  message_id: 7,
  from: bot,
  chat: { id: 42, type: "private", first_name: "Ann", future_chat_field: true },
  date: 1_700_000_000,
  text: "hi",
  reply_to_message: {
    message_id: 6,
    chat: { id: 42, type: "private", first_name: "Ann" },
    date: 1_699_999_999,
    text: "hello",
    photo: [{ file_id: "f", file_unique_id: "u", width: 1, height: 1 }]
  },
  quote: { text: "unknown to our schema", position: 0 }
}

const transportFailure: Answer = (request, url) =>
  Effect.fail(
    new HttpClientError.RequestError({
      request,
      reason: "Transport",
      cause: new TypeError("fetch failed", {
        cause: Object.assign(new Error(`connect ECONNREFUSED ${url.toString()}`), { code: "ECONNREFUSED" })
      })
    })
  )

const errorScenarios: ReadonlyArray<readonly [string, Answer]> = [
  ["400", answerWith({ ok: false, error_code: 400, description: "Bad Request: chat not found" }, 400)],
  [
    "429",
    answerWith(
      {
        ok: false,
        error_code: 429,
        description: "Too Many Requests: retry after 5",
        parameters: { retry_after: 5 }
      },
      429
    )
  ],
  ["401", answerWith({ ok: false, error_code: 401, description: "Unauthorized" }, 401)],
  ["html", () => Effect.succeed(new Response(`<html>502 at /bot${secret}/getMe</html>`, { status: 502 }))],
  ["not an envelope", answerWith({ hello: secret })],
  ["bad result", answerWith({ ok: true, result: { id: "x" } })],
  ["transport", transportFailure],
  [
    "response body",
    (request) =>
      Effect.fail(
        new HttpClientError.ResponseError({
          request,
          response: HttpClientResponse.fromWeb(request, new Response("", { status: 200 })),
          reason: "Decode",
          cause: new Error(`socket hang up ${request.url}`)
        })
      )
  ]
]

const leaks = (value: string) => value.includes(secret) || value.includes("AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1")

describe("TelegramClient", () => {
  it.effect("getMe posts JSON to apiRoot/bot<token>/getMe and decodes the bot, keeping unknown fields", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const me = yield* Effect.gen(function*() {
        const client = yield* TelegramClient.TelegramClient
        return yield* client.getMe(token)
      }).pipe(
        Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test///" })),
        Effect.provide(stub(answerWith({ ok: true, result: bot }), seen))
      )
      assert.strictEqual(me.id, 123456789)
      assert.strictEqual(me.username, "relay_bot")
      assert.deepStrictEqual((me as unknown as Record<string, unknown>)["some_future_field"], { nested: 1 })
      assert.strictEqual(seen.length, 1)
      assert.strictEqual(seen[0]!.url, `https://api.example.test/bot${secret}/getMe`)
      assert.strictEqual(seen[0]!.method, "POST")
      assert.strictEqual(seen[0]!.contentType, "application/json")
      assert.deepStrictEqual(seen[0]!.body, {})
    }))

  it.effect("sendMessage sends the params and decodes a nested Message", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const sent = yield* Effect.gen(function*() {
        const client = yield* TelegramClient.TelegramClient
        return yield* client.sendMessage(token, {
          chat_id: 42,
          text: "hi",
          reply_parameters: { message_id: 6 },
          disable_notification: true
        })
      }).pipe(
        Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test" })),
        Effect.provide(stub(answerWith({ ok: true, result: message }), seen))
      )
      assert.deepStrictEqual(seen[0]!.body, {
        chat_id: 42,
        text: "hi",
        reply_parameters: { message_id: 6 },
        disable_notification: true
      })
      assert.strictEqual(sent.message_id, 7)
      assert.strictEqual(sent.chat.type, "private")
      assert.strictEqual(sent.reply_to_message?.message_id, 6)
      assert.strictEqual(sent.reply_to_message?.photo?.[0]?.file_unique_id, "u")
      assert.deepStrictEqual((sent as unknown as Record<string, unknown>)["quote"], message.quote)
      assert.strictEqual((sent.chat as Record<string, unknown>)["future_chat_field"], true)
    }))

  it.effect("call returns the raw result and encodes the method name", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const result = yield* Effect.gen(function*() {
        const client = yield* TelegramClient.TelegramClient
        return yield* client.call(token, "getChat", { chat_id: -100 })
      }).pipe(
        Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test/" })),
        Effect.provide(stub(answerWith({ ok: true, result: { id: -100, type: "supergroup" } }), seen))
      )
      assert.deepStrictEqual(result, { id: -100, type: "supergroup" })
      assert.strictEqual(seen[0]!.url, `https://api.example.test/bot${secret}/getChat`)
      assert.deepStrictEqual(seen[0]!.body, { chat_id: -100 })
      const raw = yield* withClient(answerWith({ ok: true, result: true }), (client) => client.call(token, "close"))
      assert.strictEqual(raw, true)
    }))

  it.effect("maps ok:false with 400 to TelegramApiError", () =>
    Effect.gen(function*() {
      const error = yield* withClient(
        answerWith({ ok: false, error_code: 400, description: "Bad Request: chat not found" }, 400),
        (client) => Effect.flip(client.sendMessage(token, { chat_id: 1, text: "x" }))
      )
      assert.instanceOf(error, TelegramError.TelegramApiError)
      assert.strictEqual(error._tag, "TelegramApiError")
      if (error._tag !== "TelegramApiError") return
      assert.strictEqual(error.method, "sendMessage")
      assert.strictEqual(error.error_code, 400)
      assert.strictEqual(error.description, "Bad Request: chat not found")
      assert.isUndefined(error.retry_after)
      assert.strictEqual(error.message, "Telegram rejected sendMessage: 400 Bad Request: chat not found")
    }))

  it.effect("maps 429 with parameters.retry_after", () =>
    Effect.gen(function*() {
      const error = yield* withClient(
        answerWith(
          {
            ok: false,
            error_code: 429,
            description: "Too Many Requests: retry after 17",
            parameters: { retry_after: 17 }
          },
          429
        ),
        (client) => Effect.flip(client.sendMessage(token, { chat_id: 1, text: "x" }))
      )
      assert.strictEqual(error._tag, "TelegramApiError")
      if (error._tag !== "TelegramApiError") return
      assert.strictEqual(error.error_code, 429)
      assert.strictEqual(error.retry_after, 17)
    }))

  it.effect("maps migrate_to_chat_id and an ok:false body sent with HTTP 200", () =>
    Effect.gen(function*() {
      const error = yield* withClient(
        answerWith({
          ok: false,
          error_code: 400,
          description: "Bad Request: group chat was upgraded to a supergroup chat",
          parameters: { migrate_to_chat_id: -1001234567890 }
        }),
        (client) => Effect.flip(client.sendMessage(token, { chat_id: -1234, text: "x" }))
      )
      assert.strictEqual(error._tag, "TelegramApiError")
      if (error._tag !== "TelegramApiError") return
      assert.strictEqual(error.migrate_to_chat_id, -1001234567890)
    }))

  it.effect("maps 401 Unauthorized", () =>
    Effect.gen(function*() {
      const error = yield* withClient(
        answerWith({ ok: false, error_code: 401, description: "Unauthorized" }, 401),
        (client) => Effect.flip(client.getMe(token))
      )
      assert.strictEqual(error._tag, "TelegramApiError")
      if (error._tag !== "TelegramApiError") return
      assert.strictEqual(error.error_code, 401)
      assert.strictEqual(error.method, "getMe")
      assert.strictEqual(error.description, "Unauthorized")
    }))

  it.effect("a body that is not JSON is a Decode error", () =>
    Effect.gen(function*() {
      const error = yield* withClient(
        () => Effect.succeed(new Response("<html>Bad Gateway</html>", { status: 502 })),
        (client) => Effect.flip(client.getMe(token))
      )
      assert.instanceOf(error, TelegramError.TelegramTransportError)
      if (error._tag !== "TelegramTransportError") return
      assert.strictEqual(error.reason, "Decode")
      assert.strictEqual(error.method, "getMe")
      assert.include(error.description, "502")
    }))

  it.effect("JSON that is not an envelope, or a result of the wrong shape, is a Decode error", () =>
    Effect.gen(function*() {
      const notEnvelope = yield* withClient(answerWith([1, 2]), (client) => Effect.flip(client.getMe(token)))
      assert.strictEqual(notEnvelope._tag === "TelegramTransportError" && notEnvelope.reason, "Decode")
      const noResult = yield* withClient(answerWith({ ok: true }), (client) => Effect.flip(client.getMe(token)))
      assert.strictEqual(noResult._tag === "TelegramTransportError" && noResult.reason, "Decode")
      const badResult = yield* withClient(
        answerWith({ ok: true, result: { id: "not a number" } }),
        (client) => Effect.flip(client.getMe(token))
      )
      assert.strictEqual(badResult._tag === "TelegramTransportError" && badResult.reason, "Decode")
    }))

  it.effect("a connection failure is a Transport error naming the system code only", () =>
    Effect.gen(function*() {
      const error = yield* withClient(transportFailure, (client) => Effect.flip(client.getMe(token)))
      assert.instanceOf(error, TelegramError.TelegramTransportError)
      if (error._tag !== "TelegramTransportError") return
      assert.strictEqual(error.reason, "Transport")
      assert.strictEqual(error.description, "the request failed (ECONNREFUSED)")
    }))

  it.effect("an apiRoot that is not a URL is a Transport error that does not echo it", () =>
    Effect.gen(function*() {
      const error = yield* withClient(
        answerWith({ ok: true, result: bot }),
        (client) => Effect.flip(client.getMe(token)),
        { apiRoot: "not a url" }
      )
      assert.strictEqual(error._tag === "TelegramTransportError" && error.reason, "Transport")
      assert.strictEqual(error.message, "Transport error calling getMe: the apiRoot does not form a valid URL")
    }))

  it.effect("no answer in time is a Timeout error; call can override the timeout", () =>
    Effect.gen(function*() {
      const hang: Answer = () => Effect.never
      const fiber = yield* withClient(hang, (client) => Effect.flip(client.getMe(token)), {
        timeout: "2 seconds"
      }).pipe(Effect.fork)
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag === "TelegramTransportError" && error.reason, "Timeout")

      const long = yield* withClient(
        hang,
        (client) => Effect.flip(client.call(token, "getUpdates", { timeout: 50 }, { timeout: "60 seconds" })),
        { timeout: "2 seconds" }
      ).pipe(Effect.fork)
      yield* TestClock.adjust("59 seconds")
      assert.isNull(long.unsafePoll())
      yield* TestClock.adjust("1 second")
      const longError = yield* Fiber.join(long)
      assert.strictEqual(longError._tag === "TelegramTransportError" && longError.reason, "Timeout")
      assert.strictEqual(longError.method, "getUpdates")
    }))

  it.effect("the token appears in no error, message, JSON, cause rendering or stack", () =>
    Effect.gen(function*() {
      for (const [name, answer] of errorScenarios) {
        for (
          const run of [
            (client: TelegramClient.Service) => client.getMe(token),
            (client: TelegramClient.Service) => client.sendMessage(token, { chat_id: 1, text: "x" }),
            (client: TelegramClient.Service) => client.call(token, "getChat", { chat_id: 1 })
          ]
        ) {
          const result = yield* withClient(answer, (client) => Effect.either(run(client)))
          if (result._tag === "Right") continue
          const error = result.left
          const renderings = [
            error.message,
            String(error),
            JSON.stringify(error),
            error.stack ?? "",
            Cause.pretty(Cause.fail(error)),
            error.description
          ]
          for (const rendering of renderings) {
            assert.isFalse(leaks(rendering), `${name}: ${rendering}`)
            assert.notInclude(rendering, "api.example.test", name)
          }
        }
      }
    }))

  it.effect("spans are named after the call, carry only the method, and never the token", () =>
    Effect.gen(function*() {
      const native = yield* Effect.tracer
      const spans: Array<Tracer.Span> = []
      const tracer = Tracer.make({
        span: (...args) => {
          const span = native.span(...args)
          spans.push(span)
          return span
        },
        context: (f) => f()
      })
      for (const [, answer] of [["ok", answerWith({ ok: true, result: bot })] as const, ...errorScenarios]) {
        yield* withClient(answer, (client) => Effect.either(client.getMe(token))).pipe(Effect.withTracer(tracer))
      }
      yield* withClient(answerWith({ ok: true, result: message }), (client) =>
        Effect.either(client.sendMessage(token, { chat_id: 1, text: "x" }))).pipe(Effect.withTracer(tracer))
      yield* withClient(answerWith({ ok: true, result: true }), (client) =>
        Effect.either(client.call(token, "deleteWebhook"))).pipe(Effect.withTracer(tracer))

      assert.deepStrictEqual(
        [...new Set(spans.map((span) => span.name))].sort(),
        ["TelegramClient.call", "TelegramClient.getMe", "TelegramClient.sendMessage"]
      )
      for (const span of spans) {
        assert.deepStrictEqual([...span.attributes.keys()], ["telegram.method"])
        assert.isFalse(leaks(JSON.stringify([...span.attributes.values()])))
        if (span.status._tag === "Ended" && Exit.isFailure(span.status.exit)) {
          assert.isFalse(leaks(Cause.pretty(span.status.exit.cause)))
        }
      }
      assert.strictEqual(spans.find((span) => span.name === "TelegramClient.call")?.attributes.get("telegram.method"),
        "deleteWebhook")
    }))
})
