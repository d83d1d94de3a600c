import { randomBytes } from "node:crypto"
import { BotStore } from "@botrelay/core"
import type { Bot } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import BetterSqlite3 from "better-sqlite3"
import { Effect, Redacted } from "effect"

/** What the seeded database holds, and the chat the messages route reads. */
export interface Seeded {
  readonly bots: number
  readonly messages: number
  readonly botId: number
  readonly chatId: number
  readonly chatMessages: number
}

/** The size of the seeded data. */
export interface SeedOptions {
  readonly bots: number
  readonly chatsPerBot: number
  readonly messages: number
  readonly busyChatMessages: number
}

export const defaultSeedOptions: SeedOptions = {
  bots: 10,
  chatsPerBot: 20,
  messages: 100_000,
  busyChatMessages: 5_000
}

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

type Random = ReturnType<typeof prng>

const words = (
  "the a to and of is it for you on that this with be are have not we can at do from but so if my your " +
  "order delivery payment invoice refund ticket account password login update release version build deploy " +
  "server database backup meeting tomorrow today tonight morning please thanks hello hi ok sure great done " +
  "check send receive price discount stock available shipping address phone email support help question " +
  "answer problem issue fixed broken working test schedule weekend monday friday photo video file link " +
  "report status pending confirmed cancelled new old fast slow again later soon maybe yes no when where " +
  "why how what who channel group chat bot message reply forward pinned admin member welcome rules café " +
  "naïve déjà привет спасибо 👍 🙂 🚀"
).split(" ")

const firstNames = ["Anna", "Boris", "Chen", "Diego", "Elif", "Farah", "Greg", "Hana", "Ivan", "Jules", "Kemal", "Lena",
  "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Viktor", "Wen", "Yara", "Zoe"]
const lastNames = ["", "", "Smith", "Ivanova", "García", "Müller", "Kowalski", "Nguyen", "Rossi", "O'Brien", "Silva"]
const mediaTypes = ["photo", "photo", "photo", "video", "document", "sticker", "voice", "animation", "audio",
  "video_note"] as const

const sentence = (random: Random): string => {
  const length = random.next() < 0.7 ? random.int(2, 14) : random.int(15, 60)
  const parts: Array<string> = []
  for (let i = 0; i < length; i++) parts.push(random.pick(words))
  const text = parts.join(" ")
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${random.pick([".", ".", "!", "?", "", "..."])}`
}

interface User {
  readonly id: number
  readonly username: string
  readonly first_name: string
  readonly last_name: string
}

interface Chat {
  readonly botIndex: number
  readonly id: number
  readonly users: ReadonlyArray<User>
  nextId: number
}

const user = (random: Random): User => {
  const first = random.pick(firstNames)
  const id = random.int(10_000_000, 7_999_999_999)
  return {
    id,
    username: random.next() < 0.75 ? `${first.toLowerCase()}_${id % 10_000}` : "",
    first_name: first,
    last_name: random.pick(lastNames)
  }
}

const insertBots = (count: number) =>
  Effect.gen(function*() {
    const bots = yield* BotStore.BotStore
    const created: Array<Bot.StoredBot> = []
    for (let i = 1; i <= count; i++) {
      const proxy = i % 3 === 0
      created.push(
        yield* bots.insertBot({
          token: Redacted.make(`${6_000_000_000 + i * 7919}:AA${randomBytes(25).toString("base64url").slice(0, 33)}`),
          name: `Relay bot ${i}`,
          source: i === 1 ? "cli" : "web",
          manage_enabled: i % 2 === 1,
          proxy_enabled: proxy,
          backend_url: proxy ? `https://backend-${i}.example.com/telegram/webhook` : "",
          secret_token: Redacted.make(proxy ? randomBytes(24).toString("base64url") : ""),
          long_poll_enabled: !proxy,
          description: `Customer support bot number ${i}: answers orders, refunds and delivery questions.`,
          created_at: new Date(Date.UTC(2025, 0, i, 9, 30)).toISOString()
        })
      )
      yield* bots.updateBot(created[created.length - 1]!.id, { disabled: true })
    }
    return created
  })

/**
 * Creates the schema through `SqliteStores`, adds the bots through the `BotStore`, then bulk-inserts the
 * messages with better-sqlite3 in one transaction. One group chat gets `busyChatMessages` of them.
 * The bots are disabled, so the server's runtime leaves them alone and they read as not running, as in
 * the bare server.
 */
export const seed = async (filename: string, options: SeedOptions = defaultSeedOptions): Promise<Seeded> => {
  const bots = await Effect.runPromise(
    insertBots(options.bots).pipe(Effect.provide(SqliteStores.layer({ filename })))
  )

  const random = prng(0x5eed)
  const chats: Array<Chat> = []
  for (let b = 0; b < bots.length; b++) {
    for (let c = 0; c < options.chatsPerBot; c++) {
      const group = c % 3 === 0
      const members = group ? Array.from({ length: random.int(3, 12) }, () => user(random)) : [user(random)]
      chats.push({
        botIndex: b,
        id: group ? -1_001_000_000_000 - random.int(1, 999_999_999) : members[0]!.id,
        users: members,
        nextId: 1
      })
    }
  }
  const busyIndex = 2 * options.chatsPerBot + 3
  const busy = chats[busyIndex]!
  const busyEvery = Math.floor(options.messages / options.busyChatMessages)

  const database = new BetterSqlite3(filename)
  try {
    const insert = database.prepare(
      `INSERT INTO botrelay_messages (bot_id, chat_id, id, user_id, username, first_name, last_name, text, date,
        media_type, file_id, reply_to_message_id, direction, edit_date)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
    )
    const start = Math.floor(Date.UTC(2025, 1, 1) / 1000)
    database.transaction(() => {
      let busyCount = 0
      for (let i = 0; i < options.messages; i++) {
        const toBusy = i % busyEvery === 0 && busyCount < options.busyChatMessages
        let chat = busy
        if (toBusy) busyCount++
        else {
          do chat = random.pick(chats)
          while (chat === busy)
        }
        const bot = bots[chat.botIndex]!
        const id = chat.nextId++
        const date = start + i * 25 + random.int(0, 24)
        const out = random.next() < 0.3
        const from = out
          ? { id: 6_000_000_000 + bot.id * 7919, username: `relay_bot_${bot.id}`, first_name: bot.name, last_name: "" }
          : random.pick(chat.users)
        const media = random.next() < 0.12 ? random.pick(mediaTypes) : null
        const text = media === null || random.next() < 0.4 ? sentence(random) : ""
        insert.run(
          bot.id,
          chat.id,
          id,
          from.id,
          from.username,
          from.first_name,
          from.last_name,
          text,
          date,
          media,
          media === null ? null : `${media === "photo" ? "AgAC" : "BQAC"}${randomBytes(36).toString("base64url")}`,
          id > 1 && random.next() < 0.15 ? random.int(Math.max(1, id - 30), id - 1) : null,
          out ? "out" : "in",
          !out && random.next() < 0.05 ? date + random.int(10, 600) : 0
        )
      }
    })()
  } finally {
    database.close()
  }

  return {
    bots: bots.length,
    messages: options.messages,
    botId: bots[busy.botIndex]!.id,
    chatId: busy.id,
    chatMessages: busy.nextId - 1
  }
}
