/**
 * The inbox suite: the operator inbox over a large history. Seeds 1,000,000 messages in 10,000 chats over
 * 5 bots (messages through the store, so the chat counters are kept by the same code as in production,
 * and the search index is filled as its batched indexing fills it), reports what that costs on disk, then
 * measures request latency one request at a time (as an operator's console makes them) for the chat list, search and a chat's history, and the
 * time an incoming message takes to reach 100 connected `/api/events` clients.
 *
 * Env: BENCH_INBOX_MESSAGES (default 1,000,000), BENCH_INBOX_CHATS (default 10,000), BENCH_INBOX_REQUESTS
 * (requests per measured route, default 300), BENCH_SSE_CLIENTS (default 100), BENCH_SSE_MESSAGES
 * (default 200), BENCH_SSE_RATE (messages/s, default 50).
 */
import { randomBytes } from "node:crypto"
import { statSync } from "node:fs"
import { get } from "node:http"
import { BotStore, type Message, MessageStore } from "@botrelay/core"
import { FakeTelegram } from "@botrelay/testing"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Redacted } from "effect"
import type pg from "pg"
import { addBot, type Botrelay, count, envInt, sleep, startBotrelay, table } from "./harness.js"
import { stop } from "./processes.js"
import * as Storage from "./storage.js"

const botCount = 5

/** A small deterministic PRNG (mulberry32), so every run seeds the same data. */
const prng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1))
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  return { next, int, pick }
}

/** Common words first: a Zipf-like pick makes "order" common and the tail rare, as in real chats. */
const vocabulary = (
  "order the a to and of is it for you on that this with be are have not we can at do from but so if my " +
  "delivery payment invoice refund ticket account password login update release version build deploy server " +
  "database backup meeting tomorrow today tonight morning please thanks hello ok sure great done check send " +
  "price discount stock available shipping address phone email support help question answer problem issue " +
  "fixed broken working schedule weekend monday friday photo video file link report status pending confirmed " +
  "cancelled привет спасибо заказ доставка café naïve déjà"
).split(" ")

const rareWord = "zanzibar"

const firstNames = ["Anna", "Boris", "Chen", "Diego", "Elif", "Farah", "Greg", "Hana", "Ivan", "Jules", "Kemal",
  "Lena", "Mateo", "Nadia", "Omar", "Priya", "Rosa", "Sven", "Tariq", "Zoe", "Алексей", "Мария"]

interface SeedChat {
  readonly botId: number
  readonly id: number
  readonly type: "private" | "supergroup"
  readonly title: string
  readonly users: ReadonlyArray<{ readonly id: number; readonly first_name: string; readonly username: string }>
  nextId: number
}

export interface Seeded {
  readonly botIds: ReadonlyArray<number>
  readonly busyBot: number
  readonly busyChat: number
  readonly seconds: number
  readonly indexSeconds: number
}

