/**
 * The idle suite (issue 21, items 3 and 4), all on 127.0.0.1: FakeTelegram and the backend in this process (the
 * pipeline suite's), the Botrelay server a child process on a fresh SQLite file with proxy bots (no history),
 * started as the relay suite starts it.
 *
 * Lone updates (item 3: an update that arrives alone is forwarded within 2 ms of its commit): with 1 bot, then
 * with 20, every bot long-polling, N updates one at a time, round-robin over the bots, each queued in
 * FakeTelegram only once the previous one reached the backend and a gap passed, so nothing else is waiting.
 * Prints p50 / p99 / max from entering FakeTelegram to reaching the backend, and from Botrelay's commit to
 * reaching the backend: the inbox's `received_at` (wall clock, ms, taken just before the commit), read from the
 * SQLite file once the server stopped, against the arrival on this process's clock.
 *
 * Many idle bots (item 4: 10,000 idle polling bots in ≤ 500 MB RSS and ≤ 5 % of a core): that many proxy bots
 * registered through `POST /api/bots/add` (several in flight; timed), until each one's first long poll is held
 * by FakeTelegram (which holds a getUpdates for its `timeout`, the 50 s Botrelay asks, and any number at once),
 * then a settling time (by default 120 s: every bot's first poll answered and asked again, and V8's collections after
 * the registrations done, so the window shows bots idle a while, not the aftermath of registering), then a window with no updates: VmRSS at its end, VmHWM, CPU of one core (user + system ticks / time), the open
 * file descriptors, the bots whose poll FakeTelegram holds at the end and the getUpdates it answered meanwhile.
 * It fails, rather than waits, when the server exits, when registering stalls (each call has 30 s), when no
 * new bot starts polling for 30 s, or when not every bot polls at the end (after printing the figures).
 *
 * Env: BENCH_IDLE_UPDATES (lone updates per bot count, default 200; 0 skips that part), BENCH_IDLE_GAP (ms after
 * each arrival before the next update, default 20), BENCH_IDLE_LONE_BOTS (bot counts, default "1,20"),
 * BENCH_IDLE_BOTS (idle bots, default 10000; 0 skips that part; the pipeline suite's idle run reads it too),
 * BENCH_IDLE_SECONDS (the idle window, default 100: two poll rounds of every bot), BENCH_IDLE_SETTLE (s from every
 * bot polling to the window, default 120), BENCH_IDLE_LANES (registrations in flight, default 8).
 */
import { readdirSync, readFileSync } from "node:fs"
import { availableParallelism, cpus } from "node:os"
import Database from "better-sqlite3"
import { FakeTelegram } from "@botrelay/testing"
import { type Botrelay, count, cpuProf, envInt, sleep, table } from "./harness.js"
import {
  type Backend,
  envRates,
  type LoadBot,
  loadBot,
  mb,
  ms,
  orderText,
  percentile,
  produce,
  startBackend
} from "./pipeline.js"
import { type Child, isRunning, memoryMb, processTicks, stop, stopWithin, ticksPerSecond } from "./processes.js"
import { startProxying } from "./relay/suite.js"

interface Settings {
  readonly updates: number
  readonly gap: number
  readonly loneBots: ReadonlyArray<number>
  readonly bots: number
  readonly seconds: number
  readonly settle: number
  readonly lanes: number
}

