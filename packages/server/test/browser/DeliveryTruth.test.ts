import type { Page } from "playwright-core"
import { FakeTelegram } from "@botrelay/testing"
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld
let support: Awaited<ReturnType<ConsoleWorld["addBot"]>>
let sales: Awaited<ReturnType<ConsoleWorld["addBot"]>>
let ann: ReturnType<ConsoleWorld["fake"]["addUser"]>

const messages = (page: Page) => page.getByRole("log", { name: "Messages" })
const article = (page: Page, text: string) => messages(page).getByRole("article").filter({ hasText: text })
const live = { timeout: 3000 }

describe.skipIf(!hasChromium)("delivery marks and unreachable people in the console", () => {
  beforeAll(async () => {
    world = await startConsole()
    support = await world.addBot({ name: "Support" }, { username: "support_bot" })
    sales = await world.addBot({ name: "Sales" }, { username: "sales_bot" })
    await world.fake.waitForPoll(support.tg.id, "10 seconds")
    await world.fake.waitForPoll(sales.tg.id, "10 seconds")
    ann = world.fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann_lee" })
    world.fake.userSends(support.tg.id, { user: ann, text: "Hi support" })
    world.fake.userSends(sales.tg.id, { user: ann, text: "Hi sales" })
    await world.signIn()
    await world.page.goto(`/chats/${support.id}/${ann.id}`)
    await article(world.page, "Hi support").waitFor(live)
  })
  afterAll(async () => {
    await world?.close()
  })

  it("an outgoing message shows Sent; the send carries an Idempotency-Key", async () => {
    const page = world.page
    const box = page.getByRole("textbox", { name: "Message" })
    await box.fill("How can we help?")
    const request = page.waitForRequest((r) => r.url().endsWith("/api/messages/send"))
    await box.press("Enter")
    await world.fake.waitForSent((s) => s.message.text === "How can we help?")
    await article(page, "How can we help?").getByRole("img", { name: "Sent", exact: true }).waitFor(live)
    assert.match((await request).headers()["idempotency-key"] ?? "", /^[0-9a-f-]{36}$/)
  })

  it("a blocked send shows Failed: <reason> and the unreachable notice naming the bot that can still reach them", async () => {
    const page = world.page
    world.fake.failNext("sendMessage", FakeTelegram.blockedByUser, { botId: support.tg.id })
    const box = page.getByRole("textbox", { name: "Message" })
    await box.fill("Are you there?")
    await box.press("Enter")
    const mark = article(page, "Are you there?").getByRole("img", {
      name: "Failed: Forbidden: bot was blocked by the user",
      exact: true
    })
    await mark.waitFor(live)
    const notice = page.getByRole("region", { name: "Unreachable through this bot" })
    await notice.waitFor(live)
    await expect.poll(() => notice.textContent(), live).toContain("Reachable through: Sales")
    assert.include(await notice.textContent(), "Forbidden: bot was blocked by the user")
    await article(page, "Are you there?").getByRole("button", { name: "Send again" }).waitFor()
  })

  it("a send whose answer never came shows Unknown and offers the resolve actions", async () => {
    const page = world.page
    world.fake.dropNext("sendMessage", { botId: support.tg.id })
    const box = page.getByRole("textbox", { name: "Message" })
    await box.fill("Did this arrive?")
    await box.press("Enter")
    const item = article(page, "Did this arrive?")
    await item.getByRole("img", { name: "Unknown", exact: true }).waitFor(live)
    assert.strictEqual(world.fake.sent(support.tg.id).filter((s) => s.message.text === "Did this arrive?").length, 1)
    await item.getByRole("button", { name: "Mark as sent" }).click()
    await item.getByRole("img", { name: "Sent", exact: true }).waitFor(live)
    assert.strictEqual(world.fake.sent(support.tg.id).filter((s) => s.message.text === "Did this arrive?").length, 1)
    await world.screenshot("delivery-truth")
    assert.deepStrictEqual(world.pageErrors, [])
  })
})