/** Rows into a PostgreSQL table by multi-row inserts, `ON CONFLICT DO NOTHING`. */
const insertRows = async (
  client: pg.Client,
  tableName: string,
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>
) => {
  const per = Math.floor(30_000 / columns.length)
  for (let from = 0; from < rows.length; from += per) {
    const slice = rows.slice(from, from + per)
    const values = slice.map((_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(", ")})`)
    await client.query(
      `INSERT INTO ${tableName} (${columns.join(", ")}) VALUES ${values.join(", ")} ON CONFLICT DO NOTHING`,
      slice.flat()
    )
  }
}

/**
 * Seeds the inbox's history into a fresh storage: bots and messages through the stores, chats, people and members
 * by bulk inserts (better-sqlite3 for SQLite, multi-row inserts for PostgreSQL); on SQLite the search index is
 * then filled as its batched indexing fills it (PostgreSQL's words are written with each message).
 */
export const seedInbox = async (storage: Storage.Storage, messages: number, chatCount: number): Promise<Seeded> => {
  const botIds = await Effect.runPromise(
    Effect.gen(function*() {
      const bots = yield* BotStore.BotStore
      const ids: Array<number> = []
      for (let i = 1; i <= botCount; i++) {
        const bot = yield* bots.insertBot({
          token: Redacted.make(`${7_000_000_000 + i * 7919}:AA${randomBytes(25).toString("base64url").slice(0, 33)}`),
          name: `Inbox bot ${i}`,
          source: "web",
          manage_enabled: true,
          proxy_enabled: false,
          backend_url: "",
          secret_token: Redacted.make(""),
          long_poll_enabled: false,
          description: "",
          created_at: new Date(Date.UTC(2025, 0, i)).toISOString()
        })
        yield* bots.updateBot(bot.id, { disabled: true })
        ids.push(bot.id)
      }
      return ids
    }).pipe(Effect.provide(storage.layer))
  )
  const random = prng(0x1b0c5)
  const zipf = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(vocabulary.length * random.next() ** 3))]!
  const chats: Array<SeedChat> = []
  for (let c = 0; c < chatCount; c++) {
    const group = c % 4 === 0
    const users = Array.from({ length: group ? random.int(3, 20) : 1 }, () => {
      const first = random.pick(firstNames)
      const id = random.int(10_000_000, 7_999_999_999)
      return { id, first_name: first, username: `${first.toLowerCase()}_${id % 100_000}` }
    })
    chats.push({
      botId: botIds[c % botCount]!,
      id: group ? -1_001_000_000_000 - c : users[0]!.id,
      type: group ? "supergroup" : "private",
      title: group ? `${random.pick(vocabulary)} team ${c}` : "",
      users,
      nextId: 1
    })
  }
  const busy = chats[4]!
  const started = performance.now()
  let indexSeconds = 0
  const start = Math.floor(Date.now() / 1000) - messages * 3
  const chatRows: Array<ReadonlyArray<unknown>> = []
  const personRows: Array<ReadonlyArray<unknown>> = []
  const memberRows: Array<ReadonlyArray<unknown>> = []
  for (const chat of chats) {
    const first = chat.type === "private" ? chat.users[0]! : undefined
    const username = first?.username ?? ""
    const firstName = first?.first_name ?? ""
    chatRows.push([chat.botId, chat.id, chat.type, chat.title, username, firstName, "",
      [chat.title, username, firstName].join("\n").toLowerCase()])
    for (const user of chat.users) {
      personRows.push([chat.botId, user.id, user.username, user.first_name, "", start, start + messages * 3,
        [user.username, user.first_name].join("\n").toLowerCase()])
      memberRows.push([chat.botId, chat.id, user.id, start + messages * 3])
    }
  }
  const chatColumns = ["bot_id", "chat_id", "type", "title", "username", "first_name", "last_name", "search"]
  const personColumns = ["bot_id", "user_id", "username", "first_name", "last_name", "first_seen_at", "last_seen_at", "search"]
  const memberColumns = ["bot_id", "chat_id", "user_id", "last_seen_at"]
  if (storage.kind === "sqlite") {
    const database = new BetterSqlite3(storage.database)
    try {
      const insert = (name: string, columns: ReadonlyArray<string>) =>
        database.prepare(`INSERT OR IGNORE INTO ${name} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`)
      const insertChat = insert("botrelay_chats", chatColumns)
      const insertPerson = insert("botrelay_people", personColumns)
      const insertMember = insert("botrelay_chat_members", memberColumns)
      database.transaction(() => {
        for (const row of chatRows) insertChat.run(...row)
        for (const row of personRows) insertPerson.run(...row)
        for (const row of memberRows) insertMember.run(...row)
      })()
    } finally {
      database.close()
    }
  } else {
    await Storage.withClient(storage.database, async (client) => {
      await client.query("BEGIN")
      await insertRows(client, "botrelay_chats", chatColumns, chatRows)
      await insertRows(client, "botrelay_people", personColumns, personRows)
      await insertRows(client, "botrelay_chat_members", memberColumns, memberRows)
      await client.query("COMMIT")
    })
  }
  const batch = 10_000
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* MessageStore.MessageStore
      for (let from = 0; from < messages; from += batch) {
        const written: Array<Message.Message> = []
        for (let i = from; i < Math.min(messages, from + batch); i++) {
          const chat = i % 100 === 0 ? busy : random.pick(chats)
          const out = random.next() < 0.3
          const sender = out ? { id: 0, first_name: "", username: "" } : random.pick(chat.users)
          const words = Array.from({ length: random.int(2, 16) }, zipf)
          if (random.next() < 0.0005) words.push(rareWord)
          written.push({
            bot_id: chat.botId,
            chat_id: chat.id,
            id: chat.nextId++,
            user_id: sender.id,
            username: sender.username,
            first_name: sender.first_name,
            last_name: "",
            text: words.join(" "),
            date: start + i * 3,
            direction: out ? "out" : "in",
            edit_date: 0
          })
        }
        yield* store.saveMessages(written)
        process.stderr.write(`\rseeded ${count(Math.min(messages, from + batch))} messages`)
      }
    }).pipe(Effect.provide(storage.layer))
  )
  process.stderr.write("\n")
  if (storage.kind === "sqlite") {
    const database = new BetterSqlite3(storage.database)
    try {
      const indexing = performance.now()
      database.transaction(() => {
        database.prepare(
          "INSERT INTO botrelay_messages_fts (rowid, text, scope) SELECT message_rowid, text, scope FROM botrelay_messages_search"
        ).run()
        database.prepare("UPDATE botrelay_search_state SET indexed_upto = (SELECT max(rowid) FROM botrelay_messages)").run()
      })()
      indexSeconds = (performance.now() - indexing) / 1000
    } finally {
      database.close()
    }
  } else {
    const vacuum = performance.now()
    await Storage.withClient(storage.database, (client) => client.query("VACUUM ANALYZE"))
    indexSeconds = (performance.now() - vacuum) / 1000
  }
  return {
    botIds,
    busyBot: busy.botId,
    busyChat: busy.id,
    seconds: (performance.now() - started) / 1000 - indexSeconds,
    indexSeconds
  }
}

/** Bytes per table (and its indexes and FTS shadow tables) from SQLite's dbstat. */
const sizes = (filename: string): ReadonlyArray<readonly [string, number]> => {
  const database = new BetterSqlite3(filename, { readonly: true })
  try {
    const rows = database.prepare(
      `SELECT CASE
         WHEN name LIKE 'botrelay_messages_fts%' THEN 'search index'
         WHEN name LIKE '%message%' AND name NOT LIKE '%hours%' THEN 'messages'
         WHEN name LIKE '%chat%' OR name LIKE '%people%' OR name LIKE '%hours%' THEN 'chats, people, counters'
         ELSE 'other' END AS part, SUM(pgsize) AS bytes
       FROM dbstat GROUP BY part ORDER BY bytes DESC`
    ).all() as Array<{ part: string; bytes: number }>
    return rows.map((r) => [r.part, r.bytes] as const)
  } catch {
    return []
  } finally {
    database.close()
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

export interface Timing {
  readonly name: string
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly items: number
}

/** `requests` GETs of `path`, one at a time; fails unless each answers 200. */
const measure = async (botrelay: Botrelay, name: string, path: string, requests: number): Promise<Timing> => {
  const times: Array<number> = []
  let items = 0
  for (let i = 0; i < requests + 20; i++) {
    const started = performance.now()
    const response = await fetch(`${botrelay.url}${path}`, { headers: botrelay.headers })
    const text = await response.text()
    const elapsed = performance.now() - started
    if (response.status !== 200) throw new Error(`${name}: ${response.status} ${text.slice(0, 300)}`)
    if (i >= 20) times.push(elapsed)
    if (i === 0) {
      const body = JSON.parse(text) as unknown
      items = Array.isArray(body) ? body.length : (body as { items?: Array<unknown> }).items?.length ?? 1
    }
  }
  times.sort((a, b) => a - b)
  return { name, p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1)!, items }
}

/** Follows all pages of the chat list by cursor, timing each; returns the timing of every page request. */
const walkChats = async (botrelay: Botrelay, pages: number): Promise<Timing> => {
  const times: Array<number> = []
  let cursor: string | null = null
  let items = 0
  for (let i = 0; i < pages; i++) {
    const path: string = `/api/chats?limit=50${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const started = performance.now()
    const response = await fetch(`${botrelay.url}${path}`, { headers: botrelay.headers })
    const body = await response.json() as { items: Array<unknown>; next_cursor: string | null }
    times.push(performance.now() - started)
    if (response.status !== 200) throw new Error(`chats page ${i}: ${response.status} ${JSON.stringify(body)}`)
    items += body.items.length
    cursor = body.next_cursor
    if (cursor === null) break
  }
  times.sort((a, b) => a - b)
  return { name: `GET /api/chats, ${count(times.length)} pages by cursor`, p50: percentile(times, 50), p99: percentile(times, 99), max: times.at(-1)!, items }
}

interface Stream {
  readonly arrivals: Map<string, number>
  readonly close: () => void
}

/** An `/api/events` client (node:http, so that 100 of them cost the bench little) recording when each `message` event's text arrived. */
const follow = (botrelay: Botrelay, botId: number): Promise<Stream> =>
  new Promise((resolve, reject) => {
    const arrivals = new Map<string, number>()
    const request = get(`${botrelay.url}/api/events?bot_id=${botId}`, { headers: botrelay.headers }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`/api/events: ${response.statusCode}`))
      response.setEncoding("utf8")
      let buffer = ""
      response.on("data", (chunk: string) => {
        const now = performance.now()
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          if (!block.includes("event: message\n")) continue
          const data = block.split("\n").find((line) => line.startsWith("data: "))
          if (data === undefined) continue
          const text = (JSON.parse(data.slice(6)) as { message?: { text?: string } }).message?.text
          if (text !== undefined && !arrivals.has(text)) arrivals.set(text, now)
        }
      })
      response.on("error", () => undefined)
      resolve({ arrivals, close: () => request.destroy() })
    })
    request.on("error", (error) => arrivals.size === 0 ? reject(error) : undefined)
  })

