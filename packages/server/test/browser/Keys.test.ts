import { afterAll, afterEach, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

describe.skipIf(!hasChromium)("console: Keys", () => {
  let world: ConsoleWorld
  let botId: number

  beforeAll(async () => {
    world = await startConsole()
    botId = (await world.addBot({ name: "Support" })).id
    await world.signIn()
    await world.page.context().grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: new URL(world.server.baseUrl).origin
    })
  })

  afterAll(async () => {
    await world?.close()
  })

  afterEach(() => {
    assert.deepStrictEqual(world.pageErrors, [])
  })

  const keysTable = () => world.page.getByRole("table", { name: "Keys" })
  const keyRow = (name: string) => keysTable().getByRole("row").filter({ hasText: name })
  const serverKey = async (name: string) => {
    const list = await world.server.call("/api/auth/api-keys")
    return (list.json as Array<any>).find((k) => k.name === name)
  }

  it("creates an operator key through the dialogs; the secret is shown once, copies, and works as a Bearer key", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Keys" }).click()
    await keysTable().getByRole("row").filter({ hasText: "BOTRELAY_ADMIN_KEY" }).waitFor()

    await page.getByRole("button", { name: "Create key" }).click()
    const create = page.getByRole("dialog", { name: "Create key" })
    await create.getByRole("textbox", { name: "Name" }).fill("ci-script")
    await create.getByRole("combobox", { name: "Role" }).selectOption("operator")
    await create.getByRole("group", { name: "Bots" }).getByRole("checkbox", { name: "Support" }).check()
    await create.getByRole("button", { name: "Create" }).click()

    const shown = page.getByRole("dialog", { name: "New key" })
    const secretBox = shown.getByRole("textbox", { name: "Secret" })
    await secretBox.waitFor()
    assert.strictEqual(await secretBox.getAttribute("readonly"), "")
    const secret = await secretBox.inputValue()
    assert.match(secret, /^brk_[A-Za-z0-9_-]{43}$/)
    await create.waitFor({ state: "hidden" })

    await shown.getByRole("button", { name: "Copy" }).click()
    await shown.getByRole("status").filter({ hasText: "Copied" }).waitFor()
    assert.strictEqual(await page.evaluate(() => navigator.clipboard.readText()), secret)

    // the key works, within its scope
    const bots = await fetch(world.server.baseUrl + "/api/bots", { headers: { authorization: `Bearer ${secret}` } })
    assert.strictEqual(bots.status, 200)
    assert.deepStrictEqual((await bots.json() as Array<any>).map((b) => b.id), [botId])
    const keys = await fetch(world.server.baseUrl + "/api/auth/api-keys", { headers: { authorization: `Bearer ${secret}` } })
    assert.strictEqual(keys.status, 403)

    await shown.getByRole("button", { name: "Done" }).click()
    await shown.waitFor({ state: "hidden" })
    await keyRow("ci-script").waitFor()
    assert.notInclude(await page.content(), secret)
    assert.notInclude(await page.content(), secret.slice(12))

    const stored = await serverKey("ci-script")
    assert.strictEqual(stored.role, "operator")
    assert.deepStrictEqual(stored.bot_ids, [botId])
    assert.include(await keyRow("ci-script").textContent(), "operator")
    assert.include(await keyRow("ci-script").textContent(), "Support")
    await world.screenshot("keys")
  })

  it("shows the API's refusal at the field it names", async () => {
    const page = world.page
    await page.getByRole("button", { name: "Create key" }).click()
    const create = page.getByRole("dialog", { name: "Create key" })
    await create.getByRole("button", { name: "Create" }).click()
    const name = create.getByRole("textbox", { name: "Name" })
    await expect.poll(() => name.getAttribute("aria-invalid")).toBe("true")
    const describedBy = await name.getAttribute("aria-describedby")
    assert.isNotNull(describedBy)
    assert.include(await page.locator(`[id="${describedBy}"]`).textContent(), "name must not be empty")

    // an admin key has every bot: the picker is off
    await create.getByRole("combobox", { name: "Role" }).selectOption("admin")
    assert.isTrue(await create.getByRole("group", { name: "Bots" }).getByRole("checkbox", { name: "Support" }).isDisabled())
    await page.keyboard.press("Escape")
    await create.waitFor({ state: "hidden" })
    assert.isUndefined(await serverKey(""))
  })

  it("disables, enables and deletes a key (Delete asks first)", async () => {
    const page = world.page
    const created = await world.server.call("/api/auth/api-keys", { body: { name: "old-script", role: "admin" } })
    assert.strictEqual(created.status, 200, created.text)
    const secret: string = created.json.key
    await page.reload()
    const row = keyRow("old-script")
    await row.waitFor()

    await row.getByRole("button", { name: "Disable" }).click()
    await row.getByRole("button", { name: "Enable" }).waitFor()
    assert.isFalse((await serverKey("old-script")).enabled)
    const refused = await fetch(world.server.baseUrl + "/api/bots", { headers: { authorization: `Bearer ${secret}` } })
    assert.strictEqual(refused.status, 401)

    await row.getByRole("button", { name: "Enable" }).click()
    await row.getByRole("button", { name: "Disable" }).waitFor()
    assert.isTrue((await serverKey("old-script")).enabled)

    await row.getByRole("button", { name: "Delete" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Delete" })
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "hidden" })
    assert.isDefined(await serverKey("old-script"))

    await row.getByRole("button", { name: "Delete" }).click()
    await confirm.getByRole("button", { name: "Delete" }).click()
    await row.waitFor({ state: "detached" })
    assert.isUndefined(await serverKey("old-script"))
  })

  it("shows the API's refusal to disable the last admin key in words", async () => {
    const page = world.page
    const admins = (await world.server.call("/api/auth/api-keys")).json.filter((k: any) => k.role === "admin" && k.enabled)
    assert.lengthOf(admins, 1)
    await keyRow("BOTRELAY_ADMIN_KEY").getByRole("button", { name: "Disable" }).click()
    await page.getByRole("alert").filter({ hasText: "admin" }).waitFor()
    assert.isTrue((await serverKey(admins[0].name)).enabled)
  })

  it("fits a 360 px wide screen: the table scrolls inside its frame", async () => {
    const small = await world.newPage({ width: 360, height: 740 })
    await world.signIn({ page: small })
    await small.goto("/keys")
    await small.getByRole("table", { name: "Keys" }).getByRole("row").filter({ hasText: "ci-script" }).waitFor()
    assert.isAtMost(await small.evaluate(() => document.documentElement.scrollWidth), 360)
    await small.getByRole("button", { name: "Create key" }).click()
    const create = small.getByRole("dialog", { name: "Create key" })
    const box = await create.boundingBox()
    assert.isNotNull(box)
    assert.isAtMost(box.x + box.width, 360)
    await small.close()
  })
})
