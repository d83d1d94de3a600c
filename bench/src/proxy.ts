/**
 * The proxy suite.
 *
 * Overhead: sendMessage with 50 requests in flight (throughput) and with one at a time (the latency the
 * proxy adds, without queueing), straight to FakeTelegram (a process of its own) and through Botrelay's
 * /tgapi (history on, so each message is also stored), loaded by autocannon from this process. The
 * 50-in-flight runs take turns in rounds (straight, bare proxy, /tgapi, again), so a slow spell of the
 * machine falls on all of them rather than on one: req/s is over all rounds, p50 the rounds' median,
 * p99 the rounds' highest. CPU/call is the user and system time of the process that answers (FakeTelegram,
 * the bare proxy, Botrelay), all its threads, per call.
 * Fast path on vs off: one Botrelay process (`fastpathserver.ts`) serving the same instance on two
 * listeners, with and without `ProxyFastPath` in front of the app; the same sendMessage load, taking
 * turns in rounds at 50 in flight, then one at a time.
 * Long-poll latency: 10 bots with long polling on; a client per bot waits in getUpdates on /tgapi
 * while FakeTelegram (in this process) produces updates at a fixed rate; time from creation to the
 * client receiving the update, and the Botrelay server's CPU (all threads) over the window per update.
 *
 * Env: BENCH_PROXY_DURATION (s per path, default 10), BENCH_PROXY_ROUNDS (default 5), BENCH_PROXY_WARMUP
 * (s, default 3), BENCH_PROXY_CONNECTIONS (default 50), BENCH_LONGPOLL_BOTS (default 10), BENCH_LONGPOLL_RATE
 * (updates/s, default 100), BENCH_LONGPOLL_DURATION (s, default 10).
 */
import { randomBytes } from "node:crypto"
import * as Http from "node:http"
import { join } from "node:path"
import autocannon from "autocannon"
import { FakeTelegram } from "@botrelay/testing"
import {
  addBot,
  type Botrelay,
  count,
  distDir,
  envInt,
  makeTempDir,
  removeTempDir,
  root,
  sleep,
  startBotrelay,
  table
} from "./harness.js"
import { type Child, freePort, isRunning, processTicks, start, stop, ticksPerSecond, waitHealthy } from "./processes.js"

interface FakeProcess {
  readonly child: Child
  readonly apiRoot: string
  readonly bots: ReadonlyArray<{ readonly token: string; readonly chatId: number }>
}

const startFake = async (bots: number): Promise<FakeProcess> => {
  const child = start("fake", [join(distDir, "fake.js")], { FAKE_BOTS: String(bots) }, root)
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const line = child.output.split("\n").find((l) => l.startsWith("{"))
    if (line !== undefined) return { child, ...(JSON.parse(line) as Omit<FakeProcess, "child">) }
    if (!isRunning(child)) throw new Error(`the fake exited:\n${child.output}`)
    await sleep(50)
  }
  throw new Error("the fake did not start within 20 s")
}


const load = (url: string, body: string, seconds: number, connections: number) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({
      url,
      method: "POST",
      body,
      headers: { "content-type": "application/json" },
      connections,
      duration: seconds
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- autocannon's own error, passed on as it is
    }, (error, result) => error === null || error === undefined ? resolve(result) : reject(error))
  })

/** Requests one after another on one keep-alive connection for `seconds`, timed to the microsecond. */
const oneAtATime = async (url: string, body: string, seconds: number) => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: 1 })
  const times: Array<number> = []
  let failed = 0
  const send = () =>
    new Promise<void>((resolve) => {
      const started = performance.now()
      const request = Http.request(url, { method: "POST", agent, headers: { "content-type": "application/json" } }, (response) => {
        response.resume()
        response.on("end", () => {
          times.push(performance.now() - started)
          if (response.statusCode !== 200) failed++
          resolve()
        })
      })
      request.on("error", () => {
        failed++
        resolve()
      })
      request.end(body)
    })
  const end = performance.now() + seconds * 1000
  while (performance.now() < end) await send()
  agent.destroy()
  const sorted = times.sort((a, b) => a - b)
  return { rps: times.length / seconds, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), failed }
}

