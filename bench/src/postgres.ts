/**
 * The postgres suite: Botrelay on a throwaway PostgreSQL (`PgCluster` of @botrelay/testing, with the settings it
 * starts every test cluster with; the suite prints them) against SQLite, on the same machine.
 *
 * 1. The pipeline suite's load run (FakeTelegram → Botrelay → a local backend, same bots, same load) on SQLite and
 *    on PostgreSQL, one instance each.
 * 2. The same on PostgreSQL with K server processes sharing the database (each its own port and
 *    BOTRELAY_INSTANCE_ID, the same BOTRELAY_SECRET_KEY and admin key; the bots registered once, through the first),
 *    measured once every bot has a lease and the leases are balanced. Runs only on a build whose servers share bots
 *    by leases (`GET /api/status`); without them every instance would poll every bot, and the run is skipped.
 * 3. The inbox suite's reads (chat list, a chat's messages, search for a common and a rare word…) over its seeded
 *    history (1,000,000 messages by default) on SQLite and on PostgreSQL, side by side.
 *
 * Env: BENCH_INSTANCES (instance counts of part 2, comma-separated, default "1,3"; 1 is part 1's PostgreSQL run),
 * BENCH_POSTGRES_PARTS (which parts run, comma-separated of pipeline, instances, inbox; default all), the pipeline
 * suite's BENCH_PIPELINE_* (bots, queue, durations, paced rates) and the inbox suite's BENCH_INBOX_* settings.
 */
import { availableParallelism, cpus } from "node:os"
import { count, envInt, table } from "./harness.js"
import { type InboxFigures, inboxOptions, latency, measureInbox } from "./inbox.js"
import { cores, type LoadResult, loadSettings, ms, noLeases, rate, reportLoad, runLoad } from "./pipeline.js"
import * as Storage from "./storage.js"

const parts = ["pipeline", "instances", "inbox"] as const
type Part = typeof parts[number]

const chosenParts = (): ReadonlySet<Part> => {
  const raw = process.env["BENCH_POSTGRES_PARTS"]
  if (raw === undefined || raw.trim() === "") return new Set(parts)
  const chosen = raw.split(",").map((part) => part.trim())
  const unknown = chosen.filter((part) => !(parts as ReadonlyArray<string>).includes(part))
  if (unknown.length > 0) throw new Error(`BENCH_POSTGRES_PARTS must list some of ${parts.join(", ")}; got "${raw}"`)
  return new Set(chosen as Array<Part>)
}

const instanceCounts = (): ReadonlyArray<number> => {
  const raw = process.env["BENCH_INSTANCES"] ?? "1,3"
  const counts = raw.split(",").map((part) => Number(part.trim()))
  if (counts.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) {
    throw new Error(`BENCH_INSTANCES must be comma-separated integers from 1 to 16, got "${raw}"`)
  }
  return [...new Set(counts)].sort((a, b) => a - b)
}

/** A load run's line in the summary. */
interface Line {
  readonly name: string
  readonly load: LoadResult
}

const summary = (lines: ReadonlyArray<Line>) => {
  const saturated = (load: LoadResult) => load.windows[0]!
  const paced = (load: LoadResult) => load.windows.find((run) => run.rate !== undefined)
  const rows = lines.map(({ load, name }) => {
    const window = saturated(load).window
    const seconds = (window.end - window.start) / 1000
    const slow = paced(load)
    return [
      name,
      rate(saturated(load).figures.delivered),
      slow === undefined ? "-" : `${ms(slow.figures.p50)} / ${ms(slow.figures.p99)}`,
      cores(window.serverTicks, seconds),
      load.storage === "postgres" ? cores(window.databaseTicks, seconds) : "-",
      cores(window.benchTicks, seconds),
      cores(window.otherTicks, seconds)
    ]
  })
  const pacedRate = lines.map(({ load }) => paced(load)?.rate).find((r) => r !== undefined)
  process.stdout.write(
    `\nPipeline summary (saturated window; machine: ${availableParallelism()} cores shared by everything below):\n\n` +
      table(
        [
          "storage",
          "delivered",
          pacedRate === undefined ? "paced p50 / p99" : `p50 / p99 at ${count(pacedRate)}/s`,
          "Botrelay cores",
          "PostgreSQL cores",
          "bench cores",
          "others"
        ],
        rows,
        1
      ) + "\n"
  )
}

const goals = (sqlite: LoadResult | undefined, one: LoadResult | undefined, many: Array<Line>) => {
  const delivered = (load: LoadResult) => load.windows[0]!.figures.delivered
  const rows: Array<Array<string>> = []
  if (sqlite !== undefined && one !== undefined) {
    const ratio = delivered(one) / delivered(sqlite)
    rows.push(["one PostgreSQL instance / SQLite", ">= 0.50", ratio.toFixed(2), ratio >= 0.5 ? "met" : "missed"])
  }
  for (const { load, name } of many) {
    if (one === undefined) break
    const ratio = delivered(load) / delivered(one)
    rows.push([`${name} / one instance`, load.instances === 3 ? ">= 1.50" : "", ratio.toFixed(2),
      load.instances === 3 ? ratio >= 1.5 ? "met" : "missed" : ""])
  }
  if (rows.length > 0) {
    process.stdout.write(
      `\nGoals of issue 18 (saturated throughput; figures only, the bench asserts nothing about speed):\n\n` +
        table(["ratio", "goal", "measured", ""], rows, 1) + "\n"
    )
  }
}

const mib = (bytes: number) => `${count(bytes / 1024 / 1024)} MiB`

