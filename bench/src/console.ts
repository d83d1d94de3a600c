/**
 * The console suite: how heavy the console is and how fast it answers, in Debian's chromium driven by
 * playwright-core.
 * - on the demo (`botrelay demo --chats 10000`, its story running): the initial JavaScript (the
 *   gzip-encoded bytes of the scripts the chats page loads, from Resource Timing), and the chats page
 *   interactive: from navigation start to the first chat listed, and the main thread's long tasks
 *   (over 50 ms) until then (`performance.now()` from a MutationObserver, PerformanceObserver);
 * - on a server with 10,000 seeded chats and its own FakeTelegram: a new message, from FakeTelegram
 *   taking a user's message to its article in the open chat.
 *
 * Env: BENCH_CONSOLE_CHATS (10,000), BENCH_CONSOLE_MESSAGES (100,000 seeded), BENCH_CONSOLE_LOADS (5),
 * BENCH_CONSOLE_LIVE (10 messages), CHROMIUM_PATH (/usr/bin/chromium).
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { FakeTelegram } from "@botrelay/testing"
import BetterSqlite3 from "better-sqlite3"
import { chromium, type Browser, type Page } from "playwright-core"
import {
  addBot,
  type Botrelay,
  count,
  envInt,
  makeTempDir,
  removeTempDir,
  root,
  serverBin,
  sleep,
  startBotrelay,
  table
} from "./harness.js"
import { seedInbox } from "./inbox.js"
import { freePort, start, stop } from "./processes.js"
import * as Storage from "./storage.js"

const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
const password = "console bench password"

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const post = async (botrelay: Botrelay, path: string, body: unknown) => {
  const response = await fetch(`${botrelay.url}${path}`, {
    method: "POST",
    headers: { ...botrelay.headers, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
}

/** Records, in the page, when the first chat link shows and the long tasks until then. */
const observeFirstChat = () => {
  const marks = { firstChat: 0, longTasks: 0, longTaskMs: 0 }
  ;(window as unknown as { __marks: typeof marks }).__marks = marks
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (marks.firstChat === 0) {
        marks.longTasks++
        marks.longTaskMs += entry.duration
      }
    }
  }).observe({ type: "longtask", buffered: true })
  new MutationObserver((_, observer) => {
    if (document.querySelector('[role="list"][aria-label="Chats"] a, ul[aria-label="Chats"] a') !== null) {
      marks.firstChat = performance.now()
      observer.disconnect()
    }
  }).observe(document, { childList: true, subtree: true })
}

interface Load {
  readonly firstChat: number
  readonly domContentLoaded: number
  readonly longTasks: number
  readonly longTaskMs: number
  readonly scriptGzipBytes: number
  readonly scripts: number
}

/** Signs in through the form; ends on /chats. */
const signIn = async (page: Page, username: string, secret: string) => {
  await page.goto("/sign-in")
  await page.getByRole("textbox", { name: "Username" }).fill(username)
  await page.getByLabel("Password").fill(secret)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForURL(/\/chats$/)
}

const loadChats = async (page: Page): Promise<Load> => {
  await page.goto("/chats")
  await page.waitForFunction(() => (window as unknown as { __marks: { firstChat: number } }).__marks.firstChat > 0)
  return page.evaluate(() => {
    const marks = (window as unknown as { __marks: { firstChat: number; longTasks: number; longTaskMs: number } }).__marks
    const navigation = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming
    const scripts = (performance.getEntriesByType("resource") as Array<PerformanceResourceTiming>)
      .filter((r) => r.initiatorType === "script" || r.name.endsWith(".js"))
    return {
      firstChat: marks.firstChat,
      domContentLoaded: navigation.domContentLoadedEventEnd,
      longTasks: marks.longTasks,
      longTaskMs: marks.longTaskMs,
      scriptGzipBytes: scripts.reduce((sum, r) => sum + r.encodedBodySize, 0),
      scripts: scripts.length
    }
  })
}

/** `botrelay demo --chats N` on a free port, once its N extra chats are stored; its console login. */
const startDemo = async (chats: number) => {
  const port = await freePort()
  const child = start("demo", [serverBin, "demo", "--port", String(port), "--chats", String(chats)], {}, root)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600 && !/Press Ctrl-C/.test(child.output); i++) await sleep(100)
  const login = /Sign in:\s+(\S+) \/ (\S+)/.exec(child.output)
  const key = /API key:\s+(brk_\S+)/.exec(child.output)
  if (login === null || key === null) throw new Error(`the demo did not start:\n${child.output}`)
  const headers = { authorization: `Bearer ${key[1]}` }
  for (let i = 0; i < 1200; i++) {
    const stats = await (await fetch(`${url}/api/stats`, { headers })).json() as { totals?: { chats?: number } }
    if ((stats.totals?.chats ?? 0) >= chats) break
    await sleep(100)
  }
  return { child, url, username: login[1]!, password: login[2]! }
}

