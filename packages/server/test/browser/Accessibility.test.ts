import { createRequire } from "node:module"
import { readFileSync } from "node:fs"
import type { Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

/** axe-core, the accessibility engine, injected into each page as it is. */
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface Violation {
  readonly id: string
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string>; readonly failureSummary?: string }>
}

/** WCAG 2.1 A and AA violations on the page as it is now. */
const violations = async (page: Page): Promise<ReadonlyArray<string>> => {
  await page.addScriptTag({ content: axeSource })
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<Violation> }> } }).axe
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    return result.violations
  })
  return found.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.help}) at ${n.target.join(" ")}: ${n.failureSummary ?? ""}`))
}

let world: ConsoleWorld

const pages = ["/chats", "/bots", "/routes", "/deliveries", "/keys", "/accounts", "/audit", "/status", "/settings"]

describe.skipIf(!hasChromium)("the console's accessibility (axe-core, WCAG 2.1 AA)", () => {
  beforeAll(async () => {
    world = await startConsole()
    const { tg, id } = await world.addBot({ name: "Support" }, { username: "support_bot" })
    const ann = world.fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann" })
    const team = world.fake.addGroup({ title: "Team", members: [tg.id] })
    world.fake.userSends(tg.id, { chat: ann.id, text: "Where is my order?" })
    world.fake.userSends(tg.id, { chat: team.id, user: ann, text: "Hello team" })
    await world.server.call("/api/routes/add", {
      body: { source_bot_id: id, target_bot_id: id, condition_type: "keyword", condition_value: "order", action: "drop" }
    })
    await world.signIn()
    await world.page.getByRole("list", { name: "Chats" }).getByRole("link").nth(1).waitFor()
  })
  afterAll(async () => {
    await world?.close()
  })

  it("finds a violation where there is one (the check itself works)", async () => {
    const page = await world.newPage()
    await page.getByRole("button", { name: "Sign in" }).waitFor()
    await page.evaluate(() => {
      const faint = document.createElement("p")
      faint.textContent = "hard to read"
      faint.style.cssText = "color: #bbbbbb; background: #ffffff"
      document.querySelector("main")!.append(faint)
      const unnamed = document.createElement("button")
      document.querySelector("main")!.append(unnamed)
    })
    const found = await violations(page)
    assert.isTrue(found.some((v) => v.startsWith("color-contrast")), found.join("\n"))
    assert.isTrue(found.some((v) => v.startsWith("button-name")), found.join("\n"))
  })

  for (const theme of ["light", "dark"] as const) {
    it(`has no violations on the sign-in page and every page, ${theme}`, async () => {
      const page = await world.newPage()
      await page.evaluate((t) => localStorage.setItem("botrelay.theme", t), theme)
      await page.goto("/sign-in")
      await page.getByRole("button", { name: "Sign in" }).waitFor()
      const found = [...(await violations(page)).map((v) => `/sign-in: ${v}`)]
      await world.signIn({ page })
      for (const path of pages) {
        await page.goto(path)
        await page.getByRole("heading", { level: 1 }).first().waitFor()
        await page.waitForLoadState("networkidle")
        found.push(...(await violations(page)).map((v) => `${path}: ${v}`))
      }
      const chat = page.getByRole("list", { name: "Chats" }).getByRole("link").first()
      await page.goto("/chats")
      await chat.click()
      await page.getByRole("log", { name: "Messages" }).getByRole("article").first().waitFor()
      found.push(...(await violations(page)).map((v) => `a chat: ${v}`))
      assert.strictEqual(await page.evaluate(() => document.documentElement.dataset.theme), theme)
      assert.deepStrictEqual(found, [])
    }, 60_000)
  }
})