interface OverheadRow {
  readonly name: string
  readonly inFlight: number
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly failed: number
  /** CPU time (user + system, all threads) of the process that answers, per call, in µs. */
  readonly cpuPerCall: number
}

interface Target {
  readonly name: string
  readonly url: string
  /** The process that answers the calls, whose CPU is counted. */
  readonly pid: number | undefined
}

/**
 * The 50-in-flight rows of `targets`: a warm-up each, then rounds taking turns (req/s over all rounds,
 * p50 the rounds' median, p99 their highest); then each one at a time.
 */
const measure = async (
  label: string,
  targets: ReadonlyArray<Target>,
  body: string
): Promise<ReadonlyArray<OverheadRow>> => {
  const duration = envInt("BENCH_PROXY_DURATION", 10)
  const warmup = envInt("BENCH_PROXY_WARMUP", 3)
  const connections = envInt("BENCH_PROXY_CONNECTIONS", 50)
  const rounds = envInt("BENCH_PROXY_ROUNDS", 5)
  const rows: Array<OverheadRow> = []
  for (const target of targets) {
    process.stderr.write(`${label}: ${target.name}, ${connections} in flight: warm-up ${warmup} s\n`)
    await load(target.url, body, warmup, connections)
  }
  const runs = targets.map(() => [] as Array<autocannon.Result>)
  const ticks = targets.map(() => 0)
  for (let round = 1; round <= rounds; round++) {
    for (const [i, target] of targets.entries()) {
      process.stderr.write(`${label}: ${target.name}, ${connections} in flight: round ${round} of ${rounds}\n`)
      const before = processTicks(target.pid)
      runs[i]!.push(await load(target.url, body, duration / rounds, connections))
      ticks[i]! += processTicks(target.pid) - before
    }
  }
  for (const [i, target] of targets.entries()) {
    const results = runs[i]!
    const sum = (of: (r: autocannon.Result) => number) => results.reduce((total, r) => total + of(r), 0)
    rows.push({
      name: target.name,
      inFlight: connections,
      rps: sum((r) => r.requests.total) / sum((r) => r.duration),
      p50: median(results.map((r) => r.latency.p50)),
      p99: Math.max(...results.map((r) => r.latency.p99)),
      failed: sum((r) => r.non2xx + r.errors),
      cpuPerCall: perCall(ticks[i]!, sum((r) => r.requests.total))
    })
  }
  for (const target of targets) {
    process.stderr.write(`${label}: ${target.name}, 1 in flight: warm-up ${warmup} s, run ${duration} s\n`)
    await oneAtATime(target.url, body, warmup)
    const before = processTicks(target.pid)
    const alone = await oneAtATime(target.url, body, duration)
    const calls = alone.rps * duration
    rows.push({ name: target.name, inFlight: 1, ...alone, cpuPerCall: perCall(processTicks(target.pid) - before, calls) })
  }
  return rows
}

const perCall = (ticks: number, calls: number) => calls === 0 ? Number.NaN : ticks / ticksPerSecond * 1e6 / calls

const messageBody = (chatId: number) =>
  JSON.stringify({ chat_id: chatId, text: "a message of ordinary length, sent through the proxy" })

