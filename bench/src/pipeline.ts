/**
 * The pipeline suite, all on 127.0.0.1: FakeTelegram in this process → the Botrelay server (a child
 * process) → a backend in this process that answers 200 at once.
 *
 * Load run: proxy bots whose FakeTelegram queues are kept topped up, so updates are created as fast as
 * Botrelay confirms them; then paced runs at fixed rates, for latency below saturation. Every update
 * Botrelay confirmed must reach the backend exactly once.
 * Idle run: many bots with history on, long-polling an idle FakeTelegram: memory and CPU.
 *
 * Env: BENCH_PIPELINE_BOTS (default 20; 0 skips the load run), BENCH_PIPELINE_QUEUE (updates kept
 * pending per bot, default 100), BENCH_PIPELINE_DURATION (s, default 20), BENCH_PIPELINE_WARMUP (s, default 3),
 * BENCH_PIPELINE_RATE (updates/s of the paced runs, comma-separated, default 2000; 0 skips them),
 * BENCH_PIPELINE_PACED_DURATION (s, default 10), BENCH_PIPELINE_DRAIN (s the backlog may take to reach
 * the backend, default 300), BENCH_IDLE_BOTS (default 1000; 0 skips the idle run),
 * BENCH_IDLE_DURATION (s, default 10; long polls last 30 s, so 40 covers one re-poll of every bot),
 * BENCH_PIPELINE_MANAGE (true: the load bots keep history, so every update also stores its message, chat and
 * sender; default false).
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { FakeTelegram } from "@botrelay/testing"
import {
  addBot,
  type Botrelay,
  count,
  envInt,
  makeTempDir,
  newAdminKey,
  removeTempDir,
  sleep,
  startBotrelay,
  table
} from "./harness.js"
import { isRunning, machineTicks, memoryMb, processTicks, stop, ticksPerSecond } from "./processes.js"
import * as Storage from "./storage.js"

type Fake = FakeTelegram.FakeTelegram

/** A bot of the load run, with what the bench knows of each of its updates. */
export interface LoadBot {
  readonly index: number
  /** Its id in Botrelay, once registered. */
  id: number
  readonly fake: FakeTelegram.FakeBot
  readonly user: { readonly id: number; readonly first_name: string }
  nextMessage: number
  /** When each update was created, by update_id (performance.now() ms). */
  readonly created: Map<number, number>
  /** When each update first reached the backend, by update_id. */
  readonly arrived: Map<number, number>
  /** Arrivals after the first, by update_id. */
  readonly repeats: Map<number, number>
}

export interface Backend {
  readonly url: string
  /** Requests that named no known bot or carried no update_id. */
  readonly unexpected: () => number
  readonly close: () => Promise<void>
}

/** One measured window of the load run. */
interface Window {
  readonly name: string
  readonly start: number
  readonly end: number
  /** Busy ticks of the Botrelay servers, all instances together. */
  readonly serverTicks: number
  readonly benchTicks: number
  /** Busy ticks of the database's own processes (PostgreSQL; 0 for SQLite, which runs inside the server). */
  readonly databaseTicks: number
  /** Busy ticks of every other process on the machine. */
  readonly otherTicks: number
  /** getUpdates calls FakeTelegram answered during the window. */
  readonly polls: number
  /** Updates created but not yet at the backend when the window closed. */
  readonly backlog: number
  /** How long the backlog took to reach the backend once creation stopped, ms. */
  drained: number
}

