/**
 * `pnpm bench`: the standalone Botrelay server against a bare node:http + better-sqlite3 ceiling,
 * both on the same seeded SQLite file, loaded by autocannon from this process.
 *
 * Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 3), BENCH_CONNECTIONS (default 50),
 * BENCH_CPU_PROF (a folder: run the Botrelay server with `--cpu-prof` and write its profile there).
 */
import { spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
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

interface Child {
  readonly name: string
  readonly process: ChildProcess
  readonly exited: Promise<void>
  output: string
}

const children: Array<Child> = []
let tempDir: string | undefined

const freePort = (): Promise<number> =>
  new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() =>
        typeof address === "object" && address !== null
          ? resolvePort(address.port)
          : reject(new Error("no port"))
      )
    })
  })

const start = (name: string, args: ReadonlyArray<string>, env: Record<string, string>): Child => {
  const proc = spawn(process.execPath, [...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const child: Child = {
    name,
    process: proc,
    exited: new Promise((done) => proc.once("exit", () => done())),
    output: ""
  }
  const collect = (chunk: Buffer) => {
    const text = chunk.toString()
    child.output = (child.output + text).slice(-16_384)
    process.stderr.write(text.replace(/^(?=.)/gm, `[${name}] `))
  }
  proc.stdout?.on("data", collect)
  proc.stderr?.on("data", collect)
  children.push(child)
  return child
}

const isRunning = (child: Child) => child.process.exitCode === null && child.process.signalCode === null

const stop = async (child: Child): Promise<void> => {
  if (!isRunning(child)) return
  child.process.kill("SIGTERM")
  const timeout = new Promise<"timeout">((done) => setTimeout(() => done("timeout"), 10_000).unref())
  if (await Promise.race([child.exited.then(() => "exited" as const), timeout]) === "timeout") {
    child.process.kill("SIGKILL")
    await child.exited
  }
}

const waitHealthy = async (child: Child, baseUrl: string): Promise<void> => {
  const deadline = Date.now() + 20_000
  let last = "no answer"
  while (Date.now() < deadline) {
    if (!isRunning(child)) {
      throw new Error(`${child.name} exited (${child.process.exitCode ?? child.process.signalCode}):\n${child.output}`)
    }
    try {
      const response = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(1_000) })
      await response.arrayBuffer()
      if (response.status === 200) return
      last = `status ${response.status}`
    } catch (e) {
      last = String(e)
    }
    await new Promise((done) => setTimeout(done, 100))
  }
  throw new Error(`${child.name} did not answer GET /api/health with 200 within 20 s (${last}):\n${child.output}`)
}

const memory = (child: Child): string => {
  if (!isRunning(child) || child.process.pid === undefined) return "exited"
  const status = readFileSync(`/proc/${child.process.pid}/status`, "utf8")
  const field = (name: string) => status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1]
  const mb = (kb: string | undefined) => kb === undefined ? "?" : `${(Number(kb) / 1024).toFixed(1)} MB`
  return `VmRSS ${mb(field("VmRSS"))}, peak VmHWM ${mb(field("VmHWM"))}`
}

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
}

const load = (url: string, headers: Record<string, string>, seconds: number) =>
  autocannon({ url, connections, duration: seconds, headers })

const run = async (target: Target, route: Route, headers: Record<string, string>): Promise<Row> => {
  const url = `${target.baseUrl}${route.path}`
  process.stderr.write(`${target.name} ${route.name}: warm-up ${warmup} s, run ${duration} s\n`)
  await load(url, headers, warmup)
  const result = await load(url, headers, duration)
  if (!isRunning(target.child)) throw new Error(`${target.name} exited during the run:\n${target.child.output}`)
  return {
    target: target.name,
    route: route.name,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors
  }
}

const fetchText = async (url: string, headers: Record<string, string>) => {
  const response = await fetch(url, { headers })
  return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
}

/** Both targets must answer each route with the same status, content type and body, and refuse a bad key. */
const checkSameAnswers = async (targets: ReadonlyArray<Target>, routes: ReadonlyArray<Route>, headers: Record<string, string>) => {
  for (const route of routes) {
    const answers = await Promise.all(targets.map((t) => fetchText(`${t.baseUrl}${route.path}`, headers)))
    const [first, ...rest] = answers
    if (first === undefined) continue
    if (first.status !== 200) throw new Error(`${targets[0]!.name} ${route.name}: status ${first.status}: ${first.body}`)
    rest.forEach((answer, i) => {
      if (answer.status !== first.status || answer.type !== first.type || answer.body !== first.body) {
        throw new Error(
          `${targets[i + 1]!.name} answers ${route.name} differently from ${targets[0]!.name}:\n` +
            `${answer.status} ${answer.type} ${answer.body.slice(0, 600)}\nvs\n` +
            `${first.status} ${first.type} ${first.body.slice(0, 600)}`
        )
      }
    })
    const unauthorized = await Promise.all(
      targets.map((t) => fetchText(`${t.baseUrl}${route.path}`, { authorization: `Bearer brk_${"x".repeat(43)}` }))
    )
    unauthorized.forEach((answer, i) => {
      if (answer.status !== 401) throw new Error(`${targets[i]!.name} ${route.name} with a wrong key: ${answer.status}`)
    })
    process.stderr.write(`${route.name}: identical ${first.body.length}-byte answers\n`)
  }
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, right: ReadonlyArray<boolean>) => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((c, i) => right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)).join("  ").trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

