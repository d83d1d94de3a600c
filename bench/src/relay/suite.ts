/**
 * The relay suite: Botrelay against the relay a bot developer would write by hand (peer.ts), side by side on
 * the same workload, all on 127.0.0.1: FakeTelegram and the backend in this process, the peer under test a
 * child process (the Botrelay server on a fresh SQLite file, as the pipeline suite runs it, or the relay).
 *
 * For each bot count and each peer, on a fresh FakeTelegram, backend and peer:
 * - idle RSS: VmRSS 2 s after every bot's first long poll reached FakeTelegram, before any load;
 * - throughput: all the updates queued in FakeTelegram at once, spread evenly over the bots; updates / time
 *   from the first being queued to the last reaching the backend;
 * - CPU per 1,000 updates: the peer's user + system CPU (/proc/<pid>/stat) over that saturated run;
 * - latency: then updates at a paced rate spread over the bots, p50 / p99 from entering FakeTelegram to
 *   reaching the backend;
 * - peak RSS: VmHWM at the end.
 * Every update must reach the backend exactly once (the relay drops after 5 tries; nothing fails here).
 *
 * Env: BENCH_RELAY_UPDATES (saturated run, default 30000), BENCH_RELAY_BOTS (bot counts, default "20,1"),
 * BENCH_RELAY_RATE (paced updates/s, default 100), BENCH_RELAY_PACED (s of paced load, default 10; 0 skips it),
 * BENCH_RELAY_RUNS (the whole comparison repeated, default 1; the table shows median and min–max),
 * BENCH_RELAY_ONLY (botrelay or relay: measure one peer, e.g. to profile Botrelay with BENCH_CPU_PROF).
 */
import { availableParallelism, cpus } from "node:os"
import { join } from "node:path"
import { FakeTelegram } from "@botrelay/testing"
import { addBot, type Botrelay, count, distDir, envInt, root, sleep, startBotrelay, table } from "../harness.js"
import {
  type Backend,
  envRates,
  every,
  inParallel,
  type LoadBot,
  loadBot,
  orderText,
  percentile,
  produce,
  startBackend,
  totals
} from "../pipeline.js"
import { type Child, isRunning, memoryMb, processTicks, start, stop, ticksPerSecond } from "../processes.js"
import * as Storage from "../storage.js"

const peers = ["botrelay", "relay"] as const
type Peer = (typeof peers)[number]

interface Settings {
  readonly updates: number
  readonly botCounts: ReadonlyArray<number>
  readonly rate: number
  readonly paced: number
  readonly runs: number
  readonly peers: ReadonlyArray<Peer>
}

/** One peer's figures at one bot count in one run. */
interface Measured {
  readonly throughput: number
  readonly p50: number
  readonly p99: number
  readonly peak: number
  readonly idle: number
  /** CPU ms per 1,000 updates of the saturated run. */
  readonly cpu: number
}

const names: Record<Peer, string> = { botrelay: "Botrelay", relay: "relay" }

/** Starts the peer on FakeTelegram with the bots forwarding to the backend; resolves once it runs. */
const startPeer = async (
  peer: Peer,
  fake: FakeTelegram.FakeTelegram,
  bots: ReadonlyArray<LoadBot>,
  backend: Backend
): Promise<{ readonly child: Child; readonly dispose: () => Promise<void> }> => {
  if (peer === "relay") {
    const child = start("relay", [join(distDir, "relay/peer.js")], {
      RELAY_API_ROOT: fake.apiRoot,
      RELAY_BOTS: JSON.stringify(bots.map((bot) => ({ token: bot.fake.token, backend: `${backend.url}/${bot.index}` })))
    }, root)
    return { child, dispose: () => stop(child) }
  }
  const botrelay = await startProxying(fake, bots, backend)
  return { child: botrelay.child, dispose: () => stop(botrelay.child).then(botrelay.dispose) }
}

/**
 * The Botrelay server on a fresh SQLite file with the bots registered as proxy bots forwarding to the backend
 * (no history); resolves once they are registered. `dispose` removes the file: stop the server first.
 */
export const startProxying = async (
  fake: FakeTelegram.FakeTelegram,
  bots: ReadonlyArray<LoadBot>,
  backend: Backend,
  options: {
    readonly name?: string
    /** Registrations in flight at once (default 1: one after the other, in order). */
    readonly lanes?: number
    /** Runs once the server answers, before any bot is registered. */
    readonly started?: (botrelay: Botrelay) => Promise<void>
  } = {}
): Promise<Botrelay & { readonly database: string; readonly dispose: () => Promise<void> }> => {
  const storage = Storage.sqlite()
  let botrelay: Botrelay | undefined
  try {
    const server = botrelay = await startBotrelay(storage.database, fake.apiRoot, options.name ?? "botrelay")
    await options.started?.(server)
    await inParallel(bots.length, options.lanes ?? 1, async (i) => {
      const bot = bots[i]!
      bot.id = (await addBot(server, {
        token: bot.fake.token,
        name: `Load bot ${bot.index}`,
        proxy_enabled: true,
        backend_url: `${backend.url}/${bot.index}`,
        manage_enabled: false
      })).id
    })
    return { ...server, database: storage.database, dispose: storage.dispose }
  } catch (e) {
    if (botrelay !== undefined) await stop(botrelay.child)
    await storage.dispose()
    throw e
  }
}

