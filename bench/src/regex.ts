/**
 * The regex suite, in this process (no server): what route regexes cost on hostile 4,096-character
 * messages now that they run on RE2 (re2js). Each adversarial pattern family is grown to the largest
 * program RouteRegex accepts, compiled fresh (a cold DFA, the worst case) and run on several messages of
 * each text shape; then a source bot at the per-bot total runs the worst of them through
 * `RouteMatcher.matches`, while a setImmediate ticker records the longest stretch the event loop was
 * blocked. Prints figures; asserts nothing.
 *
 * Env: BENCH_REGEX_MESSAGES (messages per pattern and text, default 8), BENCH_REGEX_BOT_MESSAGES (messages
 * through the capped bot, default 20).
 */
import { type Route, RouteMatcher, RouteRegex } from "@botrelay/core"
import { Effect } from "effect"
import { envInt, table } from "./harness.js"

const length = RouteRegex.textLimit

let seed = 1
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648

const codePoints = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => String.fromCodePoint(lo + i))

const randomText = (chars: ReadonlyArray<string>) => () =>
  Array.from({ length }, () => chars[Math.floor(random() * chars.length)]!).join("").slice(0, length)

/** Message shapes: the scripts of probe #34, one repeated character, and a/b texts that make DFAs branch. */
const texts: ReadonlyArray<readonly [string, () => string]> = [
  ["Hangul", randomText([...codePoints(0xac00, 0xac20), "x", "Z"])],
  ["Hangul, one syllable", () => "한".repeat(length)],
  ["Latin", randomText([...codePoints(0x61, 0x7a), ...codePoints(0x41, 0x5a), " "])],
  ["Cyrillic", randomText([...codePoints(0x430, 0x44f), ...codePoints(0x410, 0x42f), "x"])],
  ["a repeated", () => "a".repeat(length)],
  ["a/b alternating", () => "ab".repeat(length / 2)],
  ["a/b/x random", randomText(["a", "b", "a", "b", "x"])],
  ["mixed", randomText([...codePoints(0x20, 0x7e), ...codePoints(0x430, 0x44f), ...codePoints(0xac00, 0xac08)])]
]

/** Pattern families; each is grown to the largest `k` whose program RouteRegex accepts. */
const families: ReadonlyArray<(k: number) => string> = [
  (k) => `(?s)a.{${k}}x`,
  (k) => `a[ab]{${k}}x`,
  (k) => `(?i)\\p{L}{0,${k}}x`,
  (k) => `(?:\\p{L}|\\p{N}){0,${k}}$`,
  (k) => `(?i)[a-zа-я]{0,${k}}Z`,
  (k) => `\\P{Lu}*\\P{Lu}{0,${k}}\\p{Lu}`,
  (k) => `(?:a|b)*a(?:a|b){${k}}`,
  (k) => `(?i)(?:\\w+\\s?){0,${k}}$`,
  (k) => `(?:.{0,${k}}){4}x`
]

/** Patterns that were catastrophic on V8's backtracking engine (probes #33-#35). */
const former = ["\\P{Lu}*\\P{Lu}{0,7}\\p{Lu}", "(a+)+$", "(\\w+\\s?)*$", ".*.*x", "^.*.*x199"]

const largest = (family: (k: number) => string) => {
  let k = 1
  while (k < 5000 && RouteRegex.compile(family(k + 1))._tag === "Compiled") k++
  return family(k)
}

const compiled = (pattern: string) => {
  const result = RouteRegex.compile(pattern)
  if (result._tag === "Refused") throw new Error(`${pattern} is refused: ${result.reason}`)
  return result
}

interface Cost {
  readonly pattern: string
  readonly size: number
  readonly worst: number
  readonly worstText: string
  readonly mean: number
}

/** Worst and mean ms per message over every text shape, each on a freshly compiled regex. */
const cost = (pattern: string, messages: number): Cost => {
  let worst = 0
  let worstText = ""
  let total = 0
  for (const [name, text] of texts) {
    const regex = compiled(pattern)
    for (let i = 0; i < messages; i++) {
      const message = text()
      const start = performance.now()
      RouteRegex.test(regex, message)
      const took = performance.now() - start
      total += took
      if (took > worst) [worst, worstText] = [took, name]
    }
  }
  return { pattern, size: compiled(pattern).cost, worst, worstText, mean: total / (texts.length * messages) }
}

const ms = (n: number) => n.toFixed(n < 10 ? 2 : 1)

