/**
 * The search suite: full-text search over a seeded history (1,000,000 messages in 10,000 chats over 5 bots
 * by default) through the `SearchStore` in process and through `GET /api/search` of the standalone server,
 * one request at a time after a warm-up of a fifth as many: p50 / p99 for a common word, a rare word and a phrase, each across all bots, in one
 * bot and in one chat, and a prefix. Then what the index costs: database size with and without it, and the time
 * a message write takes with and without its upkeep.
 *
 * Env: BENCH_SEARCH_MESSAGES (default 1,000,000), BENCH_SEARCH_RUNS (requests per query, default 300).
 */
import { randomBytes } from "node:crypto"
import { statSync } from "node:fs"
import { join } from "node:path"
import { BotStore, SearchQuery, SearchStore } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Either, Redacted } from "effect"
import { count, envInt, makeTempDir, removeTempDir, startBotrelay, table } from "./harness.js"
import { stop } from "./processes.js"

const bots = 5
const chats = 10_000

/** A small deterministic PRNG (mulberry32), so every run seeds the same data. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sa", "do", "fu", "gi", "ha", "ju", "be",
  "ко", "ра", "ми", "ст"]

/** 20,000 made-up words; picked with a Zipf-like skew, so a few are very common and most are rare. */
const vocabulary = Array.from({ length: 20_000 }, (_, i) => {
  let word = ""
  for (let n = i + 1; n > 0; n = Math.floor(n / syllables.length)) word += syllables[n % syllables.length]
  return word
})

interface Seeded {
  readonly botIds: ReadonlyArray<number>
  readonly chatIds: ReadonlyArray<number>
  /** The chat with the most messages and its bot. */
  readonly busy: { readonly botId: number; readonly chatId: number; readonly messages: number }
}

/** Messages: 3 to 25 words; "order" in 10 %, "good morning" in 1 %, "zanzibar" in 1 of 20,000. */
const text = (random: () => number, i: number) => {
  const words: Array<string> = []
  const length = 3 + Math.floor(random() * 23)
  for (let w = 0; w < length; w++) words.push(vocabulary[Math.floor(random() ** 3 * vocabulary.length)]!)
  const r = random()
  if (r < 0.1) words.splice(Math.floor(random() * words.length), 0, "order")
  if (r > 0.99) words.splice(Math.floor(random() * words.length), 0, "good", "morning")
  if (i % 20_000 === 7) words.push("zanzibar")
  return words.join(" ")
}

const seed = async (filename: string, messages: number): Promise<Seeded> => {
  const botIds = await Effect.runPromise(Effect.gen(function*() {
    const store = yield* BotStore.BotStore
    const ids: Array<number> = []
    for (let i = 1; i <= bots; i++) {
      const bot = yield* store.insertBot({
        token: Redacted.make(`${7_000_000_000 + i}:AA${randomBytes(25).toString("base64url").slice(0, 33)}`),
        name: `search bot ${i}`,
        source: "web",
        manage_enabled: true,
        proxy_enabled: false,
        backend_url: "",
        secret_token: Redacted.make(""),
        long_poll_enabled: false,
        description: "",
        created_at: new Date(0).toISOString()
      })
      yield* store.updateBot(bot.id, { disabled: true })
      ids.push(bot.id)
    }
    return ids
  }).pipe(Effect.provide(SqliteStores.layer({ filename }))))

  const random = prng(0x5ea7c4)
  const chatIds = Array.from({ length: chats }, (_, c) => c % 3 === 0 ? -1_001_000_000_000 - c : 1_000_000 + c)
  const nextId = new Array<number>(chats).fill(1)
  const database = new BetterSqlite3(filename)
  try {
    const insert = database.prepare(
      `INSERT INTO botrelay_messages (bot_id, chat_id, id, user_id, username, first_name, last_name, text, date,
        direction, edit_date) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?, 0)`
    )
    const start = Math.floor(Date.UTC(2025, 0, 1) / 1000)
    database.transaction(() => {
      for (let i = 0; i < messages; i++) {
        const c = random() < 0.02 ? 0 : Math.floor(random() * chats)
        const out = random() < 0.3
        const user = out ? 0 : 10_000_000 + c * 10 + Math.floor(random() * 5)
        insert.run(botIds[c % bots], chatIds[c], nextId[c]!++, user, `user${user}`, "User", text(random, i),
          start + i * 5, out ? "out" : "in")
      }
    })()
  } finally {
    database.close()
  }
  return { botIds, chatIds, busy: { botId: botIds[0]!, chatId: chatIds[0]!, messages: nextId[0]! - 1 } }
}