/** p50 / p99 / max of some durations, ms. */
interface Spread {
  readonly n: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

interface Lone {
  readonly bots: number
  /** Entering FakeTelegram → reaching the backend. */
  readonly end: Spread
  /** `received_at` (just before the commit) → reaching the backend. */
  readonly commit: Spread
  /** This process's clock (`performance.timeOrigin + performance.now()`) minus `Date.now()` at the end, ms. */
  readonly skew: number
  /** The server's CPU (user + system) over the run, per update, ms. */
  readonly cpu: number
}

interface Many {
  readonly bots: number
  readonly lanes: number
  /** VmRSS once the server answered, before any bot. */
  readonly empty: number
  readonly registered: number
  /** From the first registration until every bot's first poll was held, ms. */
  readonly polling: number
  /** From every bot polling to the window, s. */
  readonly settle: number
  readonly seconds: number
  /** VmRSS as the window opened. */
  readonly opening: number
  readonly rss: number
  readonly peak: number
  readonly cores: number
  readonly benchCores: number
  readonly fds: number
  readonly threads: number
  readonly held: number
  readonly polls: number
  readonly failedCalls: number
  readonly unexpected: number
  /** From SIGTERM until the server exited, ms. */
  readonly stopped: number
  /** Whether it had not exited a minute after SIGTERM and was killed. */
  readonly killed: boolean
}

const spreadOf = (values: ReadonlyArray<number>): Spread => {
  const sorted = Float64Array.from(values).sort()
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!
  }
}

const alive = (child: Child) => {
  if (!isRunning(child)) throw new Error(`${child.name} exited during the run:\n${child.output}`)
}

/** Resolves once the bot's latest update reached the backend; throws after 10 s or if the server exits. */
const arrived = async (bot: LoadBot, child: Child) => {
  const since = performance.now()
  while (bot.arrived.size < bot.created.size) {
    alive(child)
    if (performance.now() - since > 10_000) {
      throw new Error(`a lone update of bot ${bot.index} had not reached the backend after 10 s`)
    }
    await sleep(1)
  }
}

/** The inbox's `received_at` of every update, by Botrelay bot id and update_id, epoch ms. */
const receivedAt = (database: string): Map<string, number> => {
  const db = new Database(database, { readonly: true, fileMustExist: true })
  try {
    const rows = db.prepare("SELECT bot_id, update_id, received_at FROM botrelay_inbox").all() as ReadonlyArray<{
      readonly bot_id: number
      readonly update_id: number
      readonly received_at: string
    }>
    return new Map(rows.map((row) => [`${row.bot_id}/${row.update_id}`, Date.parse(row.received_at)]))
  } finally {
    db.close()
  }
}

/**
 * This process's clock (`performance.timeOrigin + performance.now()`, which the arrivals are converted with) minus
 * `Date.now()`, ms: read the moment Date.now() turns to the next millisecond, so its flooring does not count.
 */
const clockSkew = () => {
  const from = Date.now()
  let now = Date.now()
  while (now === from) now = Date.now()
  return performance.timeOrigin + performance.now() - now
}

/** Lone updates through `botCount` polling proxy bots on a fresh FakeTelegram, backend and server. */
const measureLone = async (botCount: number, settings: Settings): Promise<Lone> => {
  const label = `idle suite, lone updates, ${botCount} bot${botCount === 1 ? "" : "s"}`
  const fake = await FakeTelegram.start()
  const bots = Array.from({ length: botCount }, (_, index) => loadBot(fake, index))
  let backend: Backend | undefined
  let botrelay: Awaited<ReturnType<typeof startProxying>> | undefined
  try {
    backend = await startBackend(bots)
    botrelay = await startProxying(fake, bots, backend, { name: "botrelay-idle" })
    const { child } = botrelay
    await Promise.all(bots.map((bot) => fake.waitForPoll(bot.fake.id, "30 seconds")))
    await sleep(1_000)
    process.stderr.write(`${label}: ${count(settings.updates)} updates one at a time, ${settings.gap} ms apart\n`)
    const ticks = processTicks(child.process.pid)
    for (let i = 0; i < settings.updates; i++) {
      const bot = bots[i % botCount]!
      produce(fake, bot, orderText)
      await arrived(bot, child)
      await sleep(settings.gap)
    }
    const cpu = (processTicks(child.process.pid) - ticks) / ticksPerSecond * 1000 / settings.updates
    const skew = clockSkew()
    const repeats = bots.reduce((sum, bot) => sum + bot.repeats.size, 0)
    if (repeats > 0 || backend.unexpected() > 0) {
      throw new Error(`${label}: ${repeats} updates reached the backend more than once, ${backend.unexpected()} unknown requests`)
    }
    await stop(child)
    const committed = receivedAt(botrelay.database)
    const end: Array<number> = []
    const commit: Array<number> = []
    for (const bot of bots) {
      for (const [id, at] of bot.created) {
        const reached = bot.arrived.get(id)!
        end.push(reached - at)
        const received = committed.get(`${bot.id}/${id}`)
        if (received === undefined) throw new Error(`${label}: update ${id} of bot ${bot.index} is not in the inbox`)
        commit.push(performance.timeOrigin + reached - received)
      }
    }
    return { bots: botCount, end: spreadOf(end), commit: spreadOf(commit), skew, cpu }
  } finally {
    if (botrelay !== undefined) await stop(botrelay.child).then(botrelay.dispose)
    await backend?.close()
    await fake.close()
  }
}