const row = (c: Cost) => [c.pattern.length > 34 ? c.pattern.slice(0, 31) + "..." : c.pattern, String(c.size), ms(c.worst), c.worstText, ms(c.mean)]

let nextId = 1
const route = (condition_value: string): Route.Route => ({
  id: nextId++,
  source_bot_id: 1,
  target_bot_id: 2,
  condition_type: "regex",
  condition_value,
  action: "copy",
  target_chat_id: 0,
  enabled: true,
  description: "",
  created_at: "2026-01-01T00:00:00.000Z"
})

/** A source bot's routes filled up to the total with these patterns, in turn. */
const cappedBot = (patterns: ReadonlyArray<string>) => {
  const routes: Array<Route.Route> = []
  let total = 0
  for (let i = 0; ; i++) {
    const pattern = patterns[i % patterns.length]!
    const size = compiled(pattern).cost
    if (total + size > RouteRegex.maxTotalProgramSize) break
    routes.push(route(pattern))
    total += size
  }
  return { routes, total }
}

/** Runs messages through the bot's compiled routes; CPU per message and the longest event-loop block. */
const throughBot = async (routes: ReadonlyArray<Route.Route>, messages: number) => {
  const set = RouteMatcher.compile(routes)
  const inputs = Array.from({ length: messages }, (_, i) => texts[i % texts.length]![1]())
  let running = true
  let last = performance.now()
  let longest = 0
  const tick = () => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  let worst = 0
  let total = 0
  for (const text of inputs) {
    const start = performance.now()
    await Effect.runPromise(RouteMatcher.matches(set, { text, chat_id: 1, user_id: 1 }))
    const took = performance.now() - start
    total += took
    worst = Math.max(worst, took)
  }
  running = false
  return { worst, mean: total / messages, longest, rejected: set.rejected.length }
}

const v8 = (pattern: string, text: string) => {
  const start = performance.now()
  new RegExp(pattern, "u").test(text)
  return performance.now() - start
}

/** Runs the suite and prints its figures. */
export const runRegex = async (): Promise<void> => {
  const messages = envInt("BENCH_REGEX_MESSAGES", 8)
  const botMessages = envInt("BENCH_REGEX_BOT_MESSAGES", 20)
  const adversarial = families.map(largest)
  for (const pattern of [...adversarial, ...former]) cost(pattern, 1)

  process.stdout.write(
    `\nregex suite: RE2 (re2js), ${length}-character messages, limits: program size ${RouteRegex.maxProgramSize} ` +
      `a regex, ${RouteRegex.maxTotalProgramSize} a source bot\n\n`
  )
  const costs = adversarial.map((p) => cost(p, messages)).sort((a, b) => b.worst - a.worst)
  process.stdout.write(
    `largest accepted adversarial patterns (fresh DFA each text, ${messages} messages each):\n` +
      table(["pattern", "size", "worst ms", "on", "mean ms"], costs.map(row), 1) + "\n\n"
  )
  process.stdout.write(
    "patterns that stalled V8:\n" +
      table(["pattern", "size", "worst ms", "on", "mean ms"], former.map((p) => row(cost(p, messages))), 1) + "\n"
  )
  process.stdout.write(
    `  for comparison, V8 on \\P{Lu}*\\P{Lu}{0,7}\\p{Lu} and 4,096 x "한": ` +
      `${ms(v8("\\P{Lu}*\\P{Lu}{0,7}\\p{Lu}", "한".repeat(length)))} ms\n\n`
  )

  const worstPatterns = costs.slice(0, 3).map((c) => c.pattern)
  const bot = cappedBot(worstPatterns)
  await throughBot(cappedBot(former).routes, 2)
  const result = await throughBot(bot.routes, botMessages)
  const cheap = Array.from({ length: 200 }, (_, n) => route(`^.*.*x${n}`))
  const many = await throughBot(cheap, botMessages)
  process.stdout.write(
    table(["source bot", "routes", "program size", "worst ms/msg", "mean ms/msg", "longest block ms"], [
      [
        "at the total, 3 worst patterns",
        String(bot.routes.length),
        String(bot.total),
        ms(result.worst),
        ms(result.mean),
        ms(result.longest)
      ],
      [
        `200 x ^.*.*x<N> stored (${many.rejected} never match)`,
        String(cheap.length - many.rejected),
        String(cheap.slice(0, cheap.length - many.rejected).reduce((s, r) => s + RouteRegex.cost(r.condition_value), 0)),
        ms(many.worst),
        ms(many.mean),
        ms(many.longest)
      ]
    ], 1) + "\n"
  )
}