/** Waits until every created update reached the backend; throws after 15 s without progress or if the peer exits. */
const drained = async (bots: ReadonlyArray<LoadBot>, child: Child) => {
  let last = -1
  let progressAt = performance.now()
  while (true) {
    const { arrived, created } = totals(bots)
    if (arrived >= created) return
    if (!isRunning(child)) throw new Error(`${child.name} exited during the run:\n${child.output}`)
    const now = performance.now()
    if (arrived > last) {
      last = arrived
      progressAt = now
    } else if (now - progressAt > 15_000) {
      throw new Error(`${child.name}: ${count(created - arrived)} updates had not reached the backend after 15 s without progress`)
    }
    await sleep(5)
  }
}

/** Measures one peer at one bot count on a fresh FakeTelegram and backend. */
const measurePeer = async (peer: Peer, botCount: number, settings: Settings): Promise<Measured> => {
  const label = `relay suite, ${names[peer]}, ${botCount} bot${botCount === 1 ? "" : "s"}`
  const fake = await FakeTelegram.start()
  const bots: Array<LoadBot> = []
  let backend: Backend | undefined
  let running: { readonly child: Child; readonly dispose: () => Promise<void> } | undefined
  try {
    for (let index = 0; index < botCount; index++) bots.push(loadBot(fake, index))
    backend = await startBackend(bots)
    running = await startPeer(peer, fake, bots, backend)
    const { child } = running
    await Promise.all(bots.map((bot) => fake.waitForPoll(bot.fake.id, "30 seconds")))
    await sleep(2_000)
    const idle = memoryMb(child, "VmRSS")

    process.stderr.write(`${label}: idle ${idle.toFixed(1)} MB; ${count(settings.updates)} updates queued at once\n`)
    const ticks = processTicks(child.process.pid)
    const calls = fake.calls.length
    const benchCpu = process.cpuUsage()
    const started = performance.now()
    for (let i = 0; i < settings.updates; i++) produce(fake, bots[i % botCount]!, orderText)
    await drained(bots, child)
    const cpuTicks = processTicks(child.process.pid) - ticks
    const ownCpu = process.cpuUsage(benchCpu)
    let last = started
    for (const bot of bots) for (const at of bot.arrived.values()) last = Math.max(last, at)
    const throughput = settings.updates / ((last - started) / 1000)
    const polls = fake.calls.slice(calls).filter((call) => call.method === "getUpdates").length
    process.stderr.write(
      `${label}: ${count(polls)} getUpdates answered (${(settings.updates / polls).toFixed(1)} updates each); ` +
        `FakeTelegram and the backend (this process) used ` +
        `${((ownCpu.user + ownCpu.system) / 1000 / (settings.updates / 1000)).toFixed(0)} ms of CPU per 1,000 updates\n`
    )

    const latencies: Array<number> = []
    if (settings.paced > 0) {
      process.stderr.write(`${label}: ${count(throughput)}/s; paced at ${count(settings.rate)}/s for ${settings.paced} s\n`)
      const pacedFrom = performance.now()
      let produced = 0
      const pacer = every(() => {
        const due = Math.floor((performance.now() - pacedFrom) / 1000 * settings.rate) - produced
        for (let i = 0; i < due; i++) produce(fake, bots[produced++ % botCount]!, orderText)
      })
      await sleep(settings.paced * 1000)
      pacer.stop()
      pacer.check()
      await drained(bots, child)
      for (const bot of bots) {
        for (const [id, at] of bot.created) {
          if (at >= pacedFrom) latencies.push(bot.arrived.get(id)! - at)
        }
      }
    }
    const peak = memoryMb(child, "VmHWM")
    const repeats = bots.reduce((sum, bot) => sum + bot.repeats.size, 0)
    const unexpected = backend.unexpected()
    if (repeats > 0 || unexpected > 0) {
      throw new Error(`${label}: ${repeats} updates reached the backend more than once, ${unexpected} unknown requests`)
    }
    const sorted = Float64Array.from(latencies).sort()
    return {
      throughput,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      peak,
      idle,
      cpu: cpuTicks / ticksPerSecond * 1000 / (settings.updates / 1000)
    }
  } finally {
    await running?.dispose()
    await backend?.close()
    await fake.close()
  }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The median, and the min–max when there is more than one value. */
const spread = (values: ReadonlyArray<number>, format: (n: number) => string) => {
  if (values.some(Number.isNaN)) return "-"
  const text = format(median(values))
  return values.length < 2 ? text : `${text} (${format(Math.min(...values))}–${format(Math.max(...values))})`
}

const figures: ReadonlyArray<{
  readonly name: string
  readonly of: (m: Measured) => number
  readonly format: (n: number) => string
}> = [
  { name: "throughput, updates/s (saturated)", of: (m) => m.throughput, format: count },
  { name: "latency p50, ms (paced)", of: (m) => m.p50, format: (n) => n.toFixed(1) },
  { name: "latency p99, ms (paced)", of: (m) => m.p99, format: (n) => n.toFixed(1) },
  { name: "peak RSS, MB (VmHWM)", of: (m) => m.peak, format: (n) => n.toFixed(0) },
  { name: "idle RSS, MB (bots polling)", of: (m) => m.idle, format: (n) => n.toFixed(0) },
  { name: "CPU per 1,000 updates, ms", of: (m) => m.cpu, format: (n) => n.toFixed(0) }
]

const settingsFromEnv = (): Settings => {
  const only = process.env["BENCH_RELAY_ONLY"] ?? ""
  if (only !== "" && only !== "botrelay" && only !== "relay") {
    throw new Error(`BENCH_RELAY_ONLY must be botrelay or relay, got "${only}"`)
  }
  return {
    updates: envInt("BENCH_RELAY_UPDATES", 30_000),
    botCounts: envRates("BENCH_RELAY_BOTS", [20, 1]),
    rate: envInt("BENCH_RELAY_RATE", 100),
    paced: envInt("BENCH_RELAY_PACED", 10, true),
    runs: envInt("BENCH_RELAY_RUNS", 1),
    peers: only === "" ? peers : [only]
  }
}

/** Runs the comparison BENCH_RELAY_RUNS times and prints the side-by-side table. */
export const runRelay = async (): Promise<void> => {
  const settings = settingsFromEnv()
  const results = new Map<string, Array<Measured>>()
  const key = (peer: Peer, bots: number) => `${peer}/${bots}`
  for (let run = 0; run < settings.runs; run++) {
    for (const bots of settings.botCounts) {
      // alternate which peer goes first, so neither always runs on a machine the other just warmed
      const order = run % 2 === 0 ? settings.peers : [...settings.peers].reverse()
      for (const peer of order) {
        process.stderr.write(`relay suite: run ${run + 1} of ${settings.runs}, ${names[peer]}, ${bots} bots\n`)
        const measured = await measurePeer(peer, bots, settings)
        results.set(key(peer, bots), [...results.get(key(peer, bots)) ?? [], measured])
      }
    }
  }

  const rows: Array<Array<string>> = []
  for (const bots of settings.botCounts) {
    const ofBotrelay = results.get(key("botrelay", bots)) ?? []
    const ofRelay = results.get(key("relay", bots)) ?? []
    for (const figure of figures) {
      if (settings.paced === 0 && figure.name.includes("paced")) continue
      const a = ofBotrelay.map(figure.of)
      const b = ofRelay.map(figure.of)
      const ratios = a.length === b.length && a.length > 0 ? a.map((x, i) => x / b[i]!) : []
      rows.push([
        figure.name,
        count(bots),
        a.length === 0 ? "-" : spread(a, figure.format),
        b.length === 0 ? "-" : spread(b, figure.format),
        ratios.length === 0 ? "-" : spread(ratios, (n) => `${n.toFixed(2)}×`)
      ])
    }
  }
  process.stdout.write(
    `\nRelay: Botrelay (server process on SQLite, proxy bots) against a hand-written relay (one grammY Bot per token,\n` +
      `node:http keep-alive POSTs in order per bot, 5 tries then drop, nothing stored), each a process of its own,\n` +
      `on the same FakeTelegram and backend on 127.0.0.1.\n` +
      `throughput: ${count(settings.updates)} updates queued at once over the bots, until the last reached the backend.\n` +
      (settings.paced > 0
        ? `latency: ${count(settings.rate)} updates/s for ${settings.paced} s over the bots, entering FakeTelegram to reaching the backend.\n`
        : "") +
      `idle RSS: 2 s after every bot polled, before load; peak RSS: VmHWM at the end; CPU: user + system of the\n` +
      `process over the saturated run. ratio: Botrelay ÷ relay, per run. ` +
      `${settings.runs} run${settings.runs === 1 ? "" : "s"}` +
      (settings.runs > 1 ? `: median (min–max)` : "") +
      `. Machine: ${availableParallelism()} cores, ${cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version}.\n\n` +
      `${table(["figure", "bots", "Botrelay", "relay", "ratio"], rows, 1)}\n`
  )
}
