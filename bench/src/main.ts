/**
 * `pnpm bench`: the API suite (Botrelay's HTTP API against a bare ceiling, see api.ts), the pipeline
 * suite (FakeTelegram → Botrelay → a local backend, and 1,000 idle polling bots, see pipeline.ts), the
 * proxy suite (/tgapi overhead, long-poll latency and the fast path on vs off, see proxy.ts), then the routing suite (the pipeline's
 * load with and without 1,000 keyword routes, see routing.ts), then the regex suite (route regexes on hostile
 * messages, in process, see regex.ts), then the http suite (the outbound HTTP client, Http1Client, against
 * undici, see http.ts), then the search suite (full-text search over a million messages, see search.ts), then
 * the inbox suite (chats, search, stats and live events over a million stored messages, see inbox.ts), then the
 * console suite (its weight, the chats page's speed with 10,000 chats and live messages in chromium, see console.ts), then
 * the postgres suite (the pipeline on SQLite vs PostgreSQL, several instances on one PostgreSQL database, the inbox's
 * reads over a million messages on both, see postgres.ts), then the relay suite (Botrelay side by side with the
 * hand-written relay a bot developer would write instead: throughput, latency, memory and CPU at 20 bots and at 1,
 * see relay/suite.ts and relay/peer.ts), then the idle suite (lone updates through idle polling bots, commit to backend,
 * and 10,000 idle polling bots' memory and CPU, see idle.ts).
 *
 * Env: BENCH_SUITE (api, pipeline, proxy, routing, regex, http, search, inbox, console, postgres, relay, idle or all; default all; `fastpath` runs only the proxy
 * suite's fast path comparison), BENCH_CPU_PROF (a folder: run each
 * Botrelay server with `--cpu-prof` and write its profile there), BENCH_NODE_ARGS (more node options for each Botrelay
 * server, space-separated, e.g. `--trace-gc`), BENCH_BIN (the server's script, relative to the repository; default the
 * bundled `packages/server/dist/bin.js`, `packages/server/dist/Entry.js` runs it unbundled), and each suite's own settings.
 */
import { resolve } from "node:path"
import { interruptApi, runApi } from "./api.js"
import { cpuProf, removeTempDirs } from "./harness.js"
import { runConsole } from "./console.js"
import { runHttp } from "./http.js"
import { runIdle } from "./idle.js"
import { runInbox } from "./inbox.js"
import { runPipeline } from "./pipeline.js"
import { runPostgres } from "./postgres.js"
import { runFastPath, runProxy } from "./proxy.js"
import { runRegex } from "./regex.js"
import { runRelay } from "./relay/suite.js"
import { runRouting } from "./routing.js"
import { runSearch } from "./search.js"
import { children, isRunning, stop } from "./processes.js"

const suites: Record<string, () => Promise<void>> = {
  api: runApi,
  pipeline: runPipeline,
  proxy: runProxy,
  routing: runRouting,
  regex: runRegex,
  http: runHttp,
  search: runSearch,
  inbox: runInbox,
  console: runConsole,
  postgres: runPostgres,
  relay: runRelay,
  idle: runIdle
}

/** Parts of a suite that can run alone; `all` leaves them to their suite. */
const parts: Record<string, () => Promise<void>> = { fastpath: runFastPath }

const chosen = process.env["BENCH_SUITE"] ?? "all"
const names = chosen === "all" || chosen === "" ? Object.keys(suites) : [chosen]
const run = (name: string) => suites[name] ?? parts[name]

let cleaning: Promise<void> | undefined

const cleanup = (): Promise<void> =>
  cleaning ??= Promise.all(children.map(stop)).then(removeTempDirs)

const interrupt = (signal: NodeJS.Signals) => {
  process.stderr.write(`\n${signal}: stopping\n`)
  interruptApi()
  void cleanup().finally(() => process.exit(130))
}
process.once("SIGINT", interrupt)
process.once("SIGTERM", interrupt)
process.once("exit", () => {
  for (const child of children) if (isRunning(child)) child.process.kill("SIGKILL")
  removeTempDirs()
})

if (names.some((name) => run(name) === undefined)) {
  process.stderr.write(`BENCH_SUITE must be one of api, pipeline, proxy, routing, regex, http, search, inbox, console, postgres, relay, idle, fastpath, all; got "${chosen}"\n`)
  process.exitCode = 2
} else {
  for (const name of names) {
    try {
      await run(name)!()
    } catch (e) {
      process.stderr.write(`\n${name} bench failed: ${e instanceof Error ? e.message : String(e)}\n`)
      process.exitCode = 1
    }
  }
  await cleanup()
  if (cpuProf !== undefined) {
    process.stderr.write(`CPU profiles of the Botrelay servers written to ${resolve(cpuProf)}\n`)
  }
}
