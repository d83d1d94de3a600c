/**
 * The http suite: Botrelay's outbound HTTP client (`Http1Client`, hand-written on node:net) against undici.
 *
 * A plain node:http server in a process of its own (httpserver.ts) answers a POST with a small JSON body
 * with a Telegram-like JSON of ~200 bytes (sendMessage) or of 64 KB (getUpdates). For each answer size
 * and for 1 and 50 requests in flight, the contenders take turns in rounds (the order rotating each
 * round), so a slow spell of the machine falls on all of them:
 *   1. `Http1Client.request`, the callback API;
 *   2. `NodeHttpExchange` on `Http1Client`, the `HttpExchange` Botrelay uses, driven by Effect fibers;
 *   3. undici `Pool.request` (promise, body stream read whole);
 *   4. undici `Pool.dispatch` with a handler that collects the chunks;
 *   5. `HttpExchange` on undici's `Agent.dispatch` (undiciExchange.ts), driven by Effect fibers;
 *   6. node's global `fetch` (the undici bundled with node), for scale.
 * 1, 2 and 5 carry a timeout and maxBytes as Botrelay's calls do. req/s is over all rounds; p50 and
 * p99 over all requests of all rounds; CPU is this process's user+system time per request (the
 * server's is apart, shown as the share of one core it used). Nothing is asserted about speed; a
 * request that fails or answers the wrong size is counted and makes the suite fail.
 *
 * Env: BENCH_HTTP_DURATION (s per contender and case, split over the rounds, default 5), BENCH_HTTP_ROUNDS
 * (default 5), BENCH_HTTP_WARMUP (s per contender and case, default 1), BENCH_HTTP_CONNECTIONS (the
 * larger number in flight, default 50), BENCH_HTTP_ONLY (the contenders' numbers, e.g. "2,5"; default all), BENCH_HTTP_JSON (a file to write the figures to as JSON).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Http1Client } from "@botrelay/node"
import { NodeHttpExchange } from "@botrelay/node"
import type { HttpExchange } from "@botrelay/telegram"
import { Duration, Effect } from "effect"
import { type Dispatcher, Pool } from "undici"
import { count, distDir, envInt, root, sleep, table } from "./harness.js"
import { type Child, isRunning, processTicks, start, stop, ticksPerSecond } from "./processes.js"
import * as UndiciExchange from "./undiciExchange.js"

interface Case {
  readonly size: "small" | "64 KB"
  readonly url: string
  readonly bytes: number
  readonly inFlight: number
}

interface Window {
  readonly times: Array<number>
  failed: number
  readonly seconds: number
  readonly cpuMicros: number
  readonly serverTicks: number
}

interface Contender {
  readonly name: string
  /** Runs `inFlight` callers for `seconds`, each sending the case's request again as soon as it has its answer. */
  readonly run: (c: Case, seconds: number) => Promise<Window>
}

const body = JSON.stringify({ chat_id: 987654321, text: "a message of ordinary length, sent by the http bench" })
const bodyBytes = Buffer.from(body)
const headers = { "content-type": "application/json" }

let server: Child | undefined

/** Measures `work` (which fills `times` and counts `failed`): wall time, this process's CPU, the server's ticks. */
const measure = async (work: (window: Window) => Promise<void>): Promise<Window> => {
  const times: Array<number> = []
  const cpu = process.cpuUsage()
  const ticks = processTicks(server?.process.pid)
  const started = performance.now()
  const window = { times, failed: 0, seconds: 0, cpuMicros: 0, serverTicks: 0 }
  await work(window)
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  return { ...window, seconds, cpuMicros: used.user + used.system, serverTicks: processTicks(server?.process.pid) - ticks }
}

/** `inFlight` promise loops of `send`, which resolves to the answer's body length or rejects. */
const promiseLoops = (send: (c: Case) => Promise<number>) => (c: Case, seconds: number) =>
  measure(async (window) => {
    const end = performance.now() + seconds * 1000
    const loop = async () => {
      while (performance.now() < end) {
        const started = performance.now()
        try {
          const length = await send(c)
          if (length === c.bytes) window.times.push(performance.now() - started)
          else window.failed++
        } catch {
          window.failed++
        }
      }
    }
    await Promise.all(Array.from({ length: c.inFlight }, loop))
  })