const overhead = async (): Promise<ReadonlyArray<OverheadRow>> => {
  const tempDir = makeTempDir()
  const fake = await startFake(1)
  let botrelay: Botrelay | undefined
  let bare: Child | undefined
  try {
    botrelay = await startBotrelay(join(tempDir, "botrelay.db"), fake.apiRoot)
    const bot = fake.bots[0]!
    await addBot(botrelay, { token: bot.token, name: "proxy bench", manage_enabled: true })
    const barePort = await freePort()
    bare = start("bare proxy", [join(distDir, "bareproxy.js")], {
      BARE_UPSTREAM: fake.apiRoot,
      BARE_PORT: String(barePort),
      BARE_HOST: "127.0.0.1"
    }, root)
    const bareUrl = `http://127.0.0.1:${barePort}`
    await waitHealthy(bare, bareUrl)
    return await measure("proxy", [
      { name: "straight to FakeTelegram", url: `${fake.apiRoot}/bot${bot.token}/sendMessage`, pid: fake.child.process.pid },
      { name: "bare node:http proxy", url: `${bareUrl}/tgapi/bot${bot.token}/sendMessage`, pid: bare.process.pid },
      { name: "through /tgapi", url: `${botrelay.url}/tgapi/bot${bot.token}/sendMessage`, pid: botrelay.child.process.pid }
    ], messageBody(bot.chatId))
  } finally {
    if (bare !== undefined) await stop(bare)
    if (botrelay !== undefined) await stop(botrelay.child)
    await stop(fake.child)
    removeTempDir(tempDir)
  }
}

/** Starts `fastpathserver.js`: one instance on two listeners, with and without the fast path. */
const startFastPathServer = async (database: string, telegramApi: string) => {
  const adminKey = `brk_${randomBytes(32).toString("base64url")}`
  const child = start("fast path server", [join(distDir, "fastpathserver.js")], {
    FP_DATABASE: database,
    FP_TELEGRAM_API: telegramApi,
    FP_ADMIN_KEY: adminKey
  }, root)
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const line = child.output.split("\n").find((l) => l.startsWith("{"))
    if (line !== undefined) {
      const urls = JSON.parse(line) as { readonly on: string; readonly off: string }
      await waitHealthy(child, urls.on)
      const botrelay: Botrelay = { child, url: urls.on, headers: { authorization: `Bearer ${adminKey}` } }
      return { botrelay, ...urls }
    }
    if (!isRunning(child)) throw new Error(`the fast path server exited:\n${child.output}`)
    await sleep(50)
  }
  throw new Error("the fast path server did not start within 20 s")
}

/** /tgapi sendMessage through one instance, with the fast path in front of the app and without it. */
const fastPathOnOff = async (): Promise<ReadonlyArray<OverheadRow>> => {
  const tempDir = makeTempDir()
  const fake = await startFake(1)
  let server: Awaited<ReturnType<typeof startFastPathServer>> | undefined
  try {
    server = await startFastPathServer(join(tempDir, "botrelay.db"), fake.apiRoot)
    const bot = fake.bots[0]!
    await addBot(server.botrelay, { token: bot.token, name: "fast path bench", manage_enabled: true })
    const path = `/tgapi/bot${bot.token}/sendMessage`
    return await measure("fast path", [
      { name: "fast path on", url: `${server.on}${path}`, pid: server.botrelay.child.process.pid },
      { name: "fast path off", url: `${server.off}${path}`, pid: server.botrelay.child.process.pid }
    ], messageBody(bot.chatId))
  } finally {
    if (server !== undefined) await stop(server.botrelay.child)
    await stop(fake.child)
    removeTempDir(tempDir)
  }
}

const overheadTable = (rows: ReadonlyArray<OverheadRow>) =>
  table(
    ["path", "in flight", "req/s", "p50", "p99", "CPU/call", "failed"],
    rows.map((r) => [
      r.name,
      count(r.inFlight),
      count(r.rps),
      ms(r.p50),
      ms(r.p99),
      Number.isNaN(r.cpuPerCall) ? "?" : `${Math.round(r.cpuPerCall)} µs`,
      count(r.failed)
    ]),
    1
  )

