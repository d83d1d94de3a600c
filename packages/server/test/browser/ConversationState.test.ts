import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { storages } from "../Harness.js"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

/** The chat list's tabs and the open chat's conversation state: resolve, reopen, snooze, assign, priority, live. */
describe.skipIf(!hasChromium).each(storages)("conversation state in the console (%s)", (storage) => {
  let world: ConsoleWorld
  let bot: Awaited<ReturnType<ConsoleWorld["addBot"]>>

  beforeAll(async () => {
    world = await startConsole({ server: { storage } })
    bot = await world.addBot({ name: "Desk" }, { username: "desk_bot" })
    await world.fake.waitForPoll(bot.tg.id, "10 seconds")
    await world.signIn({ display_name: "Ada Admin" })
  })
  afterAll(async () => {
    await world?.close()
  })

  const count = (tab: string) => world.page.locator(`[data-tab-count="${tab}"]`)
  const counted = async (expected: Record<string, string>) => {
    for (const [tab, n] of Object.entries(expected)) {
      await count(tab).filter({ hasText: new RegExp(`^${n}$`) }).waitFor()
    }
  }
  const chatState = async (chatId: number) =>
    (await world.server.call(`/api/chats/get?bot_id=${bot.id}&chat_id=${chatId}`)).json

  it("tabs show kept counts; resolve, reopen, snooze, assign to me and priority change the chat and the counts", async () => {
    const page = world.page
    const rita = world.fake.addUser({ first_name: "Rita" })
    const sam = world.fake.addUser({ first_name: "Sam" })
    world.fake.userSends(bot.tg.id, { user: rita, text: "hi from Rita" })
    world.fake.userSends(bot.tg.id, { user: sam, text: "hi from Sam" })
    const tabs = page.getByRole("tablist")
    for (const name of ["Mine", "Unassigned", "All", "Resolved"]) {
      await tabs.getByRole("tab", { name, exact: true }).waitFor()
    }
    assert.strictEqual(await page.getByRole("tab", { name: "All", exact: true }).getAttribute("aria-selected"), "true")
    const list = page.getByRole("list", { name: "Chats" })
    await list.getByRole("link", { name: "Sam · Desk" }).waitFor()
    await counted({ mine: "0", unassigned: "2", all: "2", resolved: "0" })

    await list.getByRole("link", { name: "Rita · Desk" }).click()
    await page.getByRole("region", { name: "Conversation" }).getByText("Unassigned", { exact: true }).waitFor()
    await page.getByRole("button", { name: "Assign to me", exact: true }).click()
    await page.getByText("Assigned to Ada Admin").waitFor()
    await counted({ mine: "1", unassigned: "1", all: "2" })

    await page.getByRole("button", { name: "Resolve", exact: true }).click()
    await page.getByRole("button", { name: "Reopen", exact: true }).waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Resolve", exact: true }).count(), 0)
    await counted({ mine: "0", all: "1", resolved: "1" })
    await list.getByRole("link", { name: "Rita · Desk" }).waitFor({ state: "detached" })
    await page.getByRole("tab", { name: "Resolved", exact: true }).click()
    await list.getByRole("link", { name: "Rita · Desk" }).waitFor()
    assert.strictEqual(await list.getByRole("link", { name: "Sam · Desk" }).count(), 0)

    await page.getByRole("button", { name: "Reopen", exact: true }).click()
    await page.getByRole("button", { name: "Resolve", exact: true }).waitFor()
    await counted({ mine: "1", all: "2", resolved: "0" })
    await page.getByRole("tab", { name: "Mine", exact: true }).click()
    await list.getByRole("link", { name: "Rita · Desk" }).waitFor()
    assert.strictEqual(await list.getByRole("link", { name: "Sam · Desk" }).count(), 0)

    await page.getByRole("button", { name: "Snooze", exact: true }).click()
    const dialog = page.getByRole("dialog", { name: "Snooze until" })
    await dialog.getByRole("button", { name: "1 hour" }).click()
    await page.getByText(/^Snoozed until/).waitFor()
    await page.getByRole("button", { name: "Reopen", exact: true }).waitFor()
    const snoozed = await chatState(rita.id)
    assert.strictEqual(snoozed.status, "snoozed")
    assert.approximately(snoozed.snoozed_until, Math.floor(Date.now() / 1000) + 3600, 60)

    await page.getByRole("combobox", { name: "Priority" }).selectOption("high")
    await page.getByRole("combobox", { name: "Priority" }).and(page.locator(":enabled")).waitFor()
    assert.strictEqual((await chatState(rita.id)).priority, "high")

    // Rita writes again: the snoozed chat reopens by itself, and the console shows it live
    world.fake.userSends(bot.tg.id, { user: rita, text: "anyone?" })
    await page.getByRole("log", { name: "Messages" }).getByRole("article").filter({ hasText: "anyone?" }).waitFor()
    await page.getByRole("button", { name: "Reopen", exact: true }).waitFor({ state: "detached" })
    await page.getByRole("region", { name: "Conversation" }).getByText("Open", { exact: true }).waitFor()
    await counted({ mine: "1", unassigned: "1", all: "2", resolved: "0" })
    await world.screenshot("conversation-state")
    assert.deepStrictEqual(world.pageErrors, [])
  })
})
