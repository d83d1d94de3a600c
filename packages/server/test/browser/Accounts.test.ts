import type { Locator } from "playwright-core"
import { afterAll, afterEach, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

/** The API's sentence a field shows: its `aria-invalid` and the text its `aria-describedby` points at. */
const fieldError = async (field: Locator) => {
  await expect.poll(() => field.getAttribute("aria-invalid")).toBe("true")
  const ids = (await field.getAttribute("aria-describedby")) ?? ""
  const texts = await Promise.all(ids.split(" ").filter((id) => id !== "").map((id) =>
    field.page().locator(`[id="${id}"]`).textContent()
  ))
  return texts.join(" ")
}

describe.skipIf(!hasChromium)("console: Accounts", () => {
  let world: ConsoleWorld
  let botId: number

  beforeAll(async () => {
    world = await startConsole()
    botId = (await world.addBot({ name: "Support" })).id
    await world.addBot({ name: "Staff" })
    await world.signIn()
  })

  afterAll(async () => {
    await world?.close()
  })

  afterEach(() => {
    assert.deepStrictEqual(world.pageErrors, [])
  })

  const table = () => world.page.getByRole("table", { name: "Accounts" })
  const row = (username: string) => table().getByRole("row").filter({ hasText: username })
  const serverAccount = async (username: string) => {
    const list = await world.server.call("/api/accounts")
    return (list.json as Array<any>).find((a) => a.username === username)
  }

  it("creates an operator account through `Create account`; a short password gets the API's sentence at `Password`", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Accounts" }).click()
    await row("admin").waitFor()

    await page.getByRole("button", { name: "Create account" }).click()
    const dialog = page.getByRole("dialog", { name: "Create account" })
    await dialog.getByRole("textbox", { name: "Username" }).fill("olga")
    await dialog.getByRole("textbox", { name: "Display name" }).fill("Olga Petrova")
    const password = dialog.getByLabel("Password", { exact: true })
    await password.fill("too short")
    await dialog.getByRole("combobox", { name: "Role" }).selectOption("operator")
    await dialog.getByRole("group", { name: "Bots" }).getByRole("checkbox", { name: "Support" }).check()
    await dialog.getByRole("button", { name: "Save" }).click()
    assert.include(await fieldError(password), "password must be at least 10 characters")
    assert.isUndefined(await serverAccount("olga"))

    await password.fill("a long enough password")
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    await row("olga").waitFor()
    const olga = await serverAccount("olga")
    assert.strictEqual(olga.display_name, "Olga Petrova")
    assert.strictEqual(olga.role, "operator")
    assert.deepStrictEqual(olga.bot_ids, [botId])
    const text = await row("olga").textContent()
    assert.include(text, "Olga Petrova")
    assert.include(text, "operator")
    assert.include(text, "Support")
    await world.screenshot("accounts")
  })

  it("the operator signs in and sees no admin pages", async () => {
    const other = await world.newPage()
    await other.goto("/sign-in")
    await other.getByRole("textbox", { name: "Username" }).fill("olga")
    await other.getByRole("textbox", { name: "Password" }).fill("a long enough password")
    await other.getByRole("button", { name: "Sign in" }).click()
    const nav = other.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Chats" }).waitFor()
    for (const name of ["Keys", "Accounts", "Audit", "Settings", "Routes"]) {
      assert.strictEqual(await nav.getByRole("link", { name, exact: true }).count(), 0, name)
    }
    await other.goto("/accounts")
    await other.waitForURL((url) => url.pathname === "/chats")
    assert.strictEqual(await other.getByRole("table", { name: "Accounts" }).count(), 0)
    assert.isNotEmpty((await serverAccount("olga")).last_login_at)
    await other.close()
  })

  it("refuses, in words, to delete the last admin account", async () => {
    const page = world.page
    await row("admin").getByRole("button", { name: "Delete" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Delete" })
    await confirm.getByRole("button", { name: "Delete" }).click()
    const alert = confirm.getByRole("alert")
    await alert.waitFor()
    assert.include(await alert.textContent(), "last enabled admin account")
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "hidden" })
    assert.isDefined(await serverAccount("admin"))
  })

  it("edits an account: display name, bots, enabled; a reset password too short is refused at the field", async () => {
    const page = world.page
    await row("olga").getByRole("button", { name: "Edit" }).click()
    const dialog = page.getByRole("dialog", { name: "Edit account" })
    const newPassword = dialog.getByLabel("New password")
    await newPassword.fill("short")
    await dialog.getByRole("button", { name: "Save" }).click()
    assert.include(await fieldError(newPassword), "password must be at least 10 characters")

    await newPassword.fill("")
    await dialog.getByRole("textbox", { name: "Display name" }).fill("Olga P.")
    const bots = dialog.getByRole("group", { name: "Bots" })
    await bots.getByRole("checkbox", { name: "Staff" }).check()
    await dialog.getByRole("checkbox", { name: "Enabled" }).uncheck()
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    await expect.poll(async () => (await serverAccount("olga")).enabled).toBe(false)
    const olga = await serverAccount("olga")
    assert.strictEqual(olga.display_name, "Olga P.")
    assert.strictEqual(olga.bot_ids.length, 2)
    await expect.poll(() => row("olga").textContent()).toContain("Olga P.")

    // the last admin cannot be demoted either: the refusal is shown in the dialog
    await row("admin").getByRole("button", { name: "Edit" }).click()
    await dialog.getByRole("combobox", { name: "Role" }).selectOption("operator")
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.getByRole("alert").filter({ hasText: "last enabled admin account" }).waitFor()
    await page.keyboard.press("Escape")
    await dialog.waitFor({ state: "hidden" })
    assert.strictEqual((await serverAccount("admin")).role, "admin")
  })

  it("an admin resets another account's password", async () => {
    const page = world.page
    await row("olga").getByRole("button", { name: "Edit" }).click()
    const dialog = page.getByRole("dialog", { name: "Edit account" })
    await dialog.getByLabel("New password").fill("another long password")
    await dialog.getByRole("checkbox", { name: "Enabled" }).check()
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    const login = await fetch(world.server.baseUrl + "/api/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "olga", password: "another long password" })
    })
    assert.strictEqual(login.status, 200)
  })

  it("deletes an account after confirmation", async () => {
    const page = world.page
    await row("olga").getByRole("button", { name: "Delete" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Delete" })
    await confirm.getByRole("button", { name: "Delete" }).click()
    await row("olga").waitFor({ state: "detached" })
    assert.isUndefined(await serverAccount("olga"))
  })
})
