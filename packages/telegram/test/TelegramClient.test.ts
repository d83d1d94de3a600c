import { HttpClient, HttpClientError, HttpClientResponse } from "@effect/platform"
import type { HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, FastCheck, Fiber, Layer, Redacted, Schema, TestClock, Tracer } from "effect"
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

const hookSecret = "hook_Secret-123"

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

  it.effect("a refused connection is an Unsent transport error (the call never left) naming the system code only", () =>
    Effect.gen(function*() {
      const error = yield* withClient(transportFailure, (client) => Effect.flip(client.getMe(token)))
      assert.instanceOf(error, TelegramError.TelegramTransportError)
      if (error._tag !== "TelegramTransportError") return
      assert.strictEqual(error.reason, "Unsent")
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
      assert.strictEqual(error.message, "Transport error calling getMe: the URL is not valid")
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
            (client: TelegramClient.Service) => client.call(token, "getChat", { chat_id: 1 }),
            (client: TelegramClient.Service) => client.getUpdates(token, { offset: 1, timeout: 1 }),
            (client: TelegramClient.Service) =>
              client.setWebhook(token, { url: "https://hook.example.test", secret_token: Redacted.make(hookSecret) })
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
            assert.notInclude(rendering, hookSecret, name)
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

  it.effect("getUpdates sends its params and returns each update's JSON text exactly as it came", () =>
    Effect.gen(function*() {
      const first = `{"update_id":100000001,"message":{"message_id":1,"text":"a ] } \\" [ {",` +
        `"chat":{"id":1,"type":"private"},"date":1}}`
      const second = `{"update_id": 100000002, "edited_message": {"x": 1.50, "y": "\\u00e9", ` +
        `"big": 12345678901234567890, "z": [true, false, null, -0.5e3]}}`
      const third = `{ "update_id" : 100000003 , "future_kind" : { "nested" : [ [ ] , { } , "\\\\" ] } }`
      const text = `{"ok":true,"description":"x [ { \\" ]",\n "result" : [ ${first}\n,${second},\t${third} ]\r\n}`
      const seen: Array<Seen> = []
      const updates = yield* Effect.gen(function*() {
        const client = yield* TelegramClient.TelegramClient
        return yield* client.getUpdates(token, {
          offset: 100000001,
          limit: 3,
          timeout: 0,
          allowed_updates: ["message", "edited_message"]
        })
      }).pipe(
        Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test" })),
        Effect.provide(stub(() => Effect.succeed(new Response(text, { status: 200 })), seen))
      )
      assert.deepStrictEqual(seen[0]!.body, {
        offset: 100000001,
        limit: 3,
        timeout: 0,
        allowed_updates: ["message", "edited_message"]
      })
      assert.strictEqual(seen[0]!.url, `https://api.example.test/bot${secret}/getUpdates`)
      assert.deepStrictEqual(updates, [
        { update_id: 100000001, payload: first },
        { update_id: 100000002, payload: second },
        { update_id: 100000003, payload: third }
      ])
      assert.include(updates[1]!.payload, "12345678901234567890")
      assert.deepStrictEqual(JSON.parse(updates[0]!.payload).message.text, "a ] } \" [ {")

      const none = yield* withClient(answerWith({ ok: true, result: [] }), (client) => client.getUpdates(token))
      assert.deepStrictEqual(none, [])
      const dup = yield* withClient(
        () => Effect.succeed(new Response(`{"result":[{"update_id":1}],"ok":true,"result":[{"update_id":2}]}`)),
        (client) => client.getUpdates(token)
      )
      assert.deepStrictEqual(dup, [{ update_id: 2, payload: `{"update_id":2}` }])
    }))

  it.effect("getUpdates cuts out any updates exactly, whatever their strings, escapes and spacing", () =>
    Effect.promise(() =>
      FastCheck.assert(
        FastCheck.asyncProperty(
          FastCheck.array(FastCheck.dictionary(FastCheck.string({ unit: "binary" }), FastCheck.jsonValue()), {
            maxLength: 8
          }),
          FastCheck.constantFrom(undefined, 0, 1, 2, "\t", "\r\n "),
          FastCheck.constantFrom(",", " , ", "\n,\t", ",\r\n"),
          (fields, indent, separator) => {
            const payloads = fields.map((extra, i) => JSON.stringify({ ...extra, update_id: i + 1 }, null, indent))
            const text = `{"ok":true,"result":[ ${payloads.join(separator)} ]}`
            return Effect.runPromise(
              withClient(
                () => Effect.succeed(new Response(text, { status: 200 })),
                (client) => client.getUpdates(token)
              )
            ).then((updates) => {
              assert.deepStrictEqual(updates, payloads.map((payload, i) => ({ update_id: i + 1, payload })))
            })
          }
        ),
        { numRuns: 100 }
      )
    ))

  it.effect("getUpdates takes a result exactly when it is a list of objects with an integer update_id", () =>
    Effect.promise(() => {
      const accepted = Schema.is(Schema.Array(Schema.Struct({ update_id: Schema.Int })))
      const updateId = FastCheck.oneof(
        FastCheck.integer(),
        FastCheck.constantFrom(2 ** 53, -(2 ** 53), 1.5, -0, 1e300, "1", null, true),
        FastCheck.jsonValue()
      )
      const update = FastCheck.oneof(
        FastCheck.record({ update_id: updateId }, { requiredKeys: [] }),
        FastCheck.jsonValue()
      )
      const result = FastCheck.oneof(FastCheck.array(update, { maxLength: 4 }), FastCheck.jsonValue())
      return FastCheck.assert(
        FastCheck.asyncProperty(result, (result) =>
          Effect.runPromise(
            withClient(answerWith({ ok: true, result }), (client) => Effect.either(client.getUpdates(token)))
          ).then((got) => {
            const parsed: unknown = JSON.parse(JSON.stringify(result))
            assert.strictEqual(got._tag === "Right", accepted(parsed), JSON.stringify(result))
            if (got._tag === "Left") assert.strictEqual(got.left._tag === "TelegramTransportError" && got.left.reason, "Decode")
          })),
        { numRuns: 300 }
      )
    }))

  it.effect("getUpdates fails to decode a batch with an update lacking update_id", () =>
    Effect.gen(function*() {
      const error = yield* withClient(
        answerWith({ ok: true, result: [{ update_id: 1 }, { message: {} }] }),
        (client) => Effect.flip(client.getUpdates(token))
      )
      assert.strictEqual(error._tag === "TelegramTransportError" && error.reason, "Decode")
      assert.strictEqual(error.method, "getUpdates")
      const notArray = yield* withClient(
        answerWith({ ok: true, result: { update_id: 1 } }),
        (client) => Effect.flip(client.getUpdates(token))
      )
      assert.strictEqual(notArray._tag === "TelegramTransportError" && notArray.reason, "Decode")
    }))

  it.effect("a long poll of T seconds may take T + 15 s, or the client's timeout when longer", () =>
    Effect.gen(function*() {
      const hang: Answer = () => Effect.never
      const long = yield* withClient(hang, (client) => Effect.flip(client.getUpdates(token, { timeout: 50 })), {
        timeout: "2 seconds"
      }).pipe(Effect.fork)
      yield* TestClock.adjust("64 seconds")
      assert.isNull(long.unsafePoll())
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(long)
      assert.strictEqual(error._tag === "TelegramTransportError" && error.reason, "Timeout")
      assert.strictEqual(error.method, "getUpdates")

      const short = yield* withClient(hang, (client) => Effect.flip(client.getUpdates(token, { timeout: 0 })), {
        timeout: "2 seconds"
      }).pipe(Effect.fork)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual((yield* Fiber.join(short))._tag, "TelegramTransportError")

      const configured = yield* withClient(hang, (client) => Effect.flip(client.getUpdates(token, { timeout: 5 })), {
        timeout: "100 seconds"
      }).pipe(Effect.fork)
      yield* TestClock.adjust("99 seconds")
      assert.isNull(configured.unsafePoll())
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* Fiber.join(configured))._tag, "TelegramTransportError")
    }))

  it.effect("setWebhook sends the secret in clear on the wire only; deleteWebhook and getWebhookInfo", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const answers = [
        { ok: true, result: true, description: "Webhook was set" },
        { ok: true, result: true },
        {
          ok: true,
          result: {
            url: "https://hook.example.test/x",
            has_custom_certificate: false,
            pending_update_count: 3,
            last_error_date: 1_700_000_000,
            last_error_message: "Wrong response from the webhook: 500 Internal Server Error",
            max_connections: 40,
            allowed_updates: ["message"],
            future: 1
          }
        }
      ]
      const results = yield* Effect.gen(function*() {
        const client = yield* TelegramClient.TelegramClient
        const set = yield* client.setWebhook(token, {
          url: "https://hook.example.test/x",
          secret_token: Redacted.make(hookSecret),
          drop_pending_updates: true,
          max_connections: 40,
          allowed_updates: ["message"]
        })
        const deleted = yield* client.deleteWebhook(token)
        const info = yield* client.getWebhookInfo(token)
        return { set, deleted, info }
      }).pipe(
        Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test" })),
        Effect.provide(stub(() => Effect.succeed(json(answers.shift())), seen))
      )
      assert.deepStrictEqual(seen.map((s) => [s.url.split("/").at(-1), s.body]), [
        ["setWebhook", {
          url: "https://hook.example.test/x",
          secret_token: hookSecret,
          drop_pending_updates: true,
          max_connections: 40,
          allowed_updates: ["message"]
        }],
        ["deleteWebhook", {}],
        ["getWebhookInfo", {}]
      ])
      assert.isTrue(results.set)
      assert.isTrue(results.deleted)
      assert.strictEqual(results.info.pending_update_count, 3)
      assert.strictEqual(results.info.last_error_message, "Wrong response from the webhook: 500 Internal Server Error")
      assert.deepStrictEqual(results.info.allowed_updates, ["message"])
      const notTrue = yield* withClient(answerWith({ ok: true, result: false }), (client) =>
        Effect.flip(client.deleteWebhook(token, { drop_pending_updates: true })))
      assert.strictEqual(notTrue._tag === "TelegramTransportError" && notTrue.reason, "Decode")
    }))

  it.effect("copyMessage returns the new MessageId; forwardMessage the new Message", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const copied = yield* Effect.gen(function*() {
        const client = yield* TelegramClient.TelegramClient
        return yield* client.copyMessage(token, { chat_id: -100, from_chat_id: 42, message_id: 7, caption: "c" })
      }).pipe(
        Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test" })),
        Effect.provide(stub(answerWith({ ok: true, result: { message_id: 99 } }), seen))
      )
      assert.deepStrictEqual(copied, { message_id: 99 })
      assert.strictEqual(seen[0]!.url, `https://api.example.test/bot${secret}/copyMessage`)
      assert.deepStrictEqual(seen[0]!.body, { chat_id: -100, from_chat_id: 42, message_id: 7, caption: "c" })

      const forwarded = yield* withClient(
        answerWith({
          ok: true,
          result: {
            ...message,
            forward_origin: { type: "user", date: 1, sender_user: { id: 5, is_bot: false, first_name: "Ann" } }
          }
        }),
        (client) => client.forwardMessage(token, { chat_id: -100, from_chat_id: 42, message_id: 7 })
      )
      assert.strictEqual(forwarded.forward_origin?.sender_user?.id, 5)
      const badCopy = yield* withClient(answerWith({ ok: true, result: { id: 1 } }), (client) =>
        Effect.flip(client.copyMessage(token, { chat_id: 1, from_chat_id: 2, message_id: 3 })))
      assert.strictEqual(badCopy._tag === "TelegramTransportError" && badCopy.reason, "Decode")
    }))

  it.effect("getFile decodes File; editMessageText gives a Message or true; delete and answer give true", () =>
    Effect.gen(function*() {
      const seen: Array<Seen> = []
      const file = yield* Effect.gen(function*() {
        const client = yield* TelegramClient.TelegramClient
        return yield* client.getFile(token, { file_id: "AgACAgI" })
      }).pipe(
        Effect.provide(TelegramClient.layer({ apiRoot: "https://api.example.test" })),
        Effect.provide(stub(
          answerWith({
            ok: true,
            result: { file_id: "AgACAgI", file_unique_id: "AQADx", file_size: 2048, file_path: "photos/file_1.jpg" }
          }),
          seen
        ))
      )
      assert.deepStrictEqual(file, {
        file_id: "AgACAgI",
        file_unique_id: "AQADx",
        file_size: 2048,
        file_path: "photos/file_1.jpg"
      })
      assert.deepStrictEqual(seen[0]!.body, { file_id: "AgACAgI" })

      const edited = yield* withClient(
        answerWith({ ok: true, result: { ...message, text: "new", edit_date: 1_700_000_100 } }),
        (client) => client.editMessageText(token, { chat_id: 42, message_id: 7, text: "new" })
      )
      assert.isTrue(edited !== true && edited.edit_date === 1_700_000_100)
      const inline = yield* withClient(
        answerWith({ ok: true, result: true }),
        (client) => client.editMessageText(token, { inline_message_id: "abc", text: "new" })
      )
      assert.isTrue(inline)
      const deleted = yield* withClient(
        answerWith({ ok: true, result: true }),
        (client) => client.deleteMessage(token, { chat_id: 42, message_id: 7 })
      )
      assert.isTrue(deleted)
      const answered = yield* withClient(
        answerWith({ ok: true, result: true }),
        (client) => client.answerCallbackQuery(token, { callback_query_id: "1", text: "done" })
      )
      assert.isTrue(answered)
      const gone = yield* withClient(
        answerWith({ ok: false, error_code: 400, description: "Bad Request: message to delete not found" }, 400),
        (client) => Effect.flip(client.deleteMessage(token, { chat_id: 42, message_id: 7 }))
      )
      assert.strictEqual(
        gone._tag === "TelegramApiError" && gone.description,
        "Bad Request: message to delete not found"
      )
    }))

  it.effect("every method but getUpdates has its own span (a long poll's would say nothing)", () =>
    Effect.gen(function*() {
      const native = yield* Effect.tracer
      const names: Array<string> = []
      const tracer = Tracer.make({
        span: (...args) => {
          names.push(args[0])
          return native.span(...args)
        },
        context: (f) => f()
      })
      const runs: ReadonlyArray<(client: TelegramClient.Service) => Effect.Effect<unknown, unknown>> = [
        (client) => client.getUpdates(token),
        (client) => client.setWebhook(token, { url: "https://x.test" }),
        (client) => client.deleteWebhook(token),
        (client) => client.getWebhookInfo(token),
        (client) => client.forwardMessage(token, { chat_id: 1, from_chat_id: 2, message_id: 3 }),
        (client) => client.copyMessage(token, { chat_id: 1, from_chat_id: 2, message_id: 3 }),
        (client) => client.editMessageText(token, { chat_id: 1, message_id: 3, text: "x" }),
        (client) => client.deleteMessage(token, { chat_id: 1, message_id: 3 }),
        (client) => client.answerCallbackQuery(token, { callback_query_id: "1" }),
        (client) => client.getFile(token, { file_id: "f" })
      ]
      for (const run of runs) {
        yield* withClient(answerWith({ ok: false, error_code: 400, description: "Bad Request: x" }, 400), (client) =>
          Effect.either(run(client))).pipe(Effect.withTracer(tracer))
      }
      assert.deepStrictEqual(names, [
        "TelegramClient.setWebhook",
        "TelegramClient.deleteWebhook",
        "TelegramClient.getWebhookInfo",
        "TelegramClient.forwardMessage",
        "TelegramClient.copyMessage",
        "TelegramClient.editMessageText",
        "TelegramClient.deleteMessage",
        "TelegramClient.answerCallbackQuery",
        "TelegramClient.getFile"
      ])
    }))
})