/** Open file descriptors and threads of a running process. */
const handles = (pid: number | undefined) => {
  if (pid === undefined) return { fds: Number.NaN, threads: Number.NaN }
  const threads = /^Threads:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]
  return { fds: readdirSync(`/proc/${pid}/fd`).length, threads: Number(threads ?? Number.NaN) }
}

/**
 * Resolves once FakeTelegram held a getUpdates of every bot; throws when the server exits or when no bot started
 * polling for `stall` s.
 */
const allPolling = async (fake: FakeTelegram.FakeTelegram, bots: ReadonlyArray<LoadBot>, child: Child, stall = 30) => {
  let polling = 0
  for (const bot of bots) {
    // FakeTelegram rejects the waits still open when it closes; the loop below reports what is missing
    fake.waitForPoll(bot.fake.id, "1 hour").then(() => polling++, () => undefined)
  }
  let last = -1
  let progressAt = performance.now()
  let reportedAt = progressAt
  while (polling < bots.length) {
    alive(child)
    const now = performance.now()
    if (polling > last) {
      last = polling
      progressAt = now
    } else if (now - progressAt > stall * 1000) {
      throw new Error(`only ${count(polling)} of ${count(bots.length)} bots polling, none more for ${stall} s`)
    }
    if (now - reportedAt > 5_000) {
      reportedAt = now
      process.stderr.write(`idle suite: ${count(polling)} of ${count(bots.length)} bots polling\n`)
    }
    await sleep(100)
  }
}

/** Bots whose getUpdates FakeTelegram holds now or within 1 s (one answered at its timeout is asked again at once). */
const heldPolls = async (fake: FakeTelegram.FakeTelegram, bots: ReadonlyArray<LoadBot>) =>
  (await Promise.all(bots.map((bot) => fake.waitForPoll(bot.fake.id, "1 second").then(() => 1, () => 0))))
    .reduce<number>((a, b) => a + b, 0)

