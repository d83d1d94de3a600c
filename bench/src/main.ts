/**
 * `pnpm bench`: the standalone Botrelay server against a bare node:http + better-sqlite3 ceiling,
 * both on the same seeded SQLite file, loaded by autocannon from this process.
 *
 * Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 3), BENCH_CONNECTIONS (default 50),
 * BENCH_CPU_PROF (a folder: run the Botrelay server with `--cpu-prof` and write its profile there),
 * BENCH_ONLY (run only the routes whose name contains this text, e.g. `messages`).
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
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

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, "../..")
const serverBin = join(root, "packages/server/dist/bin.js")
const bareBin = join(here, "bare.js")

const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`)
  return value
}

const duration = envInt("BENCH_DURATION", 10)
const warmup = envInt("BENCH_WARMUP", 3)
const connections = envInt("BENCH_CONNECTIONS", 50)
const cpuProf = process.env["BENCH_CPU_PROF"]
const only = process.env["BENCH_ONLY"]

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

let tempDir: string | undefined
let interrupted = false
let current: autocannon.Instance | undefined

const load = (url: string, headers: Headers, seconds: number) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    if (interrupted) return reject(new Error("interrupted"))
    current = autocannon({ url, connections, duration: seconds, headers }, (error, result) => {
      current = undefined
      if (error !== null && error !== undefined) reject(error)
      else if (interrupted) reject(new Error("interrupted"))
      else resolve(result)
    })
  })

const ourTicks = () => children.reduce((sum, c) => sum + processTicks(c.process.pid), processTicks(process.pid))

const run = async (target: Target, route: Route, headers: Headers): Promise<Row> => {
  const url = `${target.baseUrl}${route.path}`
  process.stderr.write(`${target.name} ${route.name}: warm-up ${warmup} s, run ${duration} s\n`)
  await load(url, headers, warmup)
  const machineBefore = machineTicks()
  const oursBefore = ourTicks()
  const result = await load(url, headers, duration)
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

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, left: number) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)).join("  ").trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

const report = (rows: ReadonlyArray<Row>, routes: ReadonlyArray<Route>, chatMessages: number, messages: number) => {
  const ms = (n: number) => `${n} ms`
  const results = table(
    ["target", "route", "req/s", "p50", "p99", "non-2xx", "errors", "others"],
    rows.map((r) => [
      r.target,
      r.route,
      Math.round(r.rps).toLocaleString("en-US"),
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
    `\n${connections} connections, ${duration} s per run after a ${warmup} s warm-up; ` +
      `${messages.toLocaleString("en-US")} messages, the queried chat holds ` +
      `${chatMessages.toLocaleString("en-US")}.\n` +
      `others: cores kept busy by other processes on this machine during the run (0 = quiet).\n\n` +
      `${results}\n\n${ratios}\n\n`
  )
}

let cleaning: Promise<void> | undefined

const cleanup = (): Promise<void> =>
  cleaning ??= Promise.all(children.map(stop)).then(() => {
    if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true })
    tempDir = undefined
  })

const main = async () => {
  tempDir = mkdtempSync(join(tmpdir(), "botrelay-bench-"))
  const filename = join(tempDir, "botrelay.db")

  const seeding = performance.now()
  const seeded = await seed(filename)
  process.stderr.write(
    `seeded ${seeded.bots} bots and ${seeded.messages} messages in ` +
      `${((performance.now() - seeding) / 1000).toFixed(1)} s; bot ${seeded.botId} chat ${seeded.chatId} holds ` +
      `${seeded.chatMessages}\n`
  )

  const adminKey = `brk_${randomBytes(32).toString("base64url")}`
  const headers = { authorization: `Bearer ${adminKey}` }

  const botrelayPort = await freePort()
  const profile = cpuProf === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(cpuProf)}`]
  const botrelay = start("botrelay", [...profile, serverBin], {
    BOTRELAY_DATABASE: filename,
    BOTRELAY_PORT: String(botrelayPort),
    BOTRELAY_HOST: "127.0.0.1",
    BOTRELAY_ADMIN_KEY: adminKey,
    BOTRELAY_TELEGRAM_API: "http://127.0.0.1:9",
    BOTRELAY_LOG_LEVEL: "warn"
  }, root)
  const botrelayUrl = `http://127.0.0.1:${botrelayPort}`
  await waitHealthy(botrelay, botrelayUrl)

  const barePort = await freePort()
  const bare = start("bare", [bareBin], {
    BARE_DATABASE: filename,
    BARE_PORT: String(barePort),
    BARE_HOST: "127.0.0.1"
  }, root)
  const bareUrl = `http://127.0.0.1:${barePort}`
  await waitHealthy(bare, bareUrl)

  const targets: ReadonlyArray<Target> = [
    { name: "Botrelay", child: botrelay, baseUrl: botrelayUrl },
    { name: "bare", child: bare, baseUrl: bareUrl }
  ]
  const routes: ReadonlyArray<Route> = [
    { name: "GET /api/bots", path: "/api/bots" },
    { name: "GET /api/messages", path: `/api/messages?bot_id=${seeded.botId}&chat_id=${seeded.chatId}&limit=50` }
  ].filter((route) => only === undefined || route.name.includes(only))
  await checkSameAnswers(targets, routes, headers)

  const rows: Array<Row> = []
  for (const route of routes) {
    for (const target of targets) rows.push(await run(target, route, headers))
  }

  report(rows, routes, seeded.chatMessages, seeded.messages)
  process.stdout.write(`Botrelay server memory: ${memory(botrelay)}\nbare server memory: ${memory(bare)}\n`)

  const failed = rows.filter((r) => r.non2xx > 0 || r.errors > 0)
  if (failed.length > 0) {
    const failures = failed.map((r) => `${r.target} ${r.route}: ${r.non2xx} non-2xx, ${r.errors} errors`)
    throw new Error(`requests failed: ${failures.join("; ")}`)
  }
}

const interrupt = (signal: NodeJS.Signals) => {
  process.stderr.write(`\n${signal}: stopping\n`)
  interrupted = true
  current?.stop()
  void cleanup().finally(() => process.exit(130))
}
process.once("SIGINT", interrupt)
process.once("SIGTERM", interrupt)
process.once("exit", () => {
  for (const child of children) if (isRunning(child)) child.process.kill("SIGKILL")
  if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true })
})

try {
  await main()
} catch (e) {
  process.stderr.write(`\nbench failed: ${e instanceof Error ? e.message : String(e)}\n`)
  process.exitCode = 1
} finally {
  await cleanup()
}
if (cpuProf !== undefined) process.stderr.write(`CPU profile of the Botrelay server written to ${resolve(cpuProf)}\n`)