export interface FanOut {
  readonly clients: number
  readonly messages: number
  readonly samples: number
  readonly missing: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/** `messages` user messages to a live bot, paced at `rate`/s; each one's arrival at each of `clients` streams. */
const fanOut = async (botrelay: Botrelay, fake: FakeTelegram.FakeTelegram, clients: number, messages: number, rate: number): Promise<FanOut> => {
  const tg = fake.addBot({ username: "inbox_events_bot" })
  const user = fake.addUser({ first_name: "Live" })
  const bot = await addBot(botrelay, { token: tg.token, name: "Live inbox bot", manage_enabled: true })
  await fake.waitForPoll(tg.id, "30 seconds")
  const streams = await Promise.all(Array.from({ length: clients }, () => follow(botrelay, bot.id)))
  await sleep(500)
  const sentAt = new Map<string, number>()
  for (let i = 0; i < messages; i++) {
    const text = `live ${i}`
    sentAt.set(text, performance.now())
    fake.userSends(tg.id, { user, text })
    await sleep(1000 / rate)
  }
  const deadline = performance.now() + 30_000
  while (performance.now() < deadline && streams.some((s) => s.arrivals.size < messages)) await sleep(50)
  const latencies: Array<number> = []
  let missing = 0
  for (const stream of streams) {
    for (const [text, sent] of sentAt) {
      const arrived = stream.arrivals.get(text)
      if (arrived === undefined) missing++
      else latencies.push(arrived - sent)
    }
    stream.close()
  }
  latencies.sort((a, b) => a - b)
  return {
    clients,
    messages,
    samples: latencies.length,
    missing,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.at(-1) ?? NaN
  }
}

/** What `measureInbox` measures. */
export interface InboxOptions {
  readonly messages: number
  readonly chats: number
  /** Requests per route. */
  readonly requests: number
  /** Requests of `GET /api/stats`, which adds up 30 days of every chat (about 0.1 s each on SQLite). */
  readonly statsRequests: number
  readonly sse: { readonly clients: number; readonly messages: number; readonly rate: number }
}

/** The figures of one storage. */
export interface InboxFigures {
  readonly seeded: Seeded
  /** The database's size, and its parts where the database tells them. */
  readonly bytes: number
  readonly parts: ReadonlyArray<readonly [string, number]>
  readonly timings: ReadonlyArray<Timing>
  readonly sse: FanOut
}

/** Seeds a fresh storage, starts a server on it and measures its routes and live events, one request at a time. */
export const measureInbox = async (storage: Storage.Storage, options: InboxOptions, name = "inbox"): Promise<InboxFigures> => {
  const fake = await FakeTelegram.start()
  let botrelay: Botrelay | undefined
  try {
    const seeded = await seedInbox(storage, options.messages, options.chats)
    let bytes: number
    let parts: ReadonlyArray<readonly [string, number]> = []
    if (storage.kind === "sqlite") {
      const database = new BetterSqlite3(storage.database)
      database.pragma("wal_checkpoint(TRUNCATE)")
      database.close()
      bytes = statSync(storage.database).size
      parts = sizes(storage.database)
    } else {
      bytes = await Storage.withClient(storage.database, async (client) =>
        Number((await client.query<{ bytes: string }>("SELECT pg_database_size(current_database()) AS bytes")).rows[0]!.bytes))
    }

    botrelay = await startBotrelay(storage.database, fake.apiRoot, name, { env: storage.env })
    const bot = seeded.busyBot
    const timings: Array<Timing> = []
    const run = async (label: string, path: string, requests = options.requests) => {
      process.stderr.write(`${name}: ${label}\n`)
      timings.push(await measure(botrelay!, label, path, requests))
    }
    await run("GET /api/chats (all bots)", "/api/chats")
    await run("GET /api/chats?bot_id", `/api/chats?bot_id=${bot}`)
    await run("GET /api/chats?unread=true", `/api/chats?bot_id=${bot}&unread=true`)
    await run("GET /api/chats?q=team", `/api/chats?q=team`)
    timings.push(await walkChats(botrelay, 40))
    await run("GET /api/search common word", `/api/search?q=order`)
    await run("GET /api/search rare word", `/api/search?q=${rareWord}`)
    await run("GET /api/search phrase", `/api/search?q=${encodeURIComponent('"please check"')}`)
    await run("GET /api/search prefix, one bot", `/api/search?q=deliv*&bot_id=${bot}`)
    await run("GET /api/search Cyrillic", `/api/search?q=${encodeURIComponent("Спасибо")}`)
    await run("GET /api/messages", `/api/messages?bot_id=${bot}&chat_id=${seeded.busyChat}&limit=50`)
    await run("GET /api/stats (all bots)", "/api/stats", options.statsRequests)
    await run("GET /api/people", `/api/people?bot_id=${bot}`)

    process.stderr.write(`${name}: SSE, ${options.sse.clients} clients, ${options.sse.messages} messages at ${options.sse.rate}/s\n`)
    const sse = await fanOut(botrelay, fake, options.sse.clients, options.sse.messages, options.sse.rate)
    return { seeded, bytes, parts, timings, sse }
  } finally {
    if (botrelay !== undefined) await stop(botrelay.child)
    await fake.close()
  }
}

/** The inbox suite's settings from the environment. */
export const inboxOptions = (statsRequests?: number): InboxOptions => {
  const requests = envInt("BENCH_INBOX_REQUESTS", 300)
  return {
    messages: envInt("BENCH_INBOX_MESSAGES", 1_000_000),
    chats: envInt("BENCH_INBOX_CHATS", 10_000),
    requests,
    statsRequests: statsRequests ?? requests,
    sse: { clients: envInt("BENCH_SSE_CLIENTS", 100), messages: envInt("BENCH_SSE_MESSAGES", 200), rate: envInt("BENCH_SSE_RATE", 50) }
  }
}

export const latency = (n: number) => `${n.toFixed(1)} ms`
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`

/** Runs the suite and prints its tables; throws when a request fails or an event never arrives. */
export const runInbox = async (): Promise<void> => {
  const options = inboxOptions()
  const { messages, requests } = options
  const storage = Storage.sqlite()
  try {
    const { bytes: fileBytes, parts, seeded, sse, timings } = await measureInbox(storage, options)
    process.stdout.write(
      `\nInbox: ${count(messages)} messages in ${count(options.chats)} chats over ${botCount} bots, seeded in ` +
        `${seeded.seconds.toFixed(1)} s (${count(messages / seeded.seconds)} messages/s with the chat and stats counters ` +
        `kept by the same code as live writes), then indexed for search in ${seeded.indexSeconds.toFixed(1)} s ` +
        `(${count(messages / seeded.indexSeconds)} messages/s, as the batched indexing does).\n` +
        `Database file ${mib(fileBytes)} (${mib(fileBytes / (messages / 1_000_000))} per million messages)` +
        (parts.length === 0 ? ".\n" : `: ${parts.map(([part, bytes]) => `${part} ${mib(bytes)}`).join(", ")}.\n`) +
        `Latency of one request at a time, ${requests} requests each after 20 warm-up requests:\n\n` +
        table(
          ["route", "items", "p50", "p99", "max"],
          timings.map((t) => [t.name, String(t.items), latency(t.p50), latency(t.p99), latency(t.max)]),
          1
        ) +
        `\n\nSSE fan-out: ${sse.clients} clients on /api/events, ${sse.messages} incoming messages at ${options.sse.rate}/s; ` +
        `time from the message entering FakeTelegram to its event at each client (${count(sse.samples)} samples, ` +
        `${sse.missing} missing): p50 ${latency(sse.p50)}, p99 ${latency(sse.p99)}, max ${latency(sse.max)}.\n\n`
    )
    if (sse.missing > 0) throw new Error(`${sse.missing} events never reached their client`)
  } finally {
    await storage.dispose()
  }
}
