/**
 * The API suite: the standalone Botrelay server against a bare node:http + better-sqlite3 ceiling,
 * both on the same seeded SQLite file, loaded by autocannon from this process.
 *
 * Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 3), BENCH_CONNECTIONS (default 50),
 * BENCH_ONLY (run only the routes whose name contains this text, e.g. `messages`).
 */
import { join } from "node:path"
import autocannon from "autocannon"
import {
  count,
  distDir,
  envInt,
  makeTempDir,
  removeTempDir,
  root,
  startBotrelay,
  table
} from "./harness.js"
import {
  type Child,
  children,
  freePort,
  isRunning,
  machineTicks,
  memory,
  processTicks,
  start,
  stop,
  ticksPerSecond,
  waitHealthy
} from "./processes.js"
import { seed } from "./seed.js"

const bareBin = join(distDir, "bare.js")

type Headers = Record<string, string>

interface Target {
  readonly name: string
  readonly child: Child
  readonly baseUrl: string
}

interface Route {
  readonly name: string
  readonly path: string
}

interface Row {
  readonly target: string
  readonly route: string
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  readonly others: number
}

interface Settings {
  readonly duration: number
  readonly warmup: number
  readonly connections: number
}

let interrupted = false
let current: autocannon.Instance | undefined

/** Stops a load in progress; the suite then fails with "interrupted". */
export const interruptApi = (): void => {
  interrupted = true
  current?.stop()
}

const load = (url: string, headers: Headers, seconds: number, connections: number) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    if (interrupted) return reject(new Error("interrupted"))
    current = autocannon({ url, connections, duration: seconds, headers }, (error, result) => {
      current = undefined
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- autocannon's own error, passed on as it is
      if (error !== null && error !== undefined) reject(error)
      else if (interrupted) reject(new Error("interrupted"))
      else resolve(result)
    })
  })

const ourTicks = () => children.reduce((sum, c) => sum + processTicks(c.process.pid), processTicks(process.pid))

const run = async (target: Target, route: Route, headers: Headers, settings: Settings): Promise<Row> => {
  const url = `${target.baseUrl}${route.path}`
  process.stderr.write(`${target.name} ${route.name}: warm-up ${settings.warmup} s, run ${settings.duration} s\n`)
  await load(url, headers, settings.warmup, settings.connections)
  const machineBefore = machineTicks()
  const oursBefore = ourTicks()
  const result = await load(url, headers, settings.duration, settings.connections)
  const others = (machineTicks() - machineBefore - (ourTicks() - oursBefore)) / ticksPerSecond / result.duration
  if (!isRunning(target.child)) throw new Error(`${target.name} exited during the run:\n${target.child.output}`)
  return {
    target: target.name,
    route: route.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    others: Math.max(0, others)
  }
}

const fetchText = async (url: string, headers: Headers) => {
  const response = await fetch(url, { headers })
  return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
}

/** Every target must answer each route with the same status, content type and body, and refuse a wrong key. */
const checkSameAnswers = async (targets: ReadonlyArray<Target>, routes: ReadonlyArray<Route>, headers: Headers) => {
  const wrongKey = { authorization: `Bearer brk_${"x".repeat(43)}` }
  for (const route of routes) {
    const answers = await Promise.all(targets.map((t) => fetchText(`${t.baseUrl}${route.path}`, headers)))
    const reference = answers[0]!
    if (reference.status !== 200) {
      throw new Error(`${targets[0]!.name} ${route.name}: status ${reference.status}: ${reference.body}`)
    }
    answers.forEach((answer, i) => {
      if (answer.status !== reference.status || answer.type !== reference.type || answer.body !== reference.body) {
        throw new Error(
          `${targets[i]!.name} answers ${route.name} differently from ${targets[0]!.name}:\n` +
            `${answer.status} ${answer.type} ${answer.body.slice(0, 600)}\nvs\n` +
            `${reference.status} ${reference.type} ${reference.body.slice(0, 600)}`
        )
      }
    })
    const refused = await Promise.all(targets.map((t) => fetchText(`${t.baseUrl}${route.path}`, wrongKey)))
    refused.forEach((answer, i) => {
      if (answer.status !== 401) throw new Error(`${targets[i]!.name} ${route.name} with a wrong key: ${answer.status}`)
    })
    process.stderr.write(`${route.name}: identical ${reference.body.length}-character answers\n`)
  }
}

