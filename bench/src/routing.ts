/**
 * The routing suite: the pipeline suite's load run (FakeTelegram in this process → the Botrelay server →
 * a backend in this process) twice against fresh servers, once without routes and once with keyword routes
 * spread over the source bots, each message matching one of them. Compares updates/s delivered to the
 * backends (saturated) and latency (paced); route sends are paced by flood control, so most are still
 * queued when a run ends.
 *
 * Env: BENCH_ROUTING_BOTS (source bots, default 50), BENCH_ROUTING_TARGETS (target bots, default 10),
 * BENCH_ROUTING_ROUTES (per source bot, default 20), BENCH_ROUTING_RATE (updates/s of the paced runs,
 * comma-separated, default 1000,2000; 0 skips them), BENCH_ROUTING_WARMUP (seconds before the saturated window,
 * default 20: until every bot's backlog is full, so the window measures steady throughput, not the filling),
 * and the rest of the pipeline suite's load shape (BENCH_PIPELINE_QUEUE, _DURATION, _PACED_DURATION, _DRAIN).
 */
import type { FakeTelegram } from "@botrelay/testing"
import BetterSqlite3 from "better-sqlite3"
import { addBot, type Botrelay, count, envInt, table } from "./harness.js"
import {
  checkIntegrity,
  envRates,
  inParallel,
  type LoadBot,
  type LoadResult,
  loadSettings,
  ms,
  rate,
  reportLoad,
  runLoad
} from "./pipeline.js"

/** Every `multiEvery`-th route of a bot lists three keywords, two of them phrases. */
const multiEvery = 5

/** The keywords of route `j` of source bot `index`; each is found in no other route's list. */
const keywords = (index: number, j: number, perBot: number): ReadonlyArray<string> => {
  const g = index * perBot + j
  return j % multiEvery === multiEvery - 1 ? [`kw${g}`, `late parcel ${g}`, `refund ${g} please`] : [`kw${g}`]
}

/** Route sends in the database by status, and messages the target bots sent through FakeTelegram. */
interface Sends {
  readonly queued: number
  readonly sent: number
  readonly pending: number
  readonly dead: number
  readonly telegram: number
}

interface Routed {
  readonly load: LoadResult
  readonly sends: Sends
  readonly routes: number
}