const reportInbox = (
  messages: number,
  chats: number,
  requests: number,
  figures: ReadonlyArray<readonly [string, InboxFigures]>
) => {
  const [first] = figures
  if (first === undefined) return
  const rows = first[1].timings.map((timing, i) => [
    timing.name,
    ...figures.flatMap(([, f]) => [latency(f.timings[i]!.p50), latency(f.timings[i]!.p99)])
  ])
  rows.push([
    "SSE: FakeTelegram → event at each of the clients",
    ...figures.flatMap(([, f]) => [latency(f.sse.p50), latency(f.sse.p99)])
  ])
  process.stdout.write(
    `\nInbox reads: ${count(messages)} messages in ${count(chats)} chats over 5 bots (the inbox suite's data), one request ` +
      `at a time, ${requests} per route after 20 warm-up requests (GET /api/stats: 30); SSE: ` +
      `${first[1].sse.clients} clients on /api/events, ${first[1].sse.messages} incoming messages.\n` +
      figures.map(([kind, f]) =>
        `${kind}: seeded through the stores in ${f.seeded.seconds.toFixed(1)} s ` +
        `(${count(messages / f.seeded.seconds)} messages/s), ` +
        (kind === "SQLite" ? "search index filled in " : "VACUUM ANALYZE (as autovacuum would after a bulk load) ") +
        `${f.seeded.indexSeconds.toFixed(1)} s; database ${mib(f.bytes)}.\n`
      ).join("") + "\n" +
      table(["route", ...figures.flatMap(([kind]) => [`${kind} p50`, `${kind} p99`])], rows, 1) + "\n"
  )
}

/** Runs the suite's parts and prints their tables; throws when updates were lost or duplicated. */
export const runPostgres = async (): Promise<void> => {
  const chosen = chosenParts()
  const counts = instanceCounts()
  const cluster = await Storage.startCluster()
  const failures: Array<string> = []
  try {
    const cpu = cpus()[0]?.model ?? "?"
    process.stdout.write(
      `\nPostgreSQL: a throwaway cluster started by PgCluster (@botrelay/testing) with its defaults, the same as the ` +
        `tests use; nothing tuned here.\nIt listens on a unix socket; each server opens its pool ` +
        `(BOTRELAY_DATABASE_POOL, default 10). Settings:\n\n` +
        table(["setting", "value"], cluster.settings.map(([name, value]) => [name, value]), 1) +
        `\n\nSQLite: the driver's own settings (WAL, synchronous = NORMAL: no fsync per commit, as with ` +
        `synchronous_commit = off above).\nMachine: ${availableParallelism()} cores (${cpu}); PostgreSQL, the ` +
        `Botrelay servers, FakeTelegram, the backend and this process share them.\n`
    )

    const settings = loadSettings(envInt("BENCH_PIPELINE_BOTS", 20))
    let sqlite: LoadResult | undefined
    let one: LoadResult | undefined
    const lines: Array<Line> = []
    if (chosen.has("pipeline")) {
      sqlite = await runLoad(settings, { label: "pipeline on SQLite" })
      reportLoad(settings, sqlite, "Pipeline on SQLite, one instance")
      lines.push({ name: "SQLite, 1 instance", load: sqlite })
    }
    if (chosen.has("pipeline") || (chosen.has("instances") && counts.includes(1))) {
      one = await runLoad(settings, {
        label: "pipeline on PostgreSQL",
        storage: () => Storage.postgres(cluster)
      })
      reportLoad(settings, one, "Pipeline on PostgreSQL, one instance")
      lines.push({ name: "PostgreSQL, 1 instance", load: one })
    }
    const many: Array<Line> = []
    if (chosen.has("instances")) {
      for (const instances of counts.filter((n) => n > 1)) {
        try {
          const load = await runLoad(settings, {
            label: `pipeline on PostgreSQL, ${instances} instances`,
            storage: () => Storage.postgres(cluster),
            instances
          })
          reportLoad(settings, load, `Pipeline on PostgreSQL, ${instances} instances sharing the database`)
          const line = { name: `PostgreSQL, ${instances} instances`, load }
          lines.push(line)
          many.push(line)
        } catch (e) {
          if (!(e instanceof Error && e.message.startsWith(noLeases))) throw e
          process.stdout.write(`\nPipeline on PostgreSQL, ${instances} instances: skipped, ${e.message}\n`)
        }
      }
    }
    if (lines.length > 0) {
      summary(lines)
      goals(sqlite, one, many)
      process.stdout.write(
        `\nWhat limits these figures: one machine with ${availableParallelism()} cores runs PostgreSQL, every ` +
          `Botrelay instance, FakeTelegram, the backend and the load generator, so the instances compete for the ` +
          `same cores (see the cores columns) instead of adding their own; on separate machines each instance ` +
          `would bring its own.\n`
      )
    }
    if (chosen.has("inbox")) {
      const options = inboxOptions(30)
      const figures: Array<readonly [string, InboxFigures]> = []
      for (const kind of ["SQLite", "PostgreSQL"] as const) {
        const storage = kind === "SQLite" ? Storage.sqlite() : await Storage.postgres(cluster)
        try {
          figures.push([kind, await measureInbox(storage, options, `inbox on ${kind}`)])
        } finally {
          await storage.dispose()
        }
      }
      reportInbox(options.messages, options.chats, options.requests, figures)
      for (const [kind, f] of figures) if (f.sse.missing > 0) failures.push(`${kind}: ${f.sse.missing} events never reached their client`)
    }
    for (const { load, name } of lines) {
      const i = load.integrity
      if (i.missing > 0 || i.duplicated > 0 || i.unexpected > 0) {
        failures.push(`${name}: ${i.missing} confirmed but never delivered, ${i.duplicated} delivered again, ${i.unexpected} unknown`)
      }
    }
  } finally {
    await cluster.stop()
  }
  if (failures.length > 0) throw new Error(`updates lost or duplicated: ${failures.join("; ")}`)
}
