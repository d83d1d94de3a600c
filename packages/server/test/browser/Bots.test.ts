import type { Locator } from "playwright-core"
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld

/** The text of the elements a control's `aria-describedby` names (the API's sentence at a field). */
const description = (locator: Locator) =>
  locator.evaluate((el) =>
    (el.getAttribute("aria-describedby") ?? "").split(" ").map((id) => document.getElementById(id)?.textContent ?? "").join(" ")
  )

const bots = async () => (await world.server.call("/api/bots")).json as Array<any>
const botNamed = async (name: string) => (await bots()).find((b) => b.name === name)

describe.skipIf(!hasChromium)("the console's Bots page", () => {
  beforeAll(async () => {
    world = await startConsole()
    await world.signIn()
  })
  afterAll(async () => {
    await world?.close()
  })

  it("adds a bot through Add bot and shows it in Bots", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Bots" }).click()
    await page.waitForURL(/\/bots$/)
    const table = page.getByRole("table", { name: "Bots" })
    await table.waitFor()
    assert.deepStrictEqual(
      await table.getByRole("columnheader").allTextContents(),
      ["Name", "Username", "Status", "Mode", "Flags", "Actions"]
    )
    const tg = world.fake.addBot({ username: "support_desk_bot" })
    const add = page.getByRole("button", { name: "Add bot" })
    await add.click()
    const dialog = page.getByRole("dialog", { name: "Add bot" })
    await dialog.waitFor()
    const token = dialog.getByLabel("Token", { exact: true })
    assert.strictEqual(await token.getAttribute("type"), "password")
    await token.fill(tg.token)
    await dialog.getByRole("textbox", { name: "Name", exact: true }).fill("Support")
    await dialog.getByRole("checkbox", { name: "Manage" }).check()
    await dialog.getByRole("checkbox", { name: "Long polling" }).check()
    assert.isFalse(await dialog.getByRole("checkbox", { name: "Proxy" }).isChecked())
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    // The dialog gives focus back to what opened it.
    await expect.poll(() => add.evaluate((el) => el === document.activeElement)).toBe(true)

    const bot = await botNamed("Support")
    assert.deepInclude(bot, { manage_enabled: true, long_poll_enabled: true, proxy_enabled: false, disabled: false })
    assert.notInclude(JSON.stringify(bot), tg.token)
    const row = table.getByRole("row").filter({ hasText: "Support" })
    await row.waitFor()
    // The server polls the bot and learns its username from Telegram; the page reads its bots again on its own.
    await expect.poll(async () => (await botNamed("Support")).username, { timeout: 10_000 }).toBe("support_desk_bot")
    await expect.poll(() => row.getByRole("cell").nth(0).textContent(), { timeout: 10_000 }).toBe("@support_desk_bot")
    await expect.poll(() => row.getByRole("cell").nth(1).textContent(), { timeout: 10_000 }).toBe("running")
    assert.strictEqual(await row.getByRole("cell").nth(2).textContent(), "polling")
    assert.strictEqual(await row.getByRole("cell").nth(3).textContent(), "Manage, Long polling")
    assert.deepStrictEqual(await row.getByRole("button").allTextContents(), ["Edit", "Disable", "Delete"])
    await world.screenshot("bots")
  })

  it("edits a bot, keeping its token when Token is left blank", async () => {
    const page = world.page
    const before = await botNamed("Support")
    const row = page.getByRole("table", { name: "Bots" }).getByRole("row").filter({ hasText: "Support" })
    const edit = row.getByRole("button", { name: "Edit" })
    await edit.click()
    const dialog = page.getByRole("dialog", { name: "Edit bot" })
    await dialog.waitFor()
    const name = dialog.getByRole("textbox", { name: "Name", exact: true })
    assert.strictEqual(await name.inputValue(), "Support")
    assert.strictEqual(await dialog.getByLabel("Token", { exact: true }).inputValue(), "")
    assert.isTrue(await dialog.getByRole("checkbox", { name: "Manage" }).isChecked())
    await name.fill("Support desk")
    await dialog.getByRole("checkbox", { name: "Long polling" }).uncheck()
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    await expect.poll(() => edit.evaluate((el) => el === document.activeElement)).toBe(true)
    const after = await botNamed("Support desk")
    assert.deepInclude(after, { id: before.id, token: before.token, manage_enabled: true, long_poll_enabled: false })
    await expect.poll(() => row.getByRole("cell").nth(3).textContent()).toBe("Manage")

    // Escape closes the dialog without saving.
    await edit.click()
    await dialog.waitFor()
    await dialog.getByRole("textbox", { name: "Name", exact: true }).fill("Not saved")
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    assert.strictEqual((await botNamed("Support desk"))?.id, before.id)
  })

  it("disables and enables a bot", async () => {
    const page = world.page
    const row = page.getByRole("table", { name: "Bots" }).getByRole("row").filter({ hasText: "Support desk" })
    await row.getByRole("button", { name: "Disable" }).click()
    await row.getByRole("button", { name: "Enable" }).waitFor()
    assert.isTrue((await botNamed("Support desk")).disabled)
    assert.strictEqual(await row.getByRole("cell").nth(1).textContent(), "disabled")
    await row.getByRole("button", { name: "Enable" }).click()
    await row.getByRole("button", { name: "Disable" }).waitFor()
    assert.isFalse((await botNamed("Support desk")).disabled)
  })

  it("shows the API's sentence at Token for a bad or taken token, and creates nothing", async () => {
    const page = world.page
    const count = (await bots()).length
    await page.getByRole("button", { name: "Add bot" }).click()
    const dialog = page.getByRole("dialog", { name: "Add bot" })
    await dialog.waitFor()
    const token = dialog.getByLabel("Token", { exact: true })
    await token.fill("not-a-token")
    await dialog.getByRole("button", { name: "Save" }).click()
    const refused = await world.server.call("/api/bots/add", { body: { token: "not-a-token" } })
    assert.strictEqual(refused.status, 400)
    const sentence = refused.json.details.find((d: any) => d.path === "token").message
    await expect.poll(() => token.getAttribute("aria-invalid")).toBe("true")
    assert.strictEqual(await description(token), sentence)
    assert.isTrue(await dialog.isVisible())

    // A token another bot has: the API's 409 sentence, at Token too.
    const taken = world.fake.addBot()
    const first = await world.server.call("/api/bots/add", { body: { token: taken.token, name: "First" } })
    assert.strictEqual(first.status, 200, first.text)
    await token.fill(taken.token)
    await dialog.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => description(token)).toMatch(/already registered/)
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    // Only the bot the API added directly exists.
    assert.strictEqual((await bots()).length, count + 1)
  })

  it("deletes a bot after the Delete confirmation", async () => {
    const page = world.page
    const { id } = await world.addBot({ name: "Doomed" })
    await page.reload()
    const row = page.getByRole("table", { name: "Bots" }).getByRole("row").filter({ hasText: "Doomed" })
    await row.getByRole("button", { name: "Delete" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Delete" })
    await confirm.waitFor()
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "hidden" })
    assert.isDefined((await bots()).find((b) => b.id === id))
    await expect.poll(() => row.getByRole("button", { name: "Delete" }).evaluate((el) => el === document.activeElement)).toBe(true)
    await row.getByRole("button", { name: "Delete" }).click()
    await confirm.getByRole("button", { name: "Delete" }).click()
    await row.waitFor({ state: "detached" })
    assert.isUndefined((await bots()).find((b) => b.id === id))
    // The focus, whose button went with its row, lands on the page's heading.
    await expect.poll(() => page.getByRole("heading", { name: "Bots" }).evaluate((el) => el === document.activeElement)).toBe(true)
  })

  it("shows an operator their bots without the admin's buttons or Routes", async () => {
    const { id } = await world.addBot({ name: "Operated" })
    const page = await world.newPage({ width: 360, height: 740 })
    await world.signIn({ role: "operator", bot_ids: [id], username: "op", page })
    const nav = page.getByRole("navigation", { name: "Main" })
    assert.strictEqual(await nav.getByRole("link", { name: "Routes" }).count(), 0)
    await nav.getByRole("link", { name: "Bots" }).click()
    const table = page.getByRole("table", { name: "Bots" })
    const row = table.getByRole("row").filter({ hasText: "Operated" })
    await row.waitFor()
    assert.strictEqual(await table.getByRole("row").count(), 2)
    assert.strictEqual(await page.getByRole("button", { name: "Add bot" }).count(), 0)
    assert.strictEqual(await table.getByRole("button").count(), 0)
    // At 360 px the table scrolls inside its wrapper; the page itself does not.
    assert.isAtMost(await page.evaluate(() => document.documentElement.scrollWidth), 360)
    await page.goto("/routes")
    await page.waitForURL(/\/chats$/)
  })

  it("speaks Russian", async () => {
    const page = world.page
    await page.getByRole("combobox", { name: "Language" }).selectOption({ label: "Русский" })
    await page.getByRole("table", { name: "Боты" }).waitFor()
    await page.getByRole("button", { name: "Добавить бота" }).click()
    const dialog = page.getByRole("dialog", { name: "Добавить бота" })
    await dialog.getByLabel("Токен", { exact: true }).waitFor()
    await page.keyboard.press("Escape")
    await page.getByRole("combobox", { name: "Язык" }).selectOption({ label: "English" })
    await page.getByRole("table", { name: "Bots" }).waitFor()
    assert.deepStrictEqual(world.pageErrors, [])
  })
})