const postRoute = async (botrelay: Botrelay, body: Record<string, unknown>): Promise<void> => {
  const response = await fetch(`${botrelay.url}/api/routes/add`, {
    method: "POST",
    headers: { ...botrelay.headers, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status !== 200) throw new Error(`POST /api/routes/add: ${response.status} ${text.slice(0, 300)}`)
}

const countSends = (database: string, fake: FakeTelegram.FakeTelegram, targets: ReadonlySet<number>): Sends => {
  const db = new BetterSqlite3(database, { readonly: true, fileMustExist: true })
  try {
    const rows = db.prepare("SELECT status, count(*) AS n FROM botrelay_route_sends GROUP BY status").all() as Array<
      { readonly status: string; readonly n: number }
    >
    const of = (status: string) => rows.find((row) => row.status === status)?.n ?? 0
    return {
      queued: rows.reduce((sum, row) => sum + row.n, 0),
      sent: of("sent"),
      pending: of("pending"),
      dead: of("dead"),
      telegram: fake.sent().filter((message) => targets.has(message.botId)).length
    }
  } finally {
    db.close()
  }
}

/** One load run; with `routed`, `perBot` keyword routes per source bot, copying into a group of the targets. */
const run = async (routed: boolean, targetCount: number, perBot: number): Promise<Routed> => {
  const settings = {
    ...loadSettings(envInt("BENCH_ROUTING_BOTS", 50)),
    warmup: envInt("BENCH_ROUTING_WARMUP", 20),
    rates: envRates("BENCH_ROUTING_RATE", [1000, 2000])
  }
  const label = routed ? "routing (routed)" : "routing (unrouted)"
  const targets = new Set<number>()
  let routes = 0
  let sends: Sends = { queued: 0, sent: 0, pending: 0, dead: 0, telegram: 0 }
  const text = (bot: LoadBot, n: number) => {
    const listed = keywords(bot.index, n % perBot, perBot)
    return `Hello! Where is my order #${n}? ${listed[Math.floor(n / perBot) % listed.length]!} It was due yesterday.`
  }
  const load = await runLoad(settings, {
    label,
    text,
    setup: async (botrelay, fake, bots) => {
      const fakes = Array.from({ length: targetCount }, (_, i) => fake.addBot({ username: `route_target_${i}_bot` }))
      for (const target of fakes) targets.add(target.id)
      const group = fake.addGroup({ title: "Routed orders", members: fakes.map((target) => target.id) })
      const ids: Array<number> = []
      for (const [i, target] of fakes.entries()) {
        ids.push((await addBot(botrelay, { token: target.token, name: `Route target ${i}` })).id)
      }
      if (!routed) return
      const started = performance.now()
      await inParallel(bots.length * perBot, 8, async (g) => {
        const index = Math.floor(g / perBot)
        await postRoute(botrelay, {
          source_bot_id: bots[index]!.id,
          target_bot_id: ids[g % ids.length]!,
          condition_type: "keyword",
          condition_value: keywords(index, g % perBot, perBot).join(","),
          action: "copy",
          target_chat_id: group.id,
          enabled: true
        })
        routes++
      })
      const seconds = (performance.now() - started) / 1000
      process.stderr.write(`${label}: ${count(routes)} routes added in ${seconds.toFixed(1)} s\n`)
      await Promise.all(fakes.map((target) => fake.waitForPoll(target.id, "30 seconds")))
    },
    inspect: (database, fake) => {
      sends = countSends(database, fake, targets)
    }
  })
  reportLoad(settings, load, routed ? `Routing, ${count(routes)} routes` : "Routing, no routes")
  return { load, sends, routes }
}

/** Saturated throughput, paced latency, route sends and integrity of the two runs, and their ratio. */
const report = (plain: Routed, routed: Routed) => {
  const saturated = (result: Routed) => result.load.windows[0]?.figures
  const rates = plain.load.windows.flatMap((run) => run.rate === undefined ? [] : [run.rate])
  const exactlyOnce = ({ integrity: i }: LoadResult) =>
    i.missing === 0 && i.duplicated === 0 && i.unexpected === 0 && i.received === i.created ? "yes" : "no"
  const drainRate = (result: Routed) => {
    const window = result.load.windows[0]?.window
    return window === undefined || window.backlog === 0 ? Number.NaN : window.backlog / (window.drained / 1000)
  }
  const row = (name: string, result: Routed) => [
    name,
    rate(saturated(result)?.delivered ?? Number.NaN),
    rate(drainRate(result)),
    ...rates.flatMap((target) => {
      const window = result.load.windows.find((run) => run.rate === target)
      return [ms(window?.figures.p50 ?? Number.NaN), ms(window?.figures.p99 ?? Number.NaN)]
    }),
    count(result.sends.queued),
    count(result.sends.sent + result.sends.dead),
    count(result.sends.telegram),
    count(result.load.integrity.created),
    exactlyOnce(result.load)
  ]
  const ratio = (saturated(routed)?.delivered ?? Number.NaN) / (saturated(plain)?.delivered ?? Number.NaN)
  const results = table(
    [
      "run",
      "delivered",
      "drained at",
      ...rates.flatMap((target) => [`p50 at ${count(target)}/s`, `p99 at ${count(target)}/s`]),
      "sends queued",
      "done",
      "sent",
      "updates",
      "exactly once"
    ],
    [row("no routes", plain), row(`${count(routed.routes)} routes`, routed)],
    1
  )
  process.stdout.write(
    `\nRouting: the same load without routes and with ${count(routed.routes)} keyword routes (copy into a group),\n` +
      `each message matching one route. delivered: updates/s at the backends, saturated, once each bot's backlog\n` +
      `is full (after the warm-up); drained at: the rate the backlog left once creation stopped; p50, p99: paced runs.\n` +
      `sends queued: route sends in the database when the run ended; done: of them sent or given up;\n` +
      `sent: messages the target bots sent through FakeTelegram (flood control allows 20/min per group).\n` +
      `exactly once: every created update reached its backend once.\n\n` +
      `${results}\n\n` +
      `routed / unrouted throughput: ${ratio.toFixed(2)} (goal >= 0.80: ${ratio >= 0.8 ? "met" : "missed"})\n\n`
  )
}

/** Runs the load without routes, then with them, against fresh servers; throws when updates were lost or duplicated. */
export const runRouting = async (): Promise<void> => {
  const targets = envInt("BENCH_ROUTING_TARGETS", 10)
  const perBot = envInt("BENCH_ROUTING_ROUTES", 20)
  const plain = await run(false, targets, perBot)
  const routed = await run(true, targets, perBot)
  report(plain, routed)
  checkIntegrity(plain.load.integrity)
  checkIntegrity(routed.load.integrity)
}