/** `inFlight` fibers calling the exchange, as Botrelay's senders and deliveries do. */
const fiberLoops = (exchange: HttpExchange.Service) => (c: Case, seconds: number) =>
  measure((window) => {
    const request: HttpExchange.Request = {
      method: "POST",
      url: c.url,
      headers,
      body,
      timeout: Duration.seconds(30),
      maxBytes: 1_000_000
    }
    const loop = Effect.gen(function*() {
      const end = performance.now() + seconds * 1000
      while (performance.now() < end) {
        const started = performance.now()
        const answer = yield* Effect.either(exchange.exchange(request))
        if (answer._tag === "Right" && answer.right.status === 200 && answer.right.body.length === c.bytes) {
          window.times.push(performance.now() - started)
        } else window.failed++
      }
    })
    return Effect.runPromise(Effect.all(Array.from({ length: c.inFlight }, () => loop), {
      concurrency: "unbounded",
      discard: true
    }))
  })

/** undici `dispatch` collecting the body; resolves to its length. */
const dispatchOnce = (pool: Pool, path: string) =>
  new Promise<number>((resolve, reject) => {
    let status = 0
    let size = 0
    const parts: Array<Buffer> = []
    const handler: Dispatcher.DispatchHandler = {
      // undici takes a handler without onRequestStart for one of the older API, and fails it
      onRequestStart: () => {},
      onResponseStart: (_, statusCode) => {
        status = statusCode
      },
      onResponseData: (_, chunk) => {
        size += chunk.length
        parts.push(chunk)
      },
      onResponseEnd: () => {
        const whole = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)
        if (status === 200) resolve(whole.length)
        else reject(new Error(`HTTP ${status}`))
      },
      onResponseError: (_, error) => reject(error)
    }
    pool.dispatch({ path, method: "POST", headers, body: bodyBytes }, handler)
  })

const contenders = (origin: string) => {
  const http1 = Http1Client.make()
  const http1Exchange = Http1Client.make()
  const pool = new Pool(origin, { keepAliveTimeout: 30_000 })
  const dispatchPool = new Pool(origin, { keepAliveTimeout: 30_000 })
  const undici = UndiciExchange.makeClient()
  const list: ReadonlyArray<Contender> = [
    {
      name: "1. Http1Client.request",
      run: promiseLoops((c) =>
        new Promise((resolve, reject) => {
          http1.request(
            { method: "POST", url: c.url, headers, body, timeout: 30_000, maxBytes: 1_000_000 },
            (failure, answer) =>
              failure === undefined && answer!.status === 200
                ? resolve(answer!.body.length)
                : reject(new Error(failure?.code ?? `status ${answer?.status}`))
          )
        })
      )
    },
    { name: "2. NodeHttpExchange (Http1Client)", run: fiberLoops(NodeHttpExchange.fromClient(http1Exchange)) },
    {
      name: "3. undici Pool.request",
      run: promiseLoops(async (c) => {
        const answer = await pool.request({ path: new URL(c.url).pathname, method: "POST", headers, body: bodyBytes })
        const read = await answer.body.arrayBuffer()
        if (answer.statusCode !== 200) throw new Error(`HTTP ${answer.statusCode}`)
        return read.byteLength
      })
    },
    { name: "4. undici Pool.dispatch", run: promiseLoops((c) => dispatchOnce(dispatchPool, new URL(c.url).pathname)) },
    { name: "5. UndiciExchange (Agent.dispatch)", run: fiberLoops(UndiciExchange.fromClient(undici)) },
    {
      name: "6. fetch (node's undici)",
      run: promiseLoops(async (c) => {
        const answer = await fetch(c.url, { method: "POST", headers, body })
        const read = await answer.arrayBuffer()
        if (answer.status !== 200) throw new Error(`HTTP ${answer.status}`)
        return read.byteLength
      })
    }
  ]
  const close = async () => {
    http1.close()
    http1Exchange.close()
    await Promise.all([pool.destroy(), dispatchPool.destroy(), undici.close()])
  }
  return { list, close }
}

const startServer = async () => {
  const child = start("http server", [join(distDir, "httpserver.js")], {}, root)
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const line = child.output.split("\n").find((l) => l.startsWith("{"))
    if (line !== undefined) {
      return { child, ...(JSON.parse(line) as { readonly port: number; readonly small: number; readonly big: number }) }
    }
    if (!isRunning(child)) throw new Error(`the http server exited:\n${child.output}`)
    await sleep(50)
  }
  throw new Error("the http server did not start within 20 s")
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