/** Runs the fast path comparison and prints its table; throws when a request failed. */
export const runFastPath = async (): Promise<void> => {
  const rows = await fastPathOnOff()
  const connections = envInt("BENCH_PROXY_CONNECTIONS", 50)
  const pick = (name: string, inFlight: number) => rows.find((r) => r.name === name && r.inFlight === inFlight)!
  const ratio = (inFlight: number, of: (r: OverheadRow) => number) =>
    (of(pick("fast path on", inFlight)) / of(pick("fast path off", inFlight))).toFixed(2)
  process.stdout.write(`\nFast path on vs off: /tgapi sendMessage, history on, one instance on two listeners.\n\n`)
  process.stdout.write(`${overheadTable(rows)}\n\n`)
  process.stdout.write(`${
    table(["in flight", "req/s on / off", "p50 on / off", "p99 on / off"], [
      [count(connections), ratio(connections, (r) => r.rps), ratio(connections, (r) => r.p50), ratio(connections, (r) => r.p99)],
      ["1", ratio(1, (r) => r.rps), ratio(1, (r) => r.p50), ratio(1, (r) => r.p99)]
    ], 0)
  }\n\n`)
  if (rows.some((r) => r.failed > 0)) throw new Error("some requests through /tgapi failed")
}

interface Latency {
  readonly bots: number
  readonly rate: number
  readonly created: number
  readonly received: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  /** CPU time (user + system, all threads) of Botrelay's server over the measured window, per update, in µs. */
  readonly cpuPerUpdate: number
}

const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 0.5)

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

const longPollLatency = async (): Promise<Latency> => {
  const bots = envInt("BENCH_LONGPOLL_BOTS", 10)
  const rate = envInt("BENCH_LONGPOLL_RATE", 100)
  const duration = envInt("BENCH_LONGPOLL_DURATION", 10)
  const tempDir = makeTempDir()
  const fake = await FakeTelegram.start()
  let botrelay: Botrelay | undefined
  let running = true
  try {
    botrelay = await startBotrelay(join(tempDir, "botrelay.db"), fake.apiRoot)
    const fakeBots = Array.from({ length: bots }, () => fake.addBot())
    for (const bot of fakeBots) await addBot(botrelay, { token: bot.token, name: "long poll bench", long_poll_enabled: true })
    const user = fake.addUser()
    /** Creation times of the updates created in the measured window, until their client receives them. */
    const waiting = new Map<string, number>()
    const delays: Array<number> = []
    let measuring = false

    const client = async (token: string) => {
      let offset = 0
      while (running) {
        const response = await fetch(`${botrelay!.url}/tgapi/bot${token}/getUpdates`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ offset, timeout: 30 })
        })
        const at = performance.now()
        const answer = await response.json() as { ok: boolean; result?: Array<{ update_id: number; message?: { text?: string } }> }
        if (!answer.ok || answer.result === undefined) throw new Error(`getUpdates: ${JSON.stringify(answer)}`)
        for (const update of answer.result) {
          offset = update.update_id + 1
          const text = update.message?.text ?? ""
          const sentAt = waiting.get(text)
          if (sentAt !== undefined) {
            delays.push(at - sentAt)
            waiting.delete(text)
          }
        }
      }
    }
    const clients = fakeBots.map((bot) => client(bot.token).catch((e) => e as Error))

    let n = 0
    const produce = (seconds: number) =>
      new Promise<number>((resolve) => {
        const started = performance.now()
        let made = 0
        const timer = setInterval(() => {
          const due = Math.floor((performance.now() - started) / 1000 * rate)
          while (made < due) {
            const text = `lp ${n++}`
            if (measuring) waiting.set(text, performance.now())
            fake.userSends(fakeBots[n % bots]!.id, { user, text })
            made++
          }
          if (performance.now() - started >= seconds * 1000) {
            clearInterval(timer)
            resolve(made)
          }
        }, 2)
      })

    process.stderr.write(`long poll: ${bots} bots, ${rate} updates/s, warm-up 2 s, run ${duration} s\n`)
    await produce(2)
    measuring = true
    const ticksBefore = processTicks(botrelay.child.process.pid)
    const made = await produce(duration)
    measuring = false
    const ticks = processTicks(botrelay.child.process.pid) - ticksBefore
    const deadline = Date.now() + 5000
    while (waiting.size > 0 && Date.now() < deadline) await sleep(50)
    running = false
    fake.userSends(fakeBots[0]!.id, { user, text: "wake" })
    for (const bot of fakeBots.slice(1)) fake.userSends(bot.id, { user, text: "wake" })
    const failures = (await Promise.all(clients)).filter((r) => r instanceof Error)
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the first client's failure
    if (failures.length > 0) throw failures[0]
    const sorted = delays.sort((a, b) => a - b)
    return {
      bots,
      rate,
      created: made,
      received: delays.length,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted[sorted.length - 1] ?? Number.NaN,
      cpuPerUpdate: perCall(ticks, made)
    }
  } finally {
    running = false
    if (botrelay !== undefined) await stop(botrelay.child)
    await fake.close()
    removeTempDir(tempDir)
  }
}

