import { afterAll, afterEach, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

describe.skipIf(!hasChromium)("console: Status", () => {
  let world: ConsoleWorld

  beforeAll(async () => {
    world = await startConsole()
    await world.addBot({ name: "Support" })
    await world.signIn()
  })

  afterAll(async () => {
    await world?.close()
  })

  afterEach(() => {
    assert.deepStrictEqual(world.pageErrors, [])
  })

  it("shows the instances and each bot's status, refreshing by itself", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Status" }).click()
    const instances = page.getByRole("table", { name: "Instances" })
    const bots = page.getByRole("table", { name: "Bot status" })
    for (const name of ["Instance", "Version", "Started", "Last heartbeat", "Bots held"]) {
      await instances.getByRole("columnheader", { name, exact: true }).waitFor()
    }
    for (const name of ["Bot", "Mode", "Lease", "Ingress", "Outbox", "Consumers"]) {
      await bots.getByRole("columnheader", { name, exact: true }).waitFor()
    }
    const self = (await world.server.call("/api/status")).json.self as string
    const instanceRow = instances.getByRole("row").filter({ hasText: self })
    await expect.poll(() => instanceRow.getByRole("rowheader").textContent()).toBe(`${self} (this instance)`)
    assert.strictEqual((await instanceRow.getByRole("cell").allTextContents())[0], "0.0.0")

    const support = bots.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "Support" }) })
    await expect.poll(() => support.getByRole("cell").allTextContents()).toEqual([
      "polling",
      `${self}, epoch 1`,
      expect.stringMatching(/^(last poll \d+\.\d s ago|polled elsewhere); /),
      "0 waiting, 0 dead",
      "none"
    ])

    await world.addBot({ name: "Newsroom" })
    await expect.poll(() => bots.getByRole("rowheader", { name: "Newsroom" }).count(), { timeout: 15_000 }).toBe(1)
    await world.screenshot("status")
  })

  it("is for admins: operators have no Status link", async () => {
    const operator = await world.newPage()
    await world.signIn({ username: "olga", role: "operator", page: operator })
    const nav = operator.getByRole("navigation", { name: "Main" })
    await nav.getByRole("link", { name: "Chats" }).waitFor()
    assert.strictEqual(await nav.getByRole("link", { name: "Status" }).count(), 0)
  })
})
