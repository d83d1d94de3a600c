import { existsSync, mkdirSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { FakeTelegram } from "@botrelay/testing"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { assert } from "vitest"
import { startServer, type TestServer } from "../Harness.js"
import { addBot, type InboxWorld } from "../Inbox.js"

/** Debian's chromium (`apt-get install chromium`), or CHROMIUM_PATH. */
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

/** Whether the browser tests can run; they are skipped, with a message, where chromium is absent. */
export const hasChromium = existsSync(chromiumPath)
if (!hasChromium) {
  process.stderr.write(`browser tests skipped: no chromium at ${chromiumPath} (apt-get install chromium)\n`)
}

/** Where `screenshot` writes, when BOTRELAY_SCREENSHOTS is set: docs/console/. */
const screenshotDir = fileURLToPath(new URL("../../../../docs/console/", import.meta.url))

/** The password of every account the tests sign in with. */
export const password = "correct horse battery"

export interface Viewport {
  readonly width: number
  readonly height: number
}

/** The console's world: FakeTelegram with a settable clock, the real server serving the console, headless chromium. */
export interface ConsoleWorld extends InboxWorld {
  readonly browser: Browser
  /** A page (1280×800) at the console, not signed in. */
  readonly page: Page
  /** Uncaught errors of every page the world opened: a test expects none. */
  readonly pageErrors: Array<string>
  /** Registers a fake bot through the API; with history unless `manage_enabled` is false. */
  readonly addBot: (body?: Record<string, unknown>, options?: { readonly username?: string }) => ReturnType<typeof addBot>
  /**
   * Signs in through the form (on `page`, the world's page by default) as an account created through the
   * API the first time its username is used (admin "admin" by default); ends on /chats.
   */
  readonly signIn: (options?: {
    readonly username?: string
    readonly role?: "admin" | "operator"
    readonly bot_ids?: ReadonlyArray<number>
    /** Chat-level scopes instead of `bot_ids`. */
    readonly scopes?: ReadonlyArray<Record<string, unknown>>
    readonly display_name?: string
    readonly page?: Page
  }) => Promise<void>
  /** A page of its own (own cookies and storage) at the console. */
  readonly newPage: (viewport?: Viewport) => Promise<Page>
  /** With BOTRELAY_SCREENSHOTS set, saves docs/console/<name>-light.png and <name>-dark.png of the page. */
  readonly screenshot: (name: string, page?: Page) => Promise<void>
}

/** The world for a browser test file; `server` passes options to the test server (runtime, flags, ...). */
export const startConsole = async (
  options: { readonly clock?: number; readonly server?: Parameters<typeof startServer>[0] } = {}
): Promise<ConsoleWorld> => {
  const state = { clock: options.clock ?? Math.floor(Date.now() / 1000) }
  const fake = await FakeTelegram.start({ now: () => state.clock })
  let server: TestServer | undefined
  let browser: Browser | undefined
  try {
    server = await startServer({ ...options.server, telegramApi: fake.apiRoot })
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: ["--no-sandbox"] })
  } catch (e) {
    await browser?.close()
    await server?.close()
    await fake.close()
    throw e
  }
  const contexts: Array<BrowserContext> = []
  const pageErrors: Array<string> = []
  const created = new Set<string>()
  const newPage = async (viewport: Viewport = { width: 1280, height: 800 }) => {
    const context = await browser.newContext({ viewport, baseURL: server.baseUrl, reducedMotion: "reduce" })
    context.setDefaultTimeout(15_000)
    contexts.push(context)
    const page = await context.newPage()
    page.on("pageerror", (error) => pageErrors.push(error.message))
    await page.goto("/")
    return page
  }
  const page = await newPage()
  const world: ConsoleWorld = {
    fake,
    server,
    browser,
    page,
    pageErrors,
    get clock() {
      return state.clock
    },
    set clock(value: number) {
      state.clock = value
    },
    addBot: (body, botOptions) => addBot(world, body, botOptions),
    signIn: async (signIn = {}) => {
      const username = signIn.username ?? "admin"
      if (!created.has(username)) {
        const reply = await server.call("/api/accounts", {
          body: {
            username,
            password,
            role: signIn.role ?? "admin",
            ...(signIn.scopes === undefined ? { bot_ids: signIn.bot_ids ?? [] } : { scopes: signIn.scopes }),
            display_name: signIn.display_name ?? ""
          }
        })
        assert.strictEqual(reply.status, 200, reply.text)
        created.add(username)
      }
      const target = signIn.page ?? page
      await target.goto("/sign-in")
      await target.getByRole("textbox", { name: "Username" }).fill(username)
      await target.getByLabel("Password").fill(password)
      await target.getByRole("button", { name: "Sign in" }).click()
      await target.waitForURL(/\/chats$/)
    },
    newPage,
    screenshot: async (name, target = page) => {
      if (process.env.BOTRELAY_SCREENSHOTS === undefined) return
      mkdirSync(screenshotDir, { recursive: true })
      const theme = await target.evaluate(() => document.documentElement.dataset.theme)
      for (const shown of ["light", "dark"]) {
        await target.evaluate((t) => void (document.documentElement.dataset.theme = t), shown)
        await target.screenshot({ path: `${screenshotDir}${name}-${shown}.png` })
      }
      await target.evaluate((t) => void (document.documentElement.dataset.theme = t), theme)
    },
    close: async () => {
      for (const context of contexts) await context.close().catch(() => {})
      await browser.close()
      await server.close()
      await fake.close()
    }
  }
  return world
}
