import { Effect, type Scope } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** One scripted answer: status, body text and how long to wait before sending it. */
export interface Answer {
  readonly status: number
  readonly body: string
  readonly delayMs?: number
}

/** A request the fake received. */
export interface RequestRecord {
  readonly method: string
  readonly path: string
  /** Lower-case header names, as Node reads them. */
  readonly headers: Readonly<Record<string, string>>
  /** `authorization`, or "" when absent. */
  readonly authorization: string
  readonly body: string
  /** The body as JSON, or undefined when it is not JSON. */
  readonly json: any
}

/** An OpenAI-compatible chat-completions endpoint on 127.0.0.1 that answers what a test scripts. */
export interface FakeLlm {
  /** The API root to configure, e.g. `http://127.0.0.1:41234/v1`. */
  readonly baseUrl: string
  /** Every request, in order. */
  readonly requests: ReadonlyArray<RequestRecord>
  /** Queues an answer for the next request: `route_ids` as the model's JSON content. */
  readonly choose: (...routeIds: ReadonlyArray<number>) => void
  /** Queues `{"route_ids": []}`. */
  readonly chooseNone: () => void
  /** Queues a completion whose message content is `content`, as given. */
  readonly answerContent: (content: string) => void
  /** Queues a raw answer: any status and body (garbage, HTTP 500...). */
  readonly answerRaw: (status: number, body: string) => void
  /** Queues an answer sent after `ms` milliseconds (`route_ids` [] unless given). */
  readonly answerAfter: (ms: number, answer?: Answer) => void
  /** The answer when nothing is queued; by default `{"route_ids": []}`. */
  readonly setDefault: (answer: Answer) => void
  /** Resolves once `count` requests have arrived. */
  readonly waitForRequests: (count: number, timeoutMs?: number) => Promise<ReadonlyArray<RequestRecord>>
  readonly close: () => Promise<void>
}

/** A chat-completions answer whose message content is `content`. */
export const completion = (content: string): Answer => ({
  status: 200,
  body: JSON.stringify({
    id: "chatcmpl-fake",
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: "fake",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }
  })
})

/** The answer choosing these routes. */
export const choosing = (...routeIds: ReadonlyArray<number>): Answer =>
  completion(JSON.stringify({ route_ids: routeIds }))

/** Starts a fake on 127.0.0.1 port 0, for callers outside Effect. Close it with `close()`. */
export const start = async (): Promise<FakeLlm> => {
  const requests: Array<RequestRecord> = []
  const queue: Array<Answer> = []
  const waiters = new Set<() => void>()
  const timers = new Set<NodeJS.Timeout>()
  let fallback: Answer = choosing()

  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      let json: unknown = undefined
      try {
        json = JSON.parse(body)
      } catch {
        json = undefined
      }
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
      }
      const path = new URL(req.url ?? "/", "http://fake").pathname
      requests.push({
        method: req.method ?? "",
        path,
        headers,
        authorization: headers.authorization ?? "",
        body,
        json
      })
      for (const waiter of [...waiters]) waiter()
      const answer: Answer = req.method === "POST" && path === "/v1/chat/completions"
        ? queue.shift() ?? fallback
        : { status: 404, body: JSON.stringify({ error: { message: "not found", type: "invalid_request_error" } }) }
      const send = () => {
        if (res.destroyed) return
        res.writeHead(answer.status, { "content-type": "application/json" })
        res.end(answer.body)
      }
      if (answer.delayMs === undefined || answer.delayMs <= 0) return send()
      const timer = setTimeout(() => {
        timers.delete(timer)
        send()
      }, answer.delayMs)
      timers.add(timer)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as AddressInfo

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    choose: (...routeIds) => void queue.push(choosing(...routeIds)),
    chooseNone: () => void queue.push(choosing()),
    answerContent: (content) => void queue.push(completion(content)),
    answerRaw: (status, body) => void queue.push({ status, body }),
    answerAfter: (ms, answer = choosing()) => void queue.push({ ...answer, delayMs: ms }),
    setDefault: (answer) => {
      fallback = answer
    },
    waitForRequests: (count, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (requests.length < count) return
          waiters.delete(check)
          clearTimeout(timer)
          resolve([...requests])
        }
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(new Error(`FakeLlm: ${requests.length} of ${count} requests arrived in time`))
        }, timeoutMs)
        waiters.add(check)
        check()
      }),
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    }
  }
}

/** Starts a fake on 127.0.0.1 port 0 and stops it, connections included, when the scope closes. */
export const make: Effect.Effect<FakeLlm, never, Scope.Scope> = Effect.acquireRelease(
  Effect.promise(() => start()),
  (fake) => Effect.promise(() => fake.close())
)
