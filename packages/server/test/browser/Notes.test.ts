import type { Page } from "playwright-core"
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld
let bot: Awaited<ReturnType<ConsoleWorld["addBot"]>>
let ann: ReturnType<ConsoleWorld["fake"]["addUser"]>

const messages = (page: Page) => page.getByRole("log", { name: "Messages" })

describe.skipIf(!hasChromium)("notes, canned replies and shortcuts in the console", () => {
  beforeAll(async () => {
    world = await startConsole()
    bot = await world.addBot({ name: "Support" }, { username: "support_bot" })
    await world.fake.waitForPoll(bot.tg.id, "10 seconds")
    ann = world.fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann_lee" })
    world.fake.userSends(bot.tg.id, { user: ann, text: "Where is my order?" })
    const added = await world.server.call("/api/canned-replies/add", {
      body: { code: "greet", text: "Hello {first_name}, {bot_name} here." }
    })
    assert.strictEqual(added.status, 200, added.text)
    await world.server.call("/api/canned-replies/add", { body: { code: "bye", text: "Bye!" } })
    await world.signIn()
  })
  afterAll(async () => {
    await world?.close()
  })

  it("adds a note: it shows in the timeline as a private note and is not sent to Telegram", async () => {
    const page = world.page
    await page.getByRole("link", { name: "Ann Lee · Support" }).click()
    await messages(page).getByRole("article").filter({ hasText: "Where is my order?" }).waitFor()
    const sent = world.fake.sent().length
    await page.getByRole("textbox", { name: "Note", exact: true }).fill("Customer is a VIP")
    await page.getByRole("button", { name: "Add note", exact: true }).click()
    const note = messages(page).getByRole("note").filter({ hasText: "Customer is a VIP" })
    await note.waitFor()
    expect(await note.getAttribute("aria-label")).toMatch(/^Private note by /)
    assert.strictEqual(await page.getByRole("textbox", { name: "Note", exact: true }).inputValue(), "")
    assert.strictEqual(world.fake.sent().length, sent)
    assert.isFalse(world.fake.calls.some((c) => JSON.stringify(c).includes("Customer is a VIP")))
    await note.getByRole("button", { name: "Edit note" }).click()
    await note.getByRole("textbox", { name: "Edit note" }).fill("Customer is a VIP since 2020")
    await note.getByRole("button", { name: "Save note" }).click()
    const edited = messages(page).getByRole("note").filter({ hasText: "Customer is a VIP since 2020" })
    await edited.waitFor()
    await edited.getByRole("button", { name: "Delete note" }).click()
    await edited.waitFor({ state: "detached" })
    assert.strictEqual(await messages(page).getByRole("note").count(), 0)
  })

  it("typing /gre in Message lists the matching canned replies; Enter inserts the rendered reply", async () => {
    const page = world.page
    const box = page.getByRole("textbox", { name: "Message", exact: true })
    await box.click()
    await box.pressSequentially("/gre")
    const list = page.getByRole("listbox", { name: "Canned replies" })
    await list.getByRole("option", { name: /greet/ }).waitFor()
    assert.strictEqual(await list.getByRole("option").count(), 1)
    await box.press("Enter")
    await expect.poll(() => box.inputValue()).toBe("Hello Ann, Support here.")
    assert.strictEqual(await list.count(), 0)
    await box.fill("")
  })

  it("? opens the keyboard shortcuts dialog when focus is not in a text field", async () => {
    const page = world.page
    await messages(page).click()
    await page.keyboard.press("?")
    const dialog = page.getByRole("dialog", { name: "Keyboard shortcuts" })
    await dialog.waitFor()
    for (const key of ["?", "/", "j", "k", "e"]) await dialog.getByText(key, { exact: true }).waitFor()
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    await page.keyboard.press("/")
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe("TEXTAREA")
    await page.keyboard.press("?")
    assert.strictEqual(await page.getByRole("dialog", { name: "Keyboard shortcuts" }).isVisible(), false)
  })

  it("k and j open the previous and the next chat of the list", async () => {
    const page = world.page
    const bob = world.fake.addUser({ first_name: "Bob", username: "bob_b" })
    world.fake.userSends(bot.tg.id, { user: bob, text: "Bob here" })
    const chats = page.getByRole("list", { name: "Chats" })
    await chats.getByRole("link", { name: "Bob · Support" }).waitFor({ timeout: 3000 })
    await messages(page).click()
    const open = () => chats.locator("a[aria-current=page]").textContent()
    const first = await open()
    assert.strictEqual(first, "Ann Lee · Support")
    await page.keyboard.press("k")
    await expect.poll(open).toBe("Bob · Support")
    await messages(page).click()
    await page.keyboard.press("j")
    await expect.poll(open).toBe(first)
  })

  it("e resolves the open chat", async () => {
    const page = world.page
    await page.getByRole("button", { name: "Resolve", exact: true }).waitFor()
    await messages(page).click()
    await page.keyboard.press("e")
    await page.getByRole("button", { name: "Reopen", exact: true }).waitFor()
    const chat = await world.server.call(`/api/chats/get?bot_id=${bot.id}&chat_id=${ann.id}`)
    assert.strictEqual(chat.json.status, "resolved")
  })
})