const ms = (value: number) => `${value < 1 ? value.toFixed(2) : value < 10 ? value.toFixed(1) : Math.round(value)} ms`

/** Runs the suite (the fast path comparison last) and prints its tables; throws when a request failed. */
export const runProxy = async (): Promise<void> => {
  const rows = await overhead()
  const pick = (name: string, inFlight: number) => rows.find((r) => r.name === name && r.inFlight === inFlight)!
  const connections = envInt("BENCH_PROXY_CONNECTIONS", 50)
  const direct = pick("straight to FakeTelegram", connections)
  const bare = pick("bare node:http proxy", connections)
  const proxied = pick("through /tgapi", connections)
  const directAlone = pick("straight to FakeTelegram", 1)
  const proxiedAlone = pick("through /tgapi", 1)
  process.stdout.write(`\nProxy: sendMessage, history on.\n\n`)
  process.stdout.write(`${overheadTable(rows)}\n\n`)
  const latency = await longPollLatency()
  process.stdout.write(
    `Long poll: ${latency.bots} bots, ${latency.rate} updates/s; a client per bot waiting in getUpdates on /tgapi.\n\n`
  )
  process.stdout.write(`${
    table(
      ["created", "received", "p50", "p99", "max", "server CPU/update"],
      [[
        count(latency.created),
        count(latency.received),
        ms(latency.p50),
        ms(latency.p99),
        ms(latency.max),
        `${Math.round(latency.cpuPerUpdate)} µs`
      ]],
      0
    )
  }\n\n`)
  const verdict = (met: boolean) => met ? "met" : "missed"
  const addedP50 = proxiedAlone.p50 - directAlone.p50
  process.stdout.write(`Targets (figures only; the bench asserts nothing about speed):\n\n${
    table(["target", "goal", "measured", ""], [
      ["added p50 latency through /tgapi (one at a time)", "<= 2 ms", ms(addedP50), verdict(addedP50 <= 2)],
      [
        `throughput through /tgapi vs straight (${count(proxied.inFlight)} in flight)`,
        ">= 0.5",
        (proxied.rps / direct.rps).toFixed(2),
        verdict(proxied.rps / direct.rps >= 0.5)
      ],
      ["long-poll delivery p99", "< 20 ms", ms(latency.p99), verdict(latency.p99 < 20)],
      [
        `issue 21 item 5: /tgapi vs straight (${count(proxied.inFlight)} in flight)`,
        ">= 0.8",
        (proxied.rps / direct.rps).toFixed(2),
        verdict(proxied.rps / direct.rps >= 0.8)
      ],
      ["issue 21 item 5: added p50 (one at a time)", "<= 0.3 ms", ms(addedP50), verdict(addedP50 <= 0.3)],
      ["issue 21 item 5: long-poll delivery p99", "<= 5 ms", ms(latency.p99), verdict(latency.p99 <= 5)],
      [
        `(for scale) bare node:http proxy vs straight (${count(bare.inFlight)} in flight)`,
        "",
        (bare.rps / direct.rps).toFixed(2),
        ""
      ],
      [`(for scale) /tgapi vs the bare proxy (${count(proxied.inFlight)} in flight)`, "", (proxied.rps / bare.rps).toFixed(2), ""]
    ], 1)
  }\n\n`)
  if (rows.some((r) => r.failed > 0)) throw new Error("some proxied or direct requests failed")
  if (latency.received < latency.created) {
    throw new Error(`long poll: ${latency.created - latency.received} updates never reached their client`)
  }
  await runFastPath()
}
