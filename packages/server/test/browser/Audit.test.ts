import { afterAll, afterEach, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

describe.skipIf(!hasChromium)("console: Audit", () => {
  let world: ConsoleWorld
  let botId: number

  beforeAll(async () => {
    world = await startConsole()
    botId = (await world.addBot({ name: "Support" })).id
    await world.signIn()
  })

  afterAll(async () => {
    await world?.close()
  })

  afterEach(() => {
    assert.deepStrictEqual(world.pageErrors, [])
  })

  const table = () => world.page.getByRole("table", { name: "Audit log" })
  /** The `Action` cells of the table's rows, top to bottom. */
  const actions = () => table().locator("tbody tr td:nth-child(3)").allTextContents()
  const serverActions = async (query: string) => {
    const page = await world.server.call(`/api/audit?limit=200${query}`)
    assert.strictEqual(page.status, 200, page.text)
    return (page.json.items as Array<any>).map((e) => e.action)
  }

  it("shows the log with the API's action names, newest first", async () => {
    const page = world.page
    // actions in the console (the sign-in, a key) and through the API (an account)
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Keys" }).click()
    await page.getByRole("button", { name: "Create key" }).click()
    const create = page.getByRole("dialog", { name: "Create key" })
    await create.getByRole("textbox", { name: "Name" }).fill("audited")
    await create.getByRole("button", { name: "Create" }).click()
    await page.getByRole("dialog", { name: "New key" }).getByRole("button", { name: "Done" }).click()
    const made = await world.server.call("/api/accounts", { body: { username: "vera", password: "a long enough password" } })
    assert.strictEqual(made.status, 200, made.text)

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Audit" }).click()
    for (const name of ["Time", "Actor", "Action", "Target", "Outcome"]) {
      await table().getByRole("columnheader", { name, exact: true }).waitFor()
    }
    await expect.poll(actions).toContain("accounts.create")
    const shown = await actions()
    assert.includeMembers(shown, ["auth.login", "keys.create", "accounts.create", "bots.add"])
    assert.deepStrictEqual(shown, (await serverActions("")).slice(0, shown.length))

    const keyRow = table().getByRole("row").filter({ hasText: "keys.create" }).filter({ hasText: "audited" })
    const cells = await keyRow.getByRole("cell").allTextContents()
    assert.strictEqual(cells[1], "admin")
    assert.strictEqual(cells[2], "keys.create")
    assert.match(cells[3]!, /^key \d+$/)
    assert.match(cells[4]!, /^okname: audited; role: operator; /)
    const viaKey = table().getByRole("row").filter({ hasText: "accounts.create" })
    assert.strictEqual((await viaKey.getByRole("cell").allTextContents())[1], "admin (BOTRELAY_ADMIN_KEY)")
    await world.screenshot("audit")
  })

  it("filters by Action, Actor and Bot, as the API does", async () => {
    const page = world.page
    const all = (await actions()).length
    await page.getByRole("combobox", { name: "Action" }).fill("keys.create")
    const created = await serverActions("&action=keys.create")
    assert.isAtLeast(created.length, 1)
    assert.isBelow(created.length, all)
    await expect.poll(actions).toEqual(created)

    await page.getByRole("combobox", { name: "Action" }).fill("")
    await page.getByRole("combobox", { name: "Actor" }).selectOption({ label: "admin (BOTRELAY_ADMIN_KEY)" })
    const expected = await serverActions("&actor_type=key&actor_id=1")
    assert.include(expected, "bots.add")
    assert.notInclude(expected, "auth.login")
    await expect.poll(actions).toEqual(expected)

    await page.getByRole("combobox", { name: "Actor" }).selectOption({ label: "Anyone" })
    await page.getByRole("combobox", { name: "Bot" }).selectOption({ label: "Support" })
    await expect.poll(actions).toEqual(await serverActions(`&bot_id=${botId}`))
    assert.include(await actions(), "bots.add")

    await page.getByRole("button", { name: "Clear filters" }).click()
    await expect.poll(async () => (await actions()).length).toBeGreaterThan(3)
  })

  it("pages with `Load more` through the API's cursor", async () => {
    const page = world.page
    for (let i = 0; i < 55; i++) {
      const reply = await world.server.call("/api/auth/api-keys", { body: { name: `bulk-${i}`, role: "admin" } })
      assert.strictEqual(reply.status, 200, reply.text)
    }
    await page.reload()
    await expect.poll(async () => (await actions()).length).toBe(50)
    const total = (await serverActions("")).length
    assert.isAbove(total, 50)
    await page.getByRole("button", { name: "Load more" }).click()
    await expect.poll(async () => (await actions()).length).toBe(total)
    assert.strictEqual(await page.getByRole("button", { name: "Load more" }).count(), 0)
    assert.deepStrictEqual(await actions(), await serverActions(""))
  })
})
