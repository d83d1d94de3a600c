import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Redacted } from "effect"
import { HttpExchange, TelegramClient, TelegramError } from "../src/index.js"

const token = Redacted.make("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1")

type Scripted = HttpExchange.HttpExchangeError | { readonly status: number; readonly body: string }

const encoder = new TextEncoder()

/**
 * An HTTP client answering each call from a script, one entry a call and asynchronously, then holding every later
 * call; it records the bodies sent, and which calls went through `send` and which through `exchange`, and counts
 * the calls cancelled while held.
 */
const scripted = (script: ReadonlyArray<Scripted>, withSend: boolean) => {
  const sent: Array<{ readonly via: "send" | "exchange"; readonly body: unknown }> = []
  let cancelled = 0
  let next = 0
  const answerOf = (entry: Scripted) =>
    entry instanceof HttpExchange.HttpExchangeError
      ? entry
      : { status: entry.status, headers: { "content-type": "application/json" }, body: encoder.encode(entry.body) }
  const record = (via: "send" | "exchange", request: HttpExchange.Request) =>
    sent.push({ via, body: JSON.parse(request.body as string) })
  const send = (request: HttpExchange.Request, callback: HttpExchange.Callback) => {
    record("send", request)
    const entry = script[next++]
    if (entry === undefined) return () => void cancelled++
    let live = true
    setImmediate(() => {
      if (!live) return
      const answer = answerOf(entry)
      if (answer instanceof HttpExchange.HttpExchangeError) callback(answer, undefined)
      else callback(undefined, answer)
    })
    return () => void (live = false)
  }
  const http: HttpExchange.Service = {
    exchange: (request) =>
      Effect.suspend(() => {
        record("exchange", request)
        const entry = script[next++]
        if (entry === undefined) return Effect.never
        const answer = answerOf(entry)
        return answer instanceof HttpExchange.HttpExchangeError ? Effect.fail(answer) : Effect.succeed(answer)
      }),
    ...(withSend ? { send } : {})
  }
  return {
    sent,
    cancelled: () => cancelled,
    client: TelegramClient.makeWith({ apiRoot: "https://api.example.test" }, http)
  }
}

const empty = { status: 200, body: `{"ok":true,"result":[]}` }
const spacedEmpty = { status: 200, body: `{ "result": [ ], "ok": true }` }
const batch = { status: 200, body: `{"ok":true,"result":[{"update_id":5,"message":{"text":"a\\u00e9","n":1.50}}]}` }
const params = { offset: 5, limit: 100, timeout: 50 }

describe("TelegramClient.pollUpdates", () => {
  for (const withSend of [true, false]) {
    const via = withSend ? "send" : "exchange"
    describe(withSend ? "on a client that calls back" : "on a client of fibers only", () => {
      it.effect("polls again after each empty answer and returns the first batch as it came", () =>
        Effect.gen(function*() {
          const http = scripted([empty, spacedEmpty, empty, batch], withSend)
          let emptied = 0
          const updates = yield* http.client.pollUpdates(token, params, () => void emptied++)
          assert.deepStrictEqual(updates, [{ update_id: 5, payload: `{"update_id":5,"message":{"text":"a\\u00e9","n":1.50}}` }])
          assert.strictEqual(emptied, 3)
          assert.deepStrictEqual(http.sent, Array.from({ length: 4 }, () => ({ via, body: params })))
        }))

      it.effect("ends with Telegram's error or the transport's, as getUpdates does", () =>
        Effect.gen(function*() {
          const conflict = scripted([
            empty,
            { status: 409, body: `{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates"}` }
          ], withSend)
          let emptied = 0
          const refused = yield* Effect.flip(conflict.client.pollUpdates(token, params, () => void emptied++))
          assert.instanceOf(refused, TelegramError.TelegramApiError)
          assert.strictEqual(refused.error_code, 409)
          assert.strictEqual(emptied, 1)

          const broken = scripted([empty, HttpExchange.answerFailed(200, new Error("socket hang up"))], withSend)
          const failed = yield* Effect.flip(broken.client.pollUpdates(token, params, () => {}))
          assert.instanceOf(failed, TelegramError.TelegramTransportError)
          assert.strictEqual(failed.reason, "Transport")

          const notJson = scripted([{ status: 502, body: "<html>bad gateway</html>" }], withSend)
          const decoded = yield* Effect.flip(notJson.client.pollUpdates(token, params, () => {}))
          assert.strictEqual((decoded as TelegramError.TelegramTransportError).reason, "Decode")
        }))

      it.effect("an interrupted poll cancels the call it waits on and sends no other", () =>
        Effect.gen(function*() {
          const http = scripted([empty, empty], withSend)
          let emptied = 0
          const fiber = yield* Effect.fork(http.client.pollUpdates(token, params, () => void emptied++))
          while (http.sent.length < 3) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
          const exit = yield* Fiber.interrupt(fiber)
          assert.isTrue(Exit.isInterrupted(exit))
          yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
          assert.strictEqual(http.sent.length, 3)
          assert.strictEqual(emptied, 2)
          if (withSend) assert.strictEqual(http.cancelled(), 1)
        }))
    })
  }
})