const cleanup = async () => {
  await Promise.all(children.map(stop))
  if (tempDir !== undefined) {
    rmSync(tempDir, { recursive: true, force: true })
    tempDir = undefined
  }
}

const main = async () => {
  tempDir = mkdtempSync(join(tmpdir(), "botrelay-bench-"))
  const filename = join(tempDir, "botrelay.db")

  const seeding = performance.now()
  const seeded = await seed(filename)
  process.stderr.write(
    `seeded ${seeded.bots} bots and ${seeded.messages} messages in ${((performance.now() - seeding) / 1000).toFixed(1)} s;` +
      ` bot ${seeded.botId} chat ${seeded.chatId} holds ${seeded.chatMessages}\n`
  )

  const adminKey = `brk_${randomBytes(32).toString("base64url")}`
  const headers = { authorization: `Bearer ${adminKey}` }

  const botrelayPort = await freePort()
  const botrelay = start("botrelay", [...(cpuProf === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(cpuProf)}`]), serverBin], {
    BOTRELAY_DATABASE: filename,
    BOTRELAY_PORT: String(botrelayPort),
    BOTRELAY_HOST: "127.0.0.1",
    BOTRELAY_ADMIN_KEY: adminKey,
    BOTRELAY_TELEGRAM_API: "http://127.0.0.1:9",
    BOTRELAY_LOG_LEVEL: "warn"
  })
  const botrelayUrl = `http://127.0.0.1:${botrelayPort}`
  await waitHealthy(botrelay, botrelayUrl)

  const barePort = await freePort()
  const bare = start("bare", [bareBin], { BARE_DATABASE: filename, BARE_PORT: String(barePort), BARE_HOST: "127.0.0.1" })
  const bareUrl = `http://127.0.0.1:${barePort}`
  await waitHealthy(bare, bareUrl)

  const targets: ReadonlyArray<Target> = [
    { name: "Botrelay", child: botrelay, baseUrl: botrelayUrl },
    { name: "bare", child: bare, baseUrl: bareUrl }
  ]
  const routes: ReadonlyArray<Route> = [
    { name: "GET /api/bots", path: "/api/bots" },
    {
      name: "GET /api/messages",
      path: `/api/messages?bot_id=${seeded.botId}&chat_id=${seeded.chatId}&limit=50`
    }
  ]
  await checkSameAnswers(targets, routes, headers)

  const rows: Array<Row> = []
  for (const route of routes) {
    for (const target of targets) rows.push(await run(target, route, headers))
  }
  const rss = memory(botrelay)
  const bareRss = memory(bare)

  const ms = (n: number) => `${n} ms`
  process.stdout.write(
    `\n${connections} connections, ${duration} s per run after a ${warmup} s warm-up; ` +
      `${seeded.messages} messages, route chat holds ${seeded.chatMessages}\n\n`
  )
  process.stdout.write(
    table(
      ["target", "route", "req/s", "p50", "p99", "non-2xx", "errors"],
      rows.map((r) => [r.target, r.route, Math.round(r.rps).toLocaleString("en-US"), ms(r.p50), ms(r.p99), String(r.non2xx), String(r.errors)]),
      [false, false, true, true, true, true, true]
    ) + "\n\n"
  )
  process.stdout.write(
    table(
      ["route", "Botrelay / bare"],
      routes.map((route) => {
        const ours = rows.find((r) => r.route === route.name && r.target === "Botrelay")!
        const ceiling = rows.find((r) => r.route === route.name && r.target === "bare")!
        return [route.name, (ours.rps / ceiling.rps).toFixed(3)]
      }),
      [false, true]
    ) + "\n\n"
  )
  process.stdout.write(`Botrelay server memory: ${rss}\nbare server memory: ${bareRss}\n`)

  const failed = rows.filter((r) => r.non2xx > 0 || r.errors > 0)
  if (failed.length > 0) {
    throw new Error(
      `requests failed: ${failed.map((r) => `${r.target} ${r.route}: ${r.non2xx} non-2xx, ${r.errors} errors`).join("; ")}`
    )
  }
}

const interrupted = (signal: NodeJS.Signals) => {
  process.stderr.write(`\n${signal}: stopping\n`)
  void cleanup().finally(() => process.exit(130))
}
process.once("SIGINT", interrupted)
process.once("SIGTERM", interrupted)
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