const report = (
  rows: ReadonlyArray<Row>,
  routes: ReadonlyArray<Route>,
  chatMessages: number,
  messages: number,
  settings: Settings
) => {
  const ms = (n: number) => `${n} ms`
  const results = table(
    ["target", "route", "req/s", "p50", "p99", "non-2xx", "errors", "others"],
    rows.map((r) => [
      r.target,
      r.route,
      count(r.rps),
      ms(r.p50),
      ms(r.p99),
      String(r.non2xx),
      String(r.errors),
      r.others.toFixed(2)
    ]),
    2
  )
  const ratios = table(
    ["route", "Botrelay / bare"],
    routes.map((route) => {
      const rps = (target: string) => rows.find((r) => r.route === route.name && r.target === target)!.rps
      return [route.name, (rps("Botrelay") / rps("bare")).toFixed(3)]
    }),
    1
  )
  process.stdout.write(
    `\nAPI: ${settings.connections} connections, ${settings.duration} s per run ` +
      `after a ${settings.warmup} s warm-up; ` +
      `${count(messages)} messages, the queried chat holds ${count(chatMessages)}.\n` +
      `others: cores kept busy by other processes on this machine during the run (0 = quiet).\n\n` +
      `${results}\n\n${ratios}\n\n`
  )
}

/** Runs the suite and prints its tables; throws when a request failed or the answers differ. */
export const runApi = async (): Promise<void> => {
  const settings: Settings = {
    duration: envInt("BENCH_DURATION", 10),
    warmup: envInt("BENCH_WARMUP", 3),
    connections: envInt("BENCH_CONNECTIONS", 50)
  }
  const only = process.env["BENCH_ONLY"]
  const tempDir = makeTempDir()
  const started: Array<Child> = []
  try {
    const filename = join(tempDir, "botrelay.db")
    const seeding = performance.now()
    const seeded = await seed(filename)
    process.stderr.write(
      `seeded ${seeded.bots} bots and ${seeded.messages} messages in ` +
        `${((performance.now() - seeding) / 1000).toFixed(1)} s; bot ${seeded.botId} chat ${seeded.chatId} holds ` +
        `${seeded.chatMessages}\n`
    )

    const botrelay = await startBotrelay(filename, "http://127.0.0.1:9")
    started.push(botrelay.child)

    const barePort = await freePort()
    const bare = start("bare", [bareBin], {
      BARE_DATABASE: filename,
      BARE_PORT: String(barePort),
      BARE_HOST: "127.0.0.1"
    }, root)
    started.push(bare)
    const bareUrl = `http://127.0.0.1:${barePort}`
    await waitHealthy(bare, bareUrl)

    const targets: ReadonlyArray<Target> = [
      { name: "Botrelay", child: botrelay.child, baseUrl: botrelay.url },
      { name: "bare", child: bare, baseUrl: bareUrl }
    ]
    const routes: ReadonlyArray<Route> = [
      { name: "GET /api/bots", path: "/api/bots" },
      { name: "GET /api/messages", path: `/api/messages?bot_id=${seeded.botId}&chat_id=${seeded.chatId}&limit=50` }
    ].filter((route) => only === undefined || route.name.includes(only))
    await checkSameAnswers(targets, routes, botrelay.headers)

    const rows: Array<Row> = []
    for (const route of routes) {
      for (const target of targets) rows.push(await run(target, route, botrelay.headers, settings))
    }

    report(rows, routes, seeded.chatMessages, seeded.messages, settings)
    process.stdout.write(`Botrelay server memory: ${memory(botrelay.child)}\nbare server memory: ${memory(bare)}\n`)

    const failed = rows.filter((r) => r.non2xx > 0 || r.errors > 0)
    if (failed.length > 0) {
      const failures = failed.map((r) => `${r.target} ${r.route}: ${r.non2xx} non-2xx, ${r.errors} errors`)
      throw new Error(`requests failed: ${failures.join("; ")}`)
    }
  } finally {
    await Promise.all(started.map(stop))
    removeTempDir(tempDir)
  }
}