interface Figures {
  readonly created: number
  readonly delivered: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/** Integrity of the load run: every confirmed update reached the backend exactly once. */
export interface Integrity {
  readonly created: number
  readonly confirmed: number
  readonly received: number
  readonly missing: number
  readonly duplicated: number
  readonly unexpected: number
  readonly pending: number
}

interface Idle {
  readonly bots: number
  readonly running: number
  readonly held: number
  readonly errors: number
  /** VmRSS before any bot was registered. */
  readonly empty: number
  readonly rss: number
  readonly peak: number
  readonly cores: number
  readonly benchCores: number
  readonly polls: number
  readonly failedCalls: number
  readonly registered: number
  readonly allRunning: number
  readonly seconds: number
}

/** A new bot in FakeTelegram with a user who writes to it, as the `index`-th load bot (not registered yet). */
export const loadBot = (fake: Fake, index: number): LoadBot => ({
  index,
  id: 0,
  fake: fake.addBot(),
  user: fake.addUser({ first_name: `Customer ${index}` }),
  nextMessage: 1,
  created: new Map(),
  arrived: new Map(),
  repeats: new Map()
})

export const startBackend = async (bots: ReadonlyArray<LoadBot>): Promise<Backend> => {
  let unexpected = 0
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const at = performance.now()
      res.writeHead(200, { "content-length": 0 })
      res.end()
      const bot = bots[Number((req.url ?? "").slice(1))]
      let id: unknown
      try {
        id = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { readonly update_id?: unknown }).update_id
      } catch {
        id = undefined
      }
      if (bot === undefined || typeof id !== "number") unexpected++
      else if (bot.arrived.has(id)) bot.repeats.set(id, (bot.repeats.get(id) ?? 0) + 1)
      else bot.arrived.set(id, at)
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    unexpected: () => unexpected,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

export const listBots = async (botrelay: Botrelay) => {
  const response = await fetch(`${botrelay.url}/api/bots`, { headers: botrelay.headers })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`GET /api/bots: ${response.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as ReadonlyArray<{ readonly running: boolean; readonly last_error: string }>
}

/** Runs `task` for 0..n-1 with at most `width` at a time. */
export const inParallel = async (n: number, width: number, task: (i: number) => Promise<void>) => {
  let next = 0
  const lane = async () => {
    while (next < n) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(width, n) }, lane))
}

/** Calls `tick` every millisecond until the returned function is called; the first error is kept for `check`. */
export const every = (tick: () => void) => {
  let failure: unknown
  const timer = setInterval(() => {
    try {
      tick()
    } catch (e) {
      failure ??= e
    }
  }, 1)
  return {
    stop: () => clearInterval(timer),
    check: () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the check caught
      if (failure !== undefined) throw failure
    }
  }
}

const alive = (servers: ReadonlyArray<Botrelay>) => {
  for (const botrelay of servers) {
    if (!isRunning(botrelay.child)) throw new Error(`${botrelay.child.name} exited during the run:\n${botrelay.child.output}`)
  }
}

export const orderText = (_: LoadBot, n: number) => `Hello! Where is my order #${n}? It was due yesterday.`

/** A user's message to the bot, queued in FakeTelegram and stamped with its creation time. */
export const produce = (fake: Fake, bot: LoadBot, text: (bot: LoadBot, n: number) => string) => {
  const n = bot.nextMessage++
  const update = fake.enqueue(bot.fake.id, {
    message: {
      message_id: n,
      from: { id: bot.user.id, is_bot: false, first_name: bot.user.first_name, language_code: "en" },
      chat: { id: bot.user.id, first_name: bot.user.first_name, type: "private" },
      date: Math.floor(Date.now() / 1000),
      text: text(bot, n)
    }
  })
  if (update === undefined) throw new Error(`FakeTelegram refused an update for bot ${bot.fake.id}`)
  bot.created.set(update.update_id, performance.now())
}

export const totals = (bots: ReadonlyArray<LoadBot>) => {
  let created = 0
  let arrived = 0
  for (const bot of bots) {
    created += bot.created.size
    arrived += bot.arrived.size
  }
  return { created, arrived }
}

/** Waits until every created update reached the backend; gives up after `limit` s, or 15 s without progress. */
const drain = async (bots: ReadonlyArray<LoadBot>, servers: ReadonlyArray<Botrelay>, limit: number): Promise<number> => {
  const started = performance.now()
  let last = totals(bots).arrived
  let progressAt = started
  let reportedAt = started
  while (true) {
    const { created, arrived } = totals(bots)
    const now = performance.now()
    if (arrived >= created) return now - started
    alive(servers)
    if (arrived > last) {
      last = arrived
      progressAt = now
    }
    if (now - progressAt > 15_000 || now - started > limit * 1000) {
      throw new Error(
        `${count(created - arrived)} updates had not reached the backend ${((now - started) / 1000).toFixed(0)} s ` +
          `after creation stopped (${((now - progressAt) / 1000).toFixed(0)} s without progress)`
      )
    }
    if (now - reportedAt >= 5_000) {
      reportedAt = now
      process.stderr.write(`draining: ${count(created - arrived)} updates still on their way\n`)
    }
    await sleep(20)
  }
}

/** Opens a measured window now; `close` ends it. */
const measure = (
  name: string,
  fake: Fake,
  bots: ReadonlyArray<LoadBot>,
  servers: ReadonlyArray<Botrelay>,
  storage: Storage.Storage
) => {
  const ofServers = () => servers.reduce((sum, server) => sum + processTicks(server.child.process.pid), 0)
  const calls = fake.calls.length
  const start = performance.now()
  const serverTicks = ofServers()
  const benchTicks = processTicks(process.pid)
  const databaseTicks = storage.ticks()
  const allTicks = machineTicks()
  return (): Window => {
    const end = performance.now()
    const { created, arrived } = totals(bots)
    const server = ofServers() - serverTicks
    const bench = processTicks(process.pid) - benchTicks
    const database = storage.ticks() - databaseTicks
    return {
      name,
      start,
      end,
      serverTicks: server,
      benchTicks: bench,
      databaseTicks: database,
      otherTicks: Math.max(0, machineTicks() - allTicks - server - bench - database),
      polls: fake.calls.slice(calls).filter((call) => call.method === "getUpdates").length,
      backlog: created - arrived,
      drained: 0
    }
  }
}

export const percentile = (sorted: Float64Array, q: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

/** Rates over the window, and latency of the updates created in it (all of which have arrived by now). */
const figures = (bots: ReadonlyArray<LoadBot>, window: Window): Figures => {
  const seconds = (window.end - window.start) / 1000
  const latencies: Array<number> = []
  let created = 0
  let delivered = 0
  for (const bot of bots) {
    for (const [id, at] of bot.created) {
      if (at < window.start || at >= window.end) continue
      created++
      const arrived = bot.arrived.get(id)
      if (arrived !== undefined) latencies.push(arrived - at)
    }
    for (const at of bot.arrived.values()) if (at >= window.start && at < window.end) delivered++
  }
  const sorted = Float64Array.from(latencies).sort()
  return {
    created: created / seconds,
    delivered: delivered / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!
  }
}

const integrity = (fake: Fake, bots: ReadonlyArray<LoadBot>, backend: Backend): Integrity => {
  let created = 0
  let confirmed = 0
  let received = 0
  let missing = 0
  let duplicated = 0
  let unexpected = backend.unexpected()
  let pending = 0
  for (const bot of bots) {
    created += bot.created.size
    received += bot.arrived.size
    pending += fake.pendingUpdates(bot.fake.id).length
    for (const update of fake.updatesConfirmed(bot.fake.id)) {
      confirmed++
      if (!bot.arrived.has(update.update_id)) missing++
    }
    for (const [id, extra] of bot.repeats) if (bot.created.has(id)) duplicated += extra
    for (const id of bot.arrived.keys()) if (!bot.created.has(id)) unexpected++
  }
  return { created, confirmed, received, missing, duplicated, unexpected, pending }
}

export const ms = (n: number) =>
  Number.isNaN(n) ? "-" : `${n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString("en-US")} ms`

export const mb = (n: number) => Number.isNaN(n) ? "-" : `${n.toFixed(1)} MB`

export const cores = (ticks: number, seconds: number) => (ticks / ticksPerSecond / seconds).toFixed(2)

export const rate = (n: number) => `${count(n)}/s`

/** A measured window with its figures; `rate` for the paced runs. */
export interface Run {
  readonly window: Window
  readonly figures: Figures
  readonly rate?: number
}

export interface LoadSettings {
  readonly bots: number
  readonly queue: number
  readonly warmup: number
  readonly duration: number
  readonly rates: ReadonlyArray<number>
  readonly pacedDuration: number
  readonly drainLimit: number
  /** The load bots keep history (manage_enabled). */
  readonly manage: boolean
}

export interface LoadResult {
  readonly windows: ReadonlyArray<Run>
  readonly integrity: Integrity
  /** Where the data was kept. */
  readonly storage: Storage.Storage["kind"]
  readonly instances: number
  /** VmRSS of the servers at the end of the saturated run, all instances together. */
  readonly rss: number
  readonly peak: number
}

/** What a suite built on the load run changes in it. */
export interface LoadHooks {
  /** Prefix of progress lines. */
  readonly label?: string
  /** The text of a bot's n-th message. */
  readonly text?: (bot: LoadBot, n: number) => string
  /** Runs once the load bots are registered, before they are awaited polling. */
  readonly setup?: (botrelay: Botrelay, fake: Fake, bots: ReadonlyArray<LoadBot>) => Promise<void>
  /** Runs after the last drain, while the server and its database are still there. */
  readonly inspect?: (database: string, fake: Fake) => void
  /** Where the data is kept; a new SQLite file when not given. */
  readonly storage?: () => Promise<Storage.Storage>
  /** Servers sharing the database (each its own port and BOTRELAY_INSTANCE_ID); 1 when not given. */
  readonly instances?: number
}

/** A bot's lease as `GET /api/status` shows it. */
interface Status {
  readonly instances: ReadonlyArray<{ readonly id: string; readonly leases: number }>
  readonly bots: ReadonlyArray<{ readonly bot_id: number; readonly lease: { readonly instance_id: string } | null }>
}

const status = async (botrelay: Botrelay): Promise<Status> => {
  const response = await fetch(`${botrelay.url}/api/status`, { headers: botrelay.headers })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`GET /api/status: ${response.status} ${text.slice(0, 300)}`)
  return JSON.parse(text) as Status
}

/** How the error of a run with several instances on a build without leases begins. */
export const noLeases = "no leases"

/**
 * Waits until every bot has a lease and no instance owns more than its share plus one (DESIGN §12: within 30 s of
 * a join); returns the bots each instance owns. Throws after `seconds`.
 */
const balanced = async (botrelay: Botrelay, bots: number, instances: number, seconds: number) => {
  const most = Math.ceil(bots / instances) + 1
  const started = performance.now()
  const deadline = started + seconds * 1000
  while (true) {
    const now = await status(botrelay)
    const owners = new Map<string, number>()
    for (const bot of now.bots) {
      if (bot.lease !== null) owners.set(bot.lease.instance_id, (owners.get(bot.lease.instance_id) ?? 0) + 1)
    }
    const leased = now.bots.filter((bot) => bot.lease !== null).length
    const shares = [...owners.values()]
    if (leased === bots && owners.size === instances && shares.every((n) => n <= most)) return shares
    if (leased === 0 && performance.now() > started + 10_000) {
      throw new Error(
        `${noLeases}: GET /api/status showed no bot with a lease 10 s after registration, so this build does not ` +
          `share bots between instances and every instance would poll every bot`
      )
    }
    if (performance.now() > deadline) {
      throw new Error(
        `leases not balanced ${seconds} s after registration: ${leased} of ${bots} bots leased, ` +
          `owners ${JSON.stringify(Object.fromEntries(owners))} (at most ${most} each)`
      )
    }
    await sleep(250)
  }
}

/** The load run against a fresh server: saturated, then paced; each window drained before the next. */
export const runLoad = async (settings: LoadSettings, hooks: LoadHooks = {}): Promise<LoadResult> => {
  const label = hooks.label ?? "pipeline"
  const text = hooks.text ?? orderText
  const instances = hooks.instances ?? 1
  const fake = await FakeTelegram.start()
  const bots: Array<LoadBot> = []
  const servers: Array<Botrelay> = []
  let backend: Backend | undefined
  let storage: Storage.Storage | undefined
  try {
    storage = await (hooks.storage ?? (() => Promise.resolve(Storage.sqlite())))()
    for (let index = 0; index < settings.bots; index++) bots.push(loadBot(fake, index))
    backend = await startBackend(bots)
    const adminKey = newAdminKey()
    for (let i = 1; i <= instances; i++) {
      servers.push(
        await startBotrelay(storage.database, fake.apiRoot, instances === 1 ? "botrelay" : `botrelay-${i}`, {
          env: { ...storage.env, BOTRELAY_INSTANCE_ID: `bench-${i}` },
          adminKey
        })
      )
    }
    const botrelay = servers[0]!
    for (const bot of bots) {
      bot.id = (await addBot(botrelay, {
        token: bot.fake.token,
        name: `Load bot ${bot.index}`,
        proxy_enabled: true,
        backend_url: `${backend.url}/${bot.index}`,
        manage_enabled: settings.manage
      })).id
    }
    await hooks.setup?.(botrelay, fake, bots)
    if (instances > 1) {
      const shares = await balanced(botrelay, bots.length, instances, 45)
      process.stderr.write(`${label}: leases balanced over ${instances} instances: ${shares.join(", ")} bots\n`)
    }
    await Promise.all(bots.map((bot) => fake.waitForPoll(bot.fake.id, "30 seconds")))
    process.stderr.write(
      `${label}: ${bots.length} bots polling; ${settings.queue} updates kept pending per bot, ` +
        `warm-up ${settings.warmup} s, run ${settings.duration} s\n`
    )

    const on = storage
    const windows: Array<Run> = []

    const topUp = every(() => {
      for (const bot of bots) {
        const missing = settings.queue - fake.pendingUpdates(bot.fake.id).length
        for (let i = 0; i < missing; i++) produce(fake, bot, text)
      }
    })
    await sleep(settings.warmup * 1000)
    const closeSaturated = measure("saturated", fake, bots, servers, on)
    for (let s = 0; s < settings.duration; s++) {
      await sleep(1000)
      topUp.check()
      alive(servers)
    }
    const saturated = closeSaturated()
    topUp.stop()
    const rss = servers.reduce((sum, server) => sum + memoryMb(server.child, "VmRSS"), 0)
    process.stderr.write(`${label}: load stopped with ${count(saturated.backlog)} updates on their way; draining\n`)
    saturated.drained = await drain(bots, servers, settings.drainLimit)
    windows.push({ window: saturated, figures: figures(bots, saturated) })

    for (const target of settings.rates) {
      const pacedWarmup = Math.min(2, settings.pacedDuration / 5)
      process.stderr.write(
        `${label}: paced at ${count(target)} updates/s for ${settings.pacedDuration} s ` +
          `(first ${pacedWarmup} s not counted)\n`
      )
      const started = performance.now()
      let produced = 0
      const pacer = every(() => {
        const due = Math.floor((performance.now() - started) / 1000 * target) - produced
        for (let i = 0; i < due; i++) produce(fake, bots[produced++ % bots.length]!, text)
      })
      await sleep(pacedWarmup * 1000)
      const closePaced = measure(`paced at ${count(target)}/s`, fake, bots, servers, on)
      await sleep((settings.pacedDuration - pacedWarmup) * 1000)
      const paced = closePaced()
      pacer.stop()
      pacer.check()
      paced.drained = await drain(bots, servers, settings.drainLimit)
      windows.push({ window: paced, figures: figures(bots, paced), rate: target })
    }

    await sleep(200)
    alive(servers)
    hooks.inspect?.(on.database, fake)
    return {
      windows,
      integrity: integrity(fake, bots, backend),
      storage: on.kind,
      instances,
      rss,
      peak: servers.reduce((sum, server) => sum + memoryMb(server.child, "VmHWM"), 0)
    }
  } finally {
    await Promise.all(servers.map((server) => stop(server.child)))
    await backend?.close()
    await fake.close()
    await storage?.dispose()
  }
}

const runIdle = async (botCount: number, seconds: number): Promise<Idle> => {
  const fake = await FakeTelegram.start()
  const dir = makeTempDir()
  let botrelay: Botrelay | undefined
  try {
    botrelay = await startBotrelay(join(dir, "botrelay.db"), fake.apiRoot, "botrelay-idle")
    const server = botrelay
    await sleep(1_000)
    const empty = memoryMb(server.child, "VmRSS")
    const fakeIds: Array<number> = []
    const started = performance.now()
    await inParallel(botCount, 8, async (i) => {
      const bot = fake.addBot()
      fakeIds.push(bot.id)
      await addBot(server, { token: bot.token, name: `Idle bot ${i}`, manage_enabled: true })
    })
    const registered = performance.now() - started
    process.stderr.write(`idle: ${count(botCount)} bots registered in ${(registered / 1000).toFixed(1)} s\n`)

    const deadline = performance.now() + 120_000
    let running = 0
    while (true) {
      alive([server])
      running = (await listBots(server)).filter((bot) => bot.running).length
      if (running === botCount) break
      if (performance.now() > deadline) {
        throw new Error(`only ${running} of ${botCount} bots were running 120 s after registration`)
      }
      await sleep(250)
    }
    await Promise.all(
      fakeIds.map((id) => fake.waitForPoll(id, Math.max(1, deadline - performance.now())))
    ).catch((e: unknown) => {
      throw new Error(`FakeTelegram did not hold a poll of every bot: ${e instanceof Error ? e.message : String(e)}`)
    })
    const allRunning = performance.now() - started
    process.stderr.write(
      `idle: all running and polling ${(allRunning / 1000).toFixed(1)} s after registration began; ` +
        `settling 2 s, measuring ${seconds} s\n`
    )
    await sleep(2_000)

    const callsBefore = fake.calls.length
    const serverTicks = processTicks(server.child.process.pid)
    const benchTicks = processTicks(process.pid)
    const windowStart = performance.now()
    await sleep(seconds * 1000)
    const elapsed = (performance.now() - windowStart) / 1000
    const serverUsed = processTicks(server.child.process.pid) - serverTicks
    const benchUsed = processTicks(process.pid) - benchTicks
    const rss = memoryMb(server.child, "VmRSS")
    alive([server])
    const calls = fake.calls.slice(callsBefore)
    const held = (await Promise.all(
      fakeIds.map((id) => fake.waitForPoll(id, 1).then(() => 1, () => 0))
    )).reduce<number>((a, b) => a + b, 0)
    const listed = await listBots(server)
    return {
      bots: botCount,
      running: listed.filter((bot) => bot.running).length,
      held,
      errors: listed.filter((bot) => bot.last_error !== "").length,
      empty,
      rss,
      peak: memoryMb(server.child, "VmHWM"),
      cores: serverUsed / ticksPerSecond / elapsed,
      benchCores: benchUsed / ticksPerSecond / elapsed,
      polls: calls.filter((call) => call.method === "getUpdates").length,
      failedCalls: calls.filter((call) => call.status !== 200).length,
      registered,
      allRunning,
      seconds: elapsed
    }
  } finally {
    if (botrelay !== undefined) await stop(botrelay.child)
    await fake.close()
    removeTempDir(dir)
  }
}

/** Prints the load run's windows and integrity under `title`. */
export const reportLoad = (settings: LoadSettings, load: LoadResult, title = "Pipeline") => {
  const postgres = load.storage === "postgres"
  const results = table(
    [
      "run",
      "created",
      "delivered",
      "p50",
      "p99",
      "max",
      "backlog",
      "drained at",
      "per poll",
      "Botrelay cores",
      "bench cores",
      ...(postgres ? ["PostgreSQL cores"] : []),
      "others"
    ],
    load.windows.map(({ window, figures }) => {
      const seconds = (window.end - window.start) / 1000
      return [
        window.name,
        rate(figures.created),
        rate(figures.delivered),
        ms(figures.p50),
        ms(figures.p99),
        ms(figures.max),
        count(window.backlog),
        window.backlog === 0 ? "-" : rate(window.backlog / (window.drained / 1000)),
        window.polls === 0 ? "-" : (figures.created * seconds / window.polls).toFixed(1),
        cores(window.serverTicks, seconds),
        cores(window.benchTicks, seconds),
        ...(postgres ? [cores(window.databaseTicks, seconds)] : []),
        cores(window.otherTicks, seconds)
      ]
    }),
    1
  )
  const i = load.integrity
  const checks = table(
    ["created", "confirmed", "received", "missing", "duplicated", "unexpected", "still pending"],
    [[i.created, i.confirmed, i.received, i.missing, i.duplicated, i.unexpected, i.pending].map(count)],
    0
  )
  process.stdout.write(
    `\n${title}: ${settings.bots} proxy bots, FakeTelegram → Botrelay → backend, all on 127.0.0.1.\n` +
      `saturated: each bot's FakeTelegram queue topped up to ${settings.queue} updates, ` +
      `${settings.duration} s after a ${settings.warmup} s warm-up.\n` +
      (settings.rates.length > 0
        ? `paced: a fixed rate of updates spread over the bots for ${settings.pacedDuration} s, ` +
          `the first ${Math.min(2, settings.pacedDuration / 5)} s not counted.\n`
        : "") +
      `created, delivered: updates created in FakeTelegram / received by the backend per second of the window.\n` +
      `p50, p99, max: creation in FakeTelegram to arrival at the backend, over the updates created in the window.\n` +
      `backlog: updates created but not at the backend when the window closed; drained at: the rate it reached\n` +
      `the backend once creation stopped. per poll: updates created per getUpdates call Botrelay made.\n` +
      `cores: CPU of the Botrelay server${load.instances > 1 ? `s (${load.instances} instances together)` : ""} / ` +
      `of this process (FakeTelegram, backend, load) / ` +
      (postgres ? `of PostgreSQL (postmaster and its backends) / ` : "") +
      `of other processes\non this machine (0 = quiet) during the window; ` +
      `the machine has ${availableParallelism()} cores.\n\n` +
      `${results}\n\n${checks}\n\n` +
      `Botrelay server memory at the end of the saturated run${load.instances > 1 ? ` (${load.instances} instances together)` : ""}: ` +
      `VmRSS ${mb(load.rss)} (peak VmHWM ${mb(load.peak)})\n`
  )
}

const reportIdle = (idle: Idle) => {
  const results = table(
    [
      "bots",
      "running",
      "polls held",
      "last_error",
      "VmRSS at 0 bots",
      "VmRSS",
      "VmHWM",
      "Botrelay CPU",
      "bench CPU",
      "getUpdates",
      "failed calls"
    ],
    [[
      count(idle.bots),
      count(idle.running),
      count(idle.held),
      count(idle.errors),
      mb(idle.empty),
      mb(idle.rss),
      mb(idle.peak),
      `${(idle.cores * 100).toFixed(1)} %`,
      `${(idle.benchCores * 100).toFixed(1)} %`,
      count(idle.polls),
      count(idle.failedCalls)
    ]],
    0
  )
  process.stdout.write(
    `\nIdle: ${count(idle.bots)} bots with manage_enabled long-polling an idle FakeTelegram; registered in ` +
      `${(idle.registered / 1000).toFixed(1)} s, all running and polling after ` +
      `${(idle.allRunning / 1000).toFixed(1)} s; ` +
      `measured over ${idle.seconds.toFixed(1)} s.\n` +
      `polls held: bots with a getUpdates held open by FakeTelegram at the end; last_error: bots with one.\n` +
      `CPU: share of one core; getUpdates, failed calls: answered by FakeTelegram during the window` +
      (idle.polls === 0 ? ` (none: long polls last 30 s; BENCH_IDLE_DURATION=40 covers one re-poll).\n\n` : `.\n\n`) +
      `${results}\n`
  )
}

const reportTargets = (load: LoadResult | undefined, idle: Idle | undefined) => {
  const rows: Array<Array<string>> = []
  const verdict = (met: boolean) => met ? "met" : "missed"
  const saturated = load?.windows[0]?.figures
  const paced = load?.windows.filter((run) => run.rate !== undefined).sort((a, b) =>
    Number(b.rate === 2000) - Number(a.rate === 2000) || b.rate! - a.rate!
  )[0]
  if (saturated !== undefined) {
    rows.push([
      "throughput end to end (saturated)",
      ">= 2,000/s",
      rate(saturated.delivered),
      verdict(saturated.delivered >= 2000)
    ])
  }
  if (paced !== undefined) {
    rows.push([
      `p99 latency (paced at ${count(paced.rate!)}/s)`,
      "< 100 ms",
      ms(paced.figures.p99),
      verdict(paced.figures.p99 < 100 && paced.figures.delivered >= paced.rate! * 0.95)
    ])
  }
  if (idle !== undefined) {
    rows.push([`VmRSS with ${count(idle.bots)} idle polling bots`, "< 300 MB", mb(idle.rss), verdict(idle.rss < 300)])
  }
  if (rows.length > 0) {
    process.stdout.write(`\nTargets (figures only; the bench asserts nothing about speed):\n\n`)
    process.stdout.write(`${table(["target", "goal", "measured", ""], rows, 1)}\n\n`)
  }
}

/** Comma-separated rates (updates/s) from the environment; 0 or an empty list runs none. */
export const envRates = (name: string, fallback: ReadonlyArray<number>): ReadonlyArray<number> => {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === "") return fallback
  const rates = raw.split(",").map((part) => Number(part.trim()))
  if (rates.some((n) => !Number.isInteger(n) || n < 0)) {
    throw new Error(`${name} must be comma-separated non-negative integers, got "${raw}"`)
  }
  return rates.filter((n) => n > 0)
}

/** The load run's shape from the BENCH_PIPELINE_* settings, with `bots` load bots. */
export const loadSettings = (bots: number): LoadSettings => ({
  bots,
  queue: envInt("BENCH_PIPELINE_QUEUE", 100),
  warmup: envInt("BENCH_PIPELINE_WARMUP", 3),
  duration: envInt("BENCH_PIPELINE_DURATION", 20),
  rates: envRates("BENCH_PIPELINE_RATE", [2000]),
  pacedDuration: envInt("BENCH_PIPELINE_PACED_DURATION", 10),
  drainLimit: envInt("BENCH_PIPELINE_DRAIN", 300),
  manage: process.env["BENCH_PIPELINE_MANAGE"] === "true"
})

/** Throws when the load run lost or duplicated updates. */
export const checkIntegrity = ({ duplicated, missing, pending, unexpected }: Integrity): void => {
  if (missing > 0 || duplicated > 0 || unexpected > 0) {
    throw new Error(
      `updates lost or duplicated: ${missing} confirmed but never delivered, ${duplicated} delivered again, ` +
        `${unexpected} unknown deliveries (${pending} still pending in FakeTelegram)`
    )
  }
}

/** Runs the load run and the idle run and prints their tables; throws when updates were lost or duplicated. */
export const runPipeline = async (): Promise<void> => {
  const settings = loadSettings(envInt("BENCH_PIPELINE_BOTS", 20, true))
  const idleBots = envInt("BENCH_IDLE_BOTS", 1000, true)
  const idleSeconds = envInt("BENCH_IDLE_DURATION", 10)

  const load = settings.bots > 0 ? await runLoad(settings) : undefined
  if (load !== undefined) reportLoad(settings, load)
  let idle: Idle | undefined
  let idleFailure: unknown
  if (idleBots > 0) {
    try {
      idle = await runIdle(idleBots, idleSeconds)
      reportIdle(idle)
    } catch (e) {
      idleFailure = e
    }
  }
  reportTargets(load, idle)

  if (load !== undefined) checkIntegrity(load.integrity)
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the idle phase caught
  if (idleFailure !== undefined) throw idleFailure
}
