import type { Locator } from "playwright-core"
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld
let support: number
let staff: number

/** The text of the elements a control's `aria-describedby` names (the API's sentence at a field). */
const description = (locator: Locator) =>
  locator.evaluate((el) =>
    (el.getAttribute("aria-describedby") ?? "").split(" ").map((id) => document.getElementById(id)?.textContent ?? "").join(" ")
  )

const routes = async () => (await world.server.call("/api/routes")).json as Array<any>

describe.skipIf(!hasChromium)("the console's Routes page", () => {
  beforeAll(async () => {
    world = await startConsole()
    support = (await world.addBot({ name: "Support" })).id
    staff = (await world.addBot({ name: "Staff" })).id
    await world.signIn()
  })
  afterAll(async () => {
    await world?.close()
  })

  it("adds a route through Add route", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Routes" }).click()
    await page.waitForURL(/\/routes$/)
    const table = page.getByRole("table", { name: "Routes" })
    await table.waitFor()
    const add = page.getByRole("button", { name: "Add route" })
    await add.click()
    const dialog = page.getByRole("dialog", { name: "Add route" })
    await dialog.waitFor()
    const source = dialog.getByRole("combobox", { name: "Source bot" })
    assert.deepStrictEqual(await source.getByRole("option").allTextContents(), ["Support", "Staff"])
    assert.deepStrictEqual(
      await dialog.getByRole("combobox", { name: "Condition" }).getByRole("option").allTextContents(),
      ["all", "chat_id", "user_id", "keyword", "regex", "llm"]
    )
    assert.deepStrictEqual(
      await dialog.getByRole("combobox", { name: "Action" }).getByRole("option").allTextContents(),
      ["forward", "copy", "drop"]
    )
    assert.isTrue(await dialog.getByRole("checkbox", { name: "Enabled" }).isChecked())
    await source.selectOption({ label: "Support" })
    await dialog.getByRole("combobox", { name: "Target bot" }).selectOption({ label: "Staff" })
    await dialog.getByRole("combobox", { name: "Condition" }).selectOption("keyword")
    await dialog.getByRole("textbox", { name: "Value" }).fill("price, refund")
    await dialog.getByRole("combobox", { name: "Action" }).selectOption("copy")
    await dialog.getByRole("textbox", { name: "Target chat" }).fill("-100123")
    await dialog.getByRole("textbox", { name: "Description" }).fill("pricing questions to staff")
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    await expect.poll(() => add.evaluate((el) => el === document.activeElement)).toBe(true)

    const [route] = await routes()
    assert.deepInclude(route, {
      source_bot_id: support,
      target_bot_id: staff,
      condition_type: "keyword",
      condition_value: "price,refund",
      action: "copy",
      target_chat_id: -100123,
      description: "pricing questions to staff",
      enabled: true
    })
    const row = table.getByRole("row").filter({ hasText: "pricing questions to staff" })
    assert.deepStrictEqual(
      await row.getByRole("cell").allTextContents(),
      ["Support", "Staff", "keyword", "price,refund", "copy", "-100123", "pricing questions to staff", "yes", "EditDelete"]
    )
    await world.screenshot("routes")
  })

  it("shows the API's sentence at Value for a bad regex, and creates nothing", async () => {
    const page = world.page
    const before = await routes()
    await page.getByRole("button", { name: "Add route" }).click()
    const dialog = page.getByRole("dialog", { name: "Add route" })
    await dialog.waitFor()
    await dialog.getByRole("combobox", { name: "Condition" }).selectOption("regex")
    const value = dialog.getByRole("textbox", { name: "Value" })
    await value.fill("(")
    await dialog.getByRole("button", { name: "Save" }).click()
    await expect.poll(() => value.getAttribute("aria-invalid")).toBe("true")
    const refused = await world.server.call("/api/routes/add", {
      body: { source_bot_id: support, target_bot_id: support, condition_type: "regex", condition_value: "(", action: "forward" }
    })
    assert.strictEqual(refused.status, 400)
    const sentence = refused.json.details.find((d: any) => d.path === "condition_value").message
    assert.strictEqual(await description(value), sentence)
    // Nothing else is blamed: no form-level alert, no other field marked.
    assert.strictEqual(await dialog.getByRole("alert").count(), 0)
    assert.strictEqual(await dialog.locator("[aria-invalid=true]").count(), 1)
    assert.strictEqual((await routes()).length, before.length)

    // A fixed pattern saves.
    await value.fill("^/start")
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    const added = (await routes()).at(-1)
    assert.deepInclude(added, { condition_type: "regex", condition_value: "^/start", target_chat_id: 0 })
  })

  it("edits a route, replacing it whole", async () => {
    const page = world.page
    const [first] = await routes()
    const row = page.getByRole("table", { name: "Routes" }).getByRole("row").filter({ hasText: "pricing questions to staff" })
    await row.getByRole("button", { name: "Edit" }).click()
    const dialog = page.getByRole("dialog", { name: "Edit route" })
    await dialog.waitFor()
    assert.strictEqual(await dialog.getByRole("textbox", { name: "Value" }).inputValue(), "price,refund")
    assert.strictEqual(await dialog.getByRole("combobox", { name: "Target bot" }).inputValue(), String(staff))
    await dialog.getByRole("combobox", { name: "Action" }).selectOption("forward")
    await dialog.getByRole("textbox", { name: "Target chat" }).fill("")
    await dialog.getByRole("checkbox", { name: "Enabled" }).uncheck()
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    const edited = (await routes()).find((r) => r.id === first.id)
    assert.deepInclude(edited, { action: "forward", target_chat_id: 0, enabled: false, condition_value: "price,refund" })
    await expect.poll(() => row.getByRole("cell").nth(7).textContent()).toBe("no")
    assert.strictEqual(await row.getByRole("cell").nth(5).textContent(), "source chat")
  })

  it("deletes a route after the Delete confirmation", async () => {
    const page = world.page
    const [first] = await routes()
    const row = page.getByRole("table", { name: "Routes" }).getByRole("row").filter({ hasText: "pricing questions to staff" })
    await row.getByRole("button", { name: "Delete" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Delete" })
    await confirm.getByRole("button", { name: "Delete" }).click()
    await row.waitFor({ state: "detached" })
    assert.isUndefined((await routes()).find((r) => r.id === first.id))
    await expect.poll(() => page.getByRole("heading", { name: "Routes" }).evaluate((el) => el === document.activeElement)).toBe(true)
    assert.deepStrictEqual(world.pageErrors, [])
  })
})