interface Query {
  readonly name: string
  readonly params: Record<string, string>
}

const queries = (seeded: Seeded): ReadonlyArray<Query> => {
  const bot = String(seeded.botIds[2])
  const chat = { bot_id: String(seeded.botIds[1 % bots]), chat_id: String(seeded.chatIds[1]) }
  const busy = { bot_id: String(seeded.busy.botId), chat_id: String(seeded.busy.chatId) }
  return [
    { name: "common word", params: { q: "order" } },
    { name: "rare word", params: { q: "zanzibar" } },
    { name: "phrase", params: { q: "\"good morning\"" } },
    { name: "two words", params: { q: `order ${vocabulary[3]}` } },
    { name: "prefix", params: { q: "ord*" } },
    { name: "common word, one bot", params: { q: "order", bot_id: bot } },
    { name: "phrase, one bot", params: { q: "\"good morning\"", bot_id: bot } },
    { name: "common word, one chat", params: { q: "order", ...chat } },
    { name: "rare word, one chat", params: { q: "zanzibar", ...chat } },
    { name: "common word, busiest chat", params: { q: "order", ...busy } },
    { name: "common word, page 5", params: { q: "order", limit: "50" } }
  ]
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

interface Timing {
  readonly p50: number
  readonly p99: number
  readonly found: number
}

const timed = async (runs: number, f: () => Promise<number>): Promise<Timing> => {
  const times: Array<number> = []
  let found = 0
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    found = await f()
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99), found }
}

/** Bytes of the tables and indexes whose names are LIKE one of `patterns` (SQLite's dbstat). */
const bytesOf = (filename: string, ...patterns: ReadonlyArray<string>): number | undefined => {
  const database = new BetterSqlite3(filename, { readonly: true })
  try {
    const row = database.prepare(
      `SELECT sum(pgsize) AS bytes FROM dbstat WHERE ${patterns.map(() => "name LIKE ?").join(" OR ")}`
    ).get(...patterns) as { bytes: number | null } | undefined
    return row?.bytes ?? 0
  } catch {
    return undefined
  } finally {
    database.close()
  }
}

/** µs per message written in transactions of `batch` messages, on a fresh database, with the index or without. */
const writeCost = async (dir: string, withIndex: boolean, batch: number): Promise<number> => {
  const filename = join(dir, `writes-${withIndex}-${batch}.db`)
  await Effect.runPromise(Effect.scoped(SqliteStores.make({ filename })))
  const database = new BetterSqlite3(filename)
  try {
    database.pragma("journal_mode = WAL")
    database.pragma("synchronous = NORMAL")
    database.prepare("INSERT INTO botrelay_bots (token, token_hash, source, created_at, updated_at) VALUES ('x', 'x', 'web', '', '')").run()
    if (!withIndex) {
      for (const trigger of ["insert", "delete", "update"]) database.prepare(`DROP TRIGGER botrelay_messages_fts_${trigger}`).run()
    }
    const random = prng(7)
    const insert = database.prepare(
      "INSERT INTO botrelay_messages (bot_id, chat_id, id, user_id, text, date, direction) VALUES (1, ?, ?, ?, ?, ?, 'in')"
    )
    const total = 20_000
    const write = database.transaction((from: number) => {
      for (let i = from; i < from + batch; i++) insert.run(-100 - (i % 500), i, 7 + (i % 300), text(random, i), i)
    })
    const started = performance.now()
    for (let i = 0; i < total; i += batch) write(i)
    return (performance.now() - started) * 1000 / total
  } finally {
    database.close()
  }
}