/** `settings.bots` idle polling proxy bots: registration, memory and CPU. */
const measureMany = async (settings: Settings): Promise<Many> => {
  const label = `idle suite, ${count(settings.bots)} idle bots`
  const fake = await FakeTelegram.start()
  const bots = Array.from({ length: settings.bots }, (_, index) => loadBot(fake, index))
  let backend: Backend | undefined
  let botrelay: Awaited<ReturnType<typeof startProxying>> | undefined
  let empty = Number.NaN
  let started = 0
  try {
    backend = await startBackend(bots)
    botrelay = await startProxying(fake, bots, backend, {
      name: "botrelay-idle",
      lanes: settings.lanes,
      started: async (server: Botrelay) => {
        await sleep(1_000)
        empty = memoryMb(server.child, "VmRSS")
        process.stderr.write(`${label}: registering, ${settings.lanes} at a time\n`)
        started = performance.now()
      }
    })
    const { child } = botrelay
    const registered = performance.now() - started
    process.stderr.write(`${label}: registered in ${(registered / 1000).toFixed(1)} s\n`)
    await allPolling(fake, bots, child)
    const polling = performance.now() - started
    process.stderr.write(
      `${label}: all polling ${(polling / 1000).toFixed(1)} s after registration began; ` +
        `settling ${settings.settle} s, measuring ${settings.seconds} s\n`
    )
    await sleep(settings.settle * 1000)

    const opening = memoryMb(child, "VmRSS")
    const calls = fake.calls.length
    const serverTicks = processTicks(child.process.pid)
    const benchTicks = processTicks(process.pid)
    const windowStart = performance.now()
    const windowClock = process.hrtime.bigint() / 1000n
    for (let s = 0; s < settings.seconds; s++) {
      await sleep(1_000)
      alive(child)
    }
    const seconds = (performance.now() - windowStart) / 1000
    if (cpuProf !== undefined) {
      // the profile's timestamps are this monotonic clock's, in µs: they cut the window out of it
      process.stderr.write(`${label}: window ${windowClock} to ${process.hrtime.bigint() / 1000n} µs (monotonic)\n`)
    }
    const cores = (processTicks(child.process.pid) - serverTicks) / ticksPerSecond / seconds
    const benchCores = (processTicks(process.pid) - benchTicks) / ticksPerSecond / seconds
    const rss = memoryMb(child, "VmRSS")
    const peak = memoryMb(child, "VmHWM")
    const { fds, threads } = handles(child.process.pid)
    const answered = fake.calls.slice(calls)
    const held = await heldPolls(fake, bots)
    const polls = answered.filter((call) => call.method === "getUpdates").length
    const failedCalls = answered.filter((call) => call.status !== 200).length
    const unexpected = backend.unexpected()
    // a server that takes longer than 5 s to stop is killed, and writes no --cpu-prof: time it, with a minute
    const stopping = performance.now()
    const killed = await stopWithin(child, 60_000)
    const stopped = performance.now() - stopping
    return {
      bots: settings.bots,
      lanes: settings.lanes,
      empty,
      registered,
      polling,
      settle: settings.settle,
      seconds,
      opening,
      rss,
      peak,
      cores,
      benchCores,
      fds,
      threads,
      held,
      polls,
      failedCalls,
      unexpected,
      stopped,
      killed
    }
  } finally {
    if (botrelay !== undefined) await stop(botrelay.child).then(botrelay.dispose)
    await backend?.close()
    await fake.close()
  }
}

const reportLone = (settings: Settings, lone: ReadonlyArray<Lone>) => {
  const rows = lone.flatMap((run) => [
    [
      "entering FakeTelegram → backend",
      count(run.bots),
      count(run.end.n),
      ms(run.end.p50),
      ms(run.end.p99),
      ms(run.end.max),
      ms(run.cpu)
    ],
    ["commit (received_at) → backend", count(run.bots), count(run.commit.n), ms(run.commit.p50), ms(run.commit.p99), ms(run.commit.max), ""]
  ])
  const skew = Math.max(...lone.map((run) => Math.abs(run.skew)))
  process.stdout.write(
    `\nLone updates: Botrelay (server process on SQLite, proxy bots) with every bot long-polling FakeTelegram;\n` +
      `${count(settings.updates)} updates one at a time, round-robin over the bots, each queued only once the previous\n` +
      `reached the backend and ${settings.gap} ms passed. commit: the inbox's received_at, Date.now() taken just before\n` +
      `the commit, stored to the ms (floored), so each of those figures is 0–1 ms over; this process's clock differed\n` +
      `from Date.now() by at most ${skew.toFixed(2)} ms. server CPU per update: user + system time of the server over the\n` +
      `updates and their gaps (idle polling included), per update. Target (issue 21 item 3): forwarded within 2 ms of\n` +
      `the commit.\n` +
      `Machine: ${availableParallelism()} cores, ${cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version}.\n\n` +
      `${table(["from → to", "bots", "updates", "p50", "p99", "max", "server CPU per update"], rows, 1)}\n`
  )
}