const ms = (value: number) => `${value < 1 ? value.toFixed(2) : value < 10 ? value.toFixed(1) : Math.round(value)} ms`

interface Row {
  readonly size: string
  readonly inFlight: number
  readonly name: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuPerRequest: number
  readonly serverCore: number
  readonly failed: number
}

/** Runs the suite and prints a table per case; throws when a request failed. */
export const runHttp = async (): Promise<void> => {
  const duration = envInt("BENCH_HTTP_DURATION", 5)
  const rounds = envInt("BENCH_HTTP_ROUNDS", 5)
  const warmup = envInt("BENCH_HTTP_WARMUP", 1)
  const connections = envInt("BENCH_HTTP_CONNECTIONS", 50)
  const started = await startServer()
  server = started.child
  const origin = `http://127.0.0.1:${started.port}`
  const { close, list: all } = contenders(origin)
  const only = (process.env["BENCH_HTTP_ONLY"] ?? "").split(",").filter((n) => n !== "")
  const list = only.length === 0 ? all : all.filter((c) => only.some((n) => c.name.startsWith(`${n}.`)))
  const rows: Array<Row> = []
  try {
    const cases: Array<Case> = []
    for (const [size, path, bytes] of [
      ["small", "/bot123:abc/sendMessage", started.small],
      ["64 KB", "/bot123:abc/getUpdates", started.big]
    ] as const) {
      for (const inFlight of [1, connections]) cases.push({ size, url: `${origin}${path}`, bytes, inFlight })
    }
    process.stdout.write(
      `\nOutbound HTTP: POST ${bodyBytes.length} B of JSON to a node:http server (its own process), answers of ${started.small} B (small) and ${started.big} B (64 KB).\n\n`
    )
    for (const c of cases) {
      for (const contender of list) {
        process.stderr.write(`http: ${c.size}, ${c.inFlight} in flight, ${contender.name}: warm-up ${warmup} s\n`)
        await contender.run(c, warmup)
      }
      const windows = list.map(() => [] as Array<Window>)
      for (let round = 0; round < rounds; round++) {
        process.stderr.write(`http: ${c.size}, ${c.inFlight} in flight: round ${round + 1} of ${rounds}\n`)
        for (let k = 0; k < list.length; k++) {
          const i = (k + round) % list.length
          windows[i]!.push(await list[i]!.run(c, duration / rounds))
        }
      }
      const caseRows = list.map((contender, i): Row => {
        const ws = windows[i]!
        const sum = (of: (w: Window) => number) => ws.reduce((total, w) => total + of(w), 0)
        const requests = sum((w) => w.times.length)
        const sorted = ws.flatMap((w) => w.times).sort((a, b) => a - b)
        return {
          size: c.size,
          inFlight: c.inFlight,
          name: contender.name,
          rps: requests / sum((w) => w.seconds),
          p50: percentile(sorted, 0.5),
          p99: percentile(sorted, 0.99),
          cpuPerRequest: sum((w) => w.cpuMicros) / requests,
          serverCore: sum((w) => w.serverTicks) / ticksPerSecond / sum((w) => w.seconds),
          failed: sum((w) => w.failed)
        }
      })
      rows.push(...caseRows)
      const reference = caseRows.find((r) => r.name.startsWith("2.")) ?? caseRows[0]!
      process.stdout.write(`${c.size} answer, ${c.inFlight} in flight:\n\n${
        table(
          ["client", "req/s", "p50", "p99", "CPU/req", "CPU vs 2.", "server core", "failed"],
          caseRows.map((r) => [
            r.name,
            count(r.rps),
            ms(r.p50),
            ms(r.p99),
            `${Math.round(r.cpuPerRequest)} µs`,
            (r.cpuPerRequest / reference.cpuPerRequest).toFixed(2),
            `${Math.round(r.serverCore * 100)}%`,
            count(r.failed)
          ]),
          1
        )
      }\n\n`)
    }
  } finally {
    await close()
    await stop(started.child)
    server = undefined
  }
  const json = process.env["BENCH_HTTP_JSON"]
  if (json !== undefined && json !== "") writeFileSync(json, `${JSON.stringify(rows, null, 2)}\n`)
  process.stdout.write(
    "CPU/req: this process's user+system CPU per request; server core: the share of one core the server used.\n" +
      "(Figures only; the bench asserts nothing about speed.)\n\n"
  )
  if (rows.some((r) => r.failed > 0)) throw new Error("some requests failed or answered the wrong size")
}