/** Runs the suite and prints its tables. */
export const runSearch = async (): Promise<void> => {
  const messages = envInt("BENCH_SEARCH_MESSAGES", 1_000_000)
  const runs = envInt("BENCH_SEARCH_RUNS", 300)
  const warmUp = Math.ceil(runs / 5)
  const dir = makeTempDir()
  try {
    const filename = join(dir, "botrelay.db")
    const seeding = performance.now()
    const seeded = await seed(filename, messages)
    process.stderr.write(
      `seeded ${count(messages)} messages in ${count(chats)} chats over ${bots} bots in ` +
        `${((performance.now() - seeding) / 1000).toFixed(1)} s (index kept by its triggers)\n`
    )
    const list = queries(seeded)

    const inProcess = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* SqliteStores.make({ filename })
      const store = context.unsafeMap.get(SearchStore.SearchStore.key) as SearchStore.SearchStoreService
      const results: Array<Timing> = []
      for (const query of list) {
        const terms = Either.getOrThrow(SearchQuery.parse(query.params["q"]!))
        const search: SearchStore.MessageSearch = {
          terms,
          bot_ids: query.params["bot_id"] === undefined ? undefined : [Number(query.params["bot_id"])],
          ...(query.params["chat_id"] === undefined ? {} : { chat_id: Number(query.params["chat_id"]) }),
          limit: 51
        }
        const before = query.name.endsWith("page 5")
          ? (yield* store.searchMessages({ ...search, limit: 200 }))[199]?.position
          : undefined
        const call = () => Effect.runPromise(store.searchMessages({ ...search, before })).then((found) => found.length)
        yield* Effect.promise(() => timed(warmUp, call))
        results.push(yield* Effect.promise(() => timed(runs, call)))
      }
      return results
    })))

    const botrelay = await startBotrelay(filename, "http://127.0.0.1:9", "botrelay-search")
    const overHttp: Array<Timing> = []
    try {
      for (const query of list) {
        let cursor: string | undefined
        if (query.name.endsWith("page 5")) {
          for (let page = 0; page < 4; page++) {
            const params = new URLSearchParams({ ...query.params, ...(cursor === undefined ? {} : { cursor }) })
            const response = await fetch(`${botrelay.url}/api/search?${params}`, { headers: botrelay.headers })
            cursor = ((await response.json()) as { next_cursor: string }).next_cursor
          }
        }
        const url = `${botrelay.url}/api/search?${new URLSearchParams({ ...query.params, ...(cursor === undefined ? {} : { cursor }) })}`
        const call = async () => {
          const response = await fetch(url, { headers: botrelay.headers })
          const body = await response.json() as { items?: Array<unknown> }
          if (response.status !== 200) throw new Error(`${query.name}: ${response.status} ${JSON.stringify(body)}`)
          return body.items!.length
        }
        await timed(warmUp, call)
        overHttp.push(await timed(runs, call))
      }
    } finally {
      await stop(botrelay.child)
    }

    const ms = (n: number) => `${n.toFixed(2)} ms`
    process.stdout.write(
      `\nSearch: ${count(messages)} messages in ${count(chats)} chats over ${bots} bots; ${runs} requests per ` +
        `query, one at a time; the busiest chat holds ${count(seeded.busy.messages)}.\n\n` +
        table(
          ["query", "q", "found", "store p50", "store p99", "HTTP p50", "HTTP p99"],
          list.map((query, i) => [
            query.name,
            query.params["q"]!,
            String(overHttp[i]!.found),
            ms(inProcess[i]!.p50),
            ms(inProcess[i]!.p99),
            ms(overHttp[i]!.p50),
            ms(overHttp[i]!.p99)
          ]),
          2
        ) + "\n\n"
    )

    const file = statSync(filename).size + (statSync(`${filename}-wal`, { throwIfNoEntry: false })?.size ?? 0)
    const index = bytesOf(filename, "botrelay_messages_fts%")
    const history = bytesOf(filename, "botrelay_messages", "botrelay_messages_chat_date", "sqlite_autoindex_botrelay_messages_%")
    const perMillion = (bytes: number) => `${(bytes / messages * 1_000_000 / 1024 / 1024).toFixed(0)} MB`
    const writes = []
    for (const batch of [1, 10, 100]) writes.push([String(batch), await writeCost(dir, false, batch), await writeCost(dir, true, batch)] as const)
    process.stdout.write(
      (index === undefined || history === undefined
        ? `database: ${perMillion(file)} per million messages (dbstat is not available to split it)\n`
        : table(["per million messages", "size"], [
          ["database file", perMillion(file)],
          ["messages table and its indexes", perMillion(history)],
          ["full-text index (botrelay_messages_fts*)", perMillion(index)],
          ["database without the index", perMillion(file - index)]
        ], 1)) +
        "\n\n" +
        table(
          ["messages per transaction", "µs/message without index", "with index", "ratio"],
          writes.map(([batch, without, withIndex]) => [batch, without.toFixed(1), withIndex.toFixed(1), (without / withIndex).toFixed(2)]),
          1
        ) + "\n\n"
    )
  } finally {
    removeTempDir(dir)
  }
}