const reportMany = (many: Many) => {
  const perBot = (many.rss - many.empty) * 1024 / many.bots
  const rows = [[
    count(many.bots),
    count(many.held),
    mb(many.empty),
    mb(many.opening),
    mb(many.rss),
    mb(many.peak),
    `${perBot.toFixed(1)} kB`,
    `${(many.cores * 100).toFixed(1)} %`,
    `${(many.benchCores * 100).toFixed(1)} %`,
    count(many.fds),
    count(many.threads),
    count(many.polls),
    count(many.failedCalls)
  ]]
  const verdict = (met: boolean) => met ? "met" : "missed"
  process.stdout.write(
    `\nMany idle bots: ${count(many.bots)} proxy bots registered through POST /api/bots/add, ${many.lanes} at a time, ` +
      `in ${(many.registered / 1000).toFixed(1)} s\n(${count(many.bots / (many.registered / 1000))}/s); ` +
      `every bot's first long poll held by FakeTelegram ${(many.polling / 1000).toFixed(1)} s after the first ` +
      `registration; ${many.settle} s later, ${many.seconds.toFixed(1)} s with no updates.\n` +
      `polling: bots whose getUpdates FakeTelegram holds at the end (or within 1 s). VmRSS at the end of the window (at 0 bots: once ` +
      `the server answered;\nat opening: as the window opened); per bot: (VmRSS - VmRSS at 0 bots) / bots. CPU: user + system ticks over the window, ` +
      `share of one core (bench: this process,\nFakeTelegram and backend). fds: the server's open file descriptors; ` +
      `getUpdates, failed: calls FakeTelegram answered in the window.\n` +
      `Stopped (SIGTERM) in ${(many.stopped / 1000).toFixed(1)} s` +
      `${many.killed ? ": had not exited after 60 s, killed" : ""}.\n\n` +
      `${
        table(
          [
            "bots",
            "polling",
            "VmRSS at 0",
            "at opening",
            "VmRSS",
            "VmHWM",
            "per bot",
            "CPU",
            "bench CPU",
            "fds",
            "threads",
            "getUpdates",
            "failed"
          ],
          rows,
          0
        )
      }\n\n` +
      `${
        table(["target (issue 21 item 4)", "goal", "measured", ""], [
          ["VmRSS", "<= 500 MB", mb(many.rss), verdict(many.rss <= 500)],
          ["CPU", "<= 5 % of a core", `${(many.cores * 100).toFixed(1)} %`, verdict(many.cores <= 0.05)]
        ], 1)
      }\n`
  )
}

const settingsFromEnv = (): Settings => ({
  updates: envInt("BENCH_IDLE_UPDATES", 200, true),
  gap: envInt("BENCH_IDLE_GAP", 20, true),
  loneBots: envRates("BENCH_IDLE_LONE_BOTS", [1, 20]),
  bots: envInt("BENCH_IDLE_BOTS", 10_000, true),
  seconds: envInt("BENCH_IDLE_SECONDS", 100),
  settle: envInt("BENCH_IDLE_SETTLE", 120, true),
  lanes: envInt("BENCH_IDLE_LANES", 8)
})

/** Lone updates at each bot count, then the many idle bots; prints each part's table. */
export const runIdle = async (): Promise<void> => {
  const settings = settingsFromEnv()
  if (settings.updates > 0 && settings.loneBots.length > 0) {
    const lone: Array<Lone> = []
    for (const bots of settings.loneBots) lone.push(await measureLone(bots, settings))
    reportLone(settings, lone)
  }
  if (settings.bots > 0) {
    const many = await measureMany(settings)
    reportMany(many)
    if (many.held < many.bots || many.unexpected > 0 || many.killed) {
      throw new Error(
        `${count(many.bots - many.held)} of ${count(many.bots)} bots were not polling at the end of the window, ` +
          `${count(many.unexpected)} unexpected deliveries${many.killed ? ", the server did not stop within 60 s" : ""}`
      )
    }
  }
}