/** Loads the demo's chats page `loads` times, signed in. */
const demoLoads = async (browser: Browser, chats: number, loads: number): Promise<ReadonlyArray<Load>> => {
  const demo = await startDemo(chats)
  try {
    const context = await browser.newContext({ baseURL: demo.url, viewport: { width: 1280, height: 800 } })
    await context.addInitScript(observeFirstChat)
    const page = await context.newPage()
    await signIn(page, demo.username, demo.password)
    process.stderr.write(`loading the demo's /chats ${loads} times\n`)
    const results: Array<Load> = []
    for (let i = 0; i < loads; i++) results.push(await loadChats(page))
    await context.close()
    return results
  } finally {
    await stop(demo.child)
  }
}

/** The delay, in ms, from FakeTelegram taking each of `live` messages to its article in the open chat. */
const liveDelays = async (browser: Browser, chatCount: number, messages: number, live: number) => {
  const tempDir = makeTempDir()
  const fake = await FakeTelegram.start()
  let botrelay: Botrelay | undefined
  try {
    const filename = join(tempDir, "botrelay.db")
    process.stderr.write(`seeding ${chatCount} chats, ${messages} messages\n`)
    await seedInbox(Storage.sqliteFile(filename), messages, chatCount)
    const database = new BetterSqlite3(filename)
    database.pragma("wal_checkpoint(TRUNCATE)")
    database.close()
    botrelay = await startBotrelay(filename, fake.apiRoot, "console")
    await post(botrelay, "/api/accounts", { username: "bench", password, role: "admin" })
    const tg = fake.addBot({ username: "console_live_bot" })
    const bot = await addBot(botrelay, { token: tg.token, name: "Live console bot", manage_enabled: true })
    await fake.waitForPoll(tg.id, "30 seconds")
    const person = fake.addUser({ first_name: "Live", last_name: "Person" })
    fake.userSends(tg.id, { chat: person.id, text: "first" })

    const context = await browser.newContext({ baseURL: botrelay.url, viewport: { width: 1280, height: 800 } })
    const page = await context.newPage()
    await signIn(page, "bench", password)
    await page.goto(`/chats/${bot.id}/${person.id}`)
    await page.getByRole("log", { name: "Messages" }).getByRole("article").filter({ hasText: "first" }).waitFor()
    const delays: Array<number> = []
    for (let i = 0; i < live; i++) {
      const text = `live message ${i}`
      const shown = page.evaluate((wanted) =>
        new Promise<number>((resolve) => {
          const found = () =>
            [...document.querySelectorAll('[role="log"] article')].some((a) => a.textContent?.includes(wanted) === true)
          if (found()) return resolve(performance.timeOrigin + performance.now())
          new MutationObserver((_, observer) => {
            if (found()) {
              observer.disconnect()
              resolve(performance.timeOrigin + performance.now())
            }
          }).observe(document.body, { childList: true, subtree: true, characterData: true })
        }), text)
      const sent = Date.now()
      fake.userSends(tg.id, { chat: person.id, text })
      delays.push((await shown) - sent)
    }
    await context.close()
    return delays
  } finally {
    if (botrelay !== undefined) await stop(botrelay.child)
    await fake.close()
    removeTempDir(tempDir)
  }
}

export const runConsole = async (): Promise<void> => {
  if (!existsSync(chromiumPath)) {
    process.stdout.write(`\nConsole: skipped, no chromium at ${chromiumPath} (apt-get install chromium).\n`)
    return
  }
  const chatCount = envInt("BENCH_CONSOLE_CHATS", 10_000)
  const messages = envInt("BENCH_CONSOLE_MESSAGES", 100_000)
  const loads = envInt("BENCH_CONSOLE_LOADS", 5)
  const live = envInt("BENCH_CONSOLE_LIVE", 10)
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox"] })
  try {
    const results = await demoLoads(browser, chatCount, loads)
    const delays = await liveDelays(browser, chatCount, messages, live)
    const ms = (n: number) => `${n.toFixed(0)} ms`
    const first = results[0]!
    process.stdout.write(
      `\nConsole, chromium headless at 1280×800.\n` +
        `Initial JavaScript: ${(first.scriptGzipBytes / 1024).toFixed(1)} KB gzip-encoded in ${first.scripts} script(s).\n` +
        `The chats page on the demo with ${count(chatCount)} extra chats, ${loads} loads (reload while signed in):\n\n` +
        table(
          ["figure", "median", "max"],
          [
            ["DOMContentLoaded", ms(median(results.map((r) => r.domContentLoaded))), ms(Math.max(...results.map((r) => r.domContentLoaded)))],
            ["first chat listed", ms(median(results.map((r) => r.firstChat))), ms(Math.max(...results.map((r) => r.firstChat)))],
            ["long tasks until then", ms(median(results.map((r) => r.longTaskMs))), ms(Math.max(...results.map((r) => r.longTaskMs)))]
          ],
          1
        ) +
        `\n\nA new message in the open chat (${count(chatCount)} chats, ${count(messages)} messages stored), from ` +
        `FakeTelegram taking it to its article on screen (${live} messages): median ${ms(median(delays))}, ` +
        `max ${ms(Math.max(...delays))}.\n\n`
    )
  } finally {
    await browser.close()
  }
}
