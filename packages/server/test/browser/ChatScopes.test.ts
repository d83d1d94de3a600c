import { afterAll, afterEach, assert, beforeAll, describe, expect, it } from "vitest"
import { stored } from "../Inbox.js"
import { type ConsoleWorld, hasChromium, password, startConsole } from "./Console.js"

describe.skipIf(!hasChromium)("console: chat-level scopes", () => {
  let world: ConsoleWorld
  let bot: Awaited<ReturnType<ConsoleWorld["addBot"]>>
  let one: { readonly id: number }

  beforeAll(async () => {
    world = await startConsole()
    bot = await world.addBot({ name: "Support" }, { username: "scopes_bot" })
    const bob = world.fake.addUser({ first_name: "Bob" })
    one = world.fake.addGroup({ title: "Group One", members: [bot.tg.id] })
    const two = world.fake.addGroup({ title: "Group Two", members: [bot.tg.id] })
    world.fake.userSends(bot.tg.id, { chat: one.id, user: bob, text: "in one" })
    world.fake.userSends(bot.tg.id, { chat: two.id, user: bob, text: "in two" })
    await stored(world, bot.id, one.id, "in one")
    await stored(world, bot.id, two.id, "in two")
    await world.signIn()
  }, 60_000)

  afterAll(async () => {
    await world?.close()
  })

  afterEach(() => {
    assert.deepStrictEqual(world.pageErrors, [])
  })

  it("`Edit scope` of a key narrows it to one chat with read only", async () => {
    const created = await world.server.call("/api/auth/api-keys", { body: { name: "reporter", role: "operator", bot_ids: [bot.id] } })
    assert.strictEqual(created.status, 200, created.text)
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Keys" }).click()
    const row = page.getByRole("table", { name: "Keys" }).getByRole("row").filter({ hasText: "reporter" })
    await row.getByRole("button", { name: "Edit scope" }).click()
    const dialog = page.getByRole("dialog", { name: "Scope of “reporter”" })
    await dialog.getByRole("textbox", { name: "Chats of Support" }).fill(String(one.id))
    const abilities = dialog.getByRole("group", { name: "Abilities in Support" })
    await abilities.getByRole("checkbox", { name: "Reply" }).uncheck()
    await abilities.getByRole("checkbox", { name: "Moderate" }).uncheck()
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })
    const key = (await world.server.call("/api/auth/api-keys")).json.find((k: any) => k.id === created.json.id)
    assert.deepStrictEqual(key.scopes, [{ bot_id: bot.id, chat_ids: [one.id], abilities: ["read"] }])
  })

  it("an account created with one chat of a bot sees only that chat in Chats", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Accounts" }).click()
    await page.getByRole("button", { name: "Create account" }).click()
    const dialog = page.getByRole("dialog", { name: "Create account" })
    await dialog.getByRole("textbox", { name: "Username" }).fill("desk")
    await dialog.getByLabel("Password", { exact: true }).fill(password)
    await dialog.getByRole("combobox", { name: "Role" }).selectOption("operator")
    await dialog.getByRole("group", { name: "Bots" }).getByRole("checkbox", { name: "Support" }).check()
    await dialog.getByRole("textbox", { name: "Chats of Support" }).fill(String(one.id))
    const abilities = dialog.getByRole("group", { name: "Abilities in Support" })
    await expect.poll(() => abilities.getByRole("checkbox", { name: "Reply" }).isChecked()).toBe(true)
    await abilities.getByRole("checkbox", { name: "Moderate" }).uncheck()
    await dialog.getByRole("button", { name: "Save" }).click()
    await dialog.waitFor({ state: "hidden" })

    const desk = (await world.server.call("/api/accounts")).json.find((a: any) => a.username === "desk")
    assert.deepStrictEqual(desk.scopes, [{ bot_id: bot.id, chat_ids: [one.id], abilities: ["read", "reply"] }])

    const other = await world.newPage()
    await other.goto("/sign-in")
    await other.getByRole("textbox", { name: "Username" }).fill("desk")
    await other.getByLabel("Password").fill(password)
    await other.getByRole("button", { name: "Sign in" }).click()
    await other.waitForURL(/\/chats$/)
    const chats = other.getByRole("list", { name: "Chats" })
    await chats.getByRole("listitem").filter({ hasText: "Group One" }).waitFor()
    assert.deepStrictEqual(await chats.getByRole("listitem").count(), 1)
    assert.notInclude(await chats.textContent(), "Group Two")
  })
})
