import { request as httpRequest } from "node:http"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { HttpApi } from "@effect/platform"
import { Api } from "@botrelay/http"
import { FakeTelegram } from "@botrelay/testing"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { startServer, type TestServer } from "./Harness.js"

// Random and mutated requests at every /api and /tgapi route (and the webhook ingress), a bounded number
// from a fixed seed: no 5xx, no event-loop stall over a second, no secret in any answer or log line.

let fake: FakeTelegram.FakeTelegram
let server: TestServer
const tokens: Array<string> = []
let operatorKey = ""
const webhookSecret = "backend-secret_0123456789abcdefXYZ"

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  for (const flags of [{ manage_enabled: true, long_poll_enabled: true }, { proxy_enabled: false }]) {
    const tg = fake.addBot()
    const added = await server.call("/api/bots/add", {
      body: { token: tg.token, name: "fuzz", secret_token: webhookSecret, ...flags }
    })
    assert.strictEqual(added.status, 200, added.text)
    tokens.push(tg.token)
  }
  operatorKey = (await server.call("/api/auth/api-keys", { body: { name: "op", bot_ids: [1] } })).json.key
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

/** mulberry32: the same sequence on every run. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const apiEndpoints = (() => {
  const endpoints: Array<{ readonly method: string; readonly path: string }> = [
    { method: "GET", path: "/api/openapi.json" }
  ]
  HttpApi.reflect(Api.Api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      endpoints.push({ method: endpoint.method, path: endpoint.path })
    }
  })
  return endpoints
})()

const botMethods = [
  "getMe",
  "sendMessage",
  "getUpdates",
  "setWebhook",
  "deleteWebhook",
  "getWebhookInfo",
  "logOut",
  "close",
  "sendDocument",
  "sendPhoto",
  "getFile",
  "copyMessage",
  "forwardMessage",
  "editMessageText",
  "deleteMessage",
  "deleteMessages",
  "sendMediaGroup",
  "GETUPDATES"
]

const fieldNames = [
  "id",
  "bot_id",
  "chat_id",
  "user_id",
  "text",
  "token",
  "name",
  "backend_url",
  "secret_token",
  "tag",
  "color",
  "limit",
  "offset",
  "timeout",
  "allowed_updates",
  "url",
  "role",
  "bot_ids",
  "source_bot_id",
  "target_bot_id",
  "action",
  "condition_type",
  "condition_value",
  "enabled",
  "status",
  "message_id",
  "from_chat_id",
  "drop_pending_updates",
  "reply_markup",
  "parse_mode",
  "__proto__",
  "constructor",
  "update_id",
  "message"
]

describe("fuzzing every route", () => {
  it("answers random and mutated requests without a 5xx, a stall or a secret", async () => {
    const next = random(20261125)
    const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
    const int = (max: number) => Math.floor(next() * max)

    const scalars: Array<() => unknown> = [
      () => int(5),
      () => -int(1e6),
      () => int(2 ** 31) * 2 ** 22,
      () => 1e308,
      () => 2.5,
      () => -0,
      () => Number.MAX_SAFE_INTEGER + 2,
      () => "",
      () => " ",
      () => "x".repeat(int(5000)),
      () => "a\u0000b",
      () => "\ud800",
      () => "\u202e\u0007\u001b[31m",
      () => "../../etc/passwd",
      () => "%2e%2e%2f",
      () => "http://127.0.0.1:1/hook",
      () => "javascript:alert(1)",
      () => "(a+)+$",
      () => "\\P{Lu}*\\P{Lu}{0,7}\\p{Lu}",
      () => "1e400",
      () => "NaN",
      () => "0x10",
      () => "2.5",
      () => "-1",
      () => true,
      () => null,
      () => pick(tokens),
      () => "admin",
      () => "message",
      () => "[\"message\",\"edited_message\"]",
      () => "{\"inline_keyboard\":[[{\"text\":\"a\",\"callback_data\":\"b\"}]]}"
    ]
    const value = (depth: number): unknown => {
      const roll = next()
      if (depth > 3 || roll < 0.7) return pick(scalars)()
      if (roll < 0.85) return Array.from({ length: int(4) }, () => value(depth + 1))
      return object(depth + 1)
    }
    const object = (depth: number): Record<string, unknown> => {
      const result: Record<string, unknown> = {}
      for (let i = int(6); i > 0; i--) result[pick(fieldNames)] = value(depth)
      return result
    }

    const body = (): { readonly bytes?: Buffer; readonly type?: string } => {
      const roll = next()
      if (roll < 0.1) return {}
      if (roll < 0.55) return { bytes: Buffer.from(JSON.stringify(object(0))), type: "application/json" }
      if (roll < 0.62) {
        const json = JSON.stringify(object(0))
        return { bytes: Buffer.from(json.slice(0, int(json.length))), type: "application/json" }
      }
      if (roll < 0.7) {
        const params = new URLSearchParams()
        for (const [k, v] of Object.entries(object(1))) params.append(k, typeof v === "string" ? v : JSON.stringify(v))
        return { bytes: Buffer.from(params.toString()), type: "application/x-www-form-urlencoded" }
      }
      if (roll < 0.8) {
        const boundary = pick(["b", "----x", "", "a\"b"])
        const parts = Object.entries(object(1)).map(([k, v]) =>
          `--${boundary}\r\n${pick(["content-disposition: form-data; ", "Content-Disposition:;", "x: y\r\n"])}name="${k}"${
            pick(["", "; filename=\"f\""])
          }\r\n\r\n${String(v)}\r\n`
        )
        return {
          bytes: Buffer.from(parts.join("") + (next() < 0.5 ? `--${boundary}--\r\n` : "")),
          type: `multipart/form-data${next() < 0.8 ? `; boundary=${boundary}` : ""}`
        }
      }
      if (roll < 0.88) {
        return { bytes: Buffer.from(Array.from({ length: int(2000) }, () => int(256))), type: pick(["text/plain", "", "application/octet-stream"]) }
      }
      if (roll < 0.94) {
        const n = 10 + int(5000)
        return { bytes: Buffer.from("[".repeat(n) + "]".repeat(n)), type: "application/json" }
      }
      return { bytes: Buffer.from(pick(["null", "[]", "\"x\"", "1", "{", "{\"a\":1,}", "\ufeff{}"])), type: "application/json" }
    }

    /** Percent-encoded; a lone surrogate as the bytes of its invalid UTF-8 form. */
    const encode = (text: string) => {
      try {
        return encodeURIComponent(text)
      } catch {
        return "%ED%A0%80"
      }
    }

    const query = () => {
      const parts: Array<string> = []
      for (let i = int(5); i > 0; i--) {
        const v = pick(scalars)()
        parts.push(`${encode(pick(fieldNames))}=${encode(typeof v === "string" ? v : JSON.stringify(v))}`)
      }
      if (next() < 0.1) parts.push("bot_id=1&bot_id=2", "%zz=1", "a[b]=c")
      return parts.length === 0 ? "" : `?${parts.join("&")}`
    }

    const mutatePath = (path: string) => {
      const roll = next()
      if (roll < 0.6) return path
      if (roll < 0.65) return path.toUpperCase()
      if (roll < 0.7) return `${path}/`
      if (roll < 0.75) return path.replace("/", "//")
      if (roll < 0.8) return `${path}/${pick(["..", "%2e%2e", ".%2E", "%00", "..%5c", "%2f", "x"])}`
      if (roll < 0.85) return path.replace(/\/[^/]*$/, `/${pick(["%2e%2e", "..", "%252e", "\\..\\"])}/$&`)
      if (roll < 0.9) return `/api/../tgapi/bot${pick(tokens)}/getMe`
      return `${path}${pick(["%", "%zz", "%c0%ae", ";x", "%20"])}`
    }

    const target = () => {
      const roll = next()
      if (roll < 0.55) {
        const endpoint = pick(apiEndpoints)
        return { method: next() < 0.9 ? endpoint.method : pick(["PUT", "DELETE", "PATCH", "OPTIONS"]), path: endpoint.path }
      }
      if (roll < 0.85) {
        const token = next() < 0.9 ? pick(tokens) : pick(["1:unknown", "", "%", pick(tokens) + "x"])
        return { method: pick(["GET", "POST", "POST"]), path: `/tgapi/bot${token}/${pick(botMethods)}` }
      }
      if (roll < 0.95) {
        const token = pick(tokens)
        return {
          method: pick(["GET", "HEAD", "POST"]),
          path: `/tgapi/file/bot${token}/${pick(["photos/file_1.jpg", "a/b/c", "..", "%2e%2e/%2e%2e/bot1:x/getMe", "documents/f"])}`
        }
      }
      return { method: "POST", path: `/telegram/webhook/${pick(["1", "2", "999", "-1", "1.5", "%31"])}` }
    }

    const auth = () =>
      pick([
        { authorization: `Bearer ${server.adminKey}` },
        { authorization: `Bearer ${server.adminKey}` },
        { authorization: `Bearer ${operatorKey}` },
        {},
        { authorization: "Bearer brk_AAAA" },
        { authorization: `Basic ${Buffer.from(`x:${server.adminKey}`).toString("base64")}` },
        { "x-telegram-bot-api-secret-token": "wrong" }
      ])

    const send = (method: string, path: string, headers: Record<string, string>, bytes: Buffer | undefined) =>
      new Promise<{ readonly status: number; readonly text: string; readonly hung: boolean }>((resolve) => {
        const url = new URL(server.baseUrl)
        const req = httpRequest({
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: bytes === undefined ? headers : { ...headers, "content-length": String(bytes.length) }
        }, (res) => {
          if (res.headers["content-type"] === "text/event-stream") {
            // An event stream does not end: its first bytes (the heartbeat) are its answer.
            res.once("data", (chunk: Buffer) => {
              clearTimeout(timer)
              req.destroy()
              resolve({ status: res.statusCode ?? 0, text: chunk.toString("utf8"), hung: false })
            })
            return
          }
          const chunks: Array<Buffer> = []
          res.on("data", (chunk: Buffer) => chunks.push(chunk))
          res.on("end", () => {
            clearTimeout(timer)
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), hung: false })
          })
          res.on("error", () => resolve({ status: -1, text: "", hung: false }))
        })
        const timer = setTimeout(() => {
          req.destroy()
          resolve({ status: 0, text: "", hung: true })
        }, 5000)
        req.on("error", () => {
          clearTimeout(timer)
          resolve({ status: -1, text: "", hung: false })
        })
        req.end(bytes)
      })

    const secrets = [server.adminKey, operatorKey, webhookSecret, ...tokens, ...tokens.map((t) => t.split(":")[1]!)]
    const delay = monitorEventLoopDelay({ resolution: 10 })
    delay.enable()
    const deadline = Date.now() + 60_000
    const failures: Array<string> = []
    let sent = 0
    while (sent < 1500 && Date.now() < deadline) {
      const { method, path } = target()
      const { bytes, type } = body()
      const headers: Record<string, string> = { ...auth(), ...(type === undefined || type === "" ? {} : { "content-type": type }) }
      if (next() < 0.1) headers["x-forwarded-for"] = "127.0.0.1"
      if (next() < 0.05) headers.range = pick(["bytes=0-10", "bytes=-5", "bytes=abc", "bytes=9999999-"])
      const fullPath = `${mutatePath(path)}${query()}`
      const longPoll = /getupdates|updates\/poll/i.test(fullPath)
      const withBody = method === "GET" || method === "HEAD" ? undefined : bytes
      const answer = await send(method, fullPath, headers, withBody)
      sent++
      const label = `${method} ${fullPath.slice(0, 120)} (${type ?? "no body"})`
      if (answer.status >= 500) failures.push(`${answer.status} for ${label}: ${answer.text.slice(0, 200)}`)
      if (answer.hung && !longPoll) failures.push(`no answer within 5 s for ${label}`)
      for (const secret of secrets) {
        if (answer.text.includes(secret)) failures.push(`a secret in the answer to ${label}`)
      }
    }
    delay.disable()
    assert.isAtLeast(sent, 300)
    assert.deepStrictEqual(failures.slice(0, 20), [])
    assert.isBelow(delay.max / 1e6, 1000, "the event loop stalled")
    for (const line of server.logs) {
      for (const secret of secrets) assert.notInclude(line, secret)
    }
  }, 120_000)
})
