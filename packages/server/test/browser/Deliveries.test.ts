import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../Harness.js"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld

/** A bot's backend: answers 500 until `healthy` is set, and keeps the updates it accepted. */
const backend = async () => {
  const state = { healthy: false, received: [] as Array<any> }
  const http: Server = createServer((req, res) => {
    let text = ""
    req.on("data", (chunk) => text += chunk)
    req.on("end", () => {
      if (state.healthy) state.received.push(JSON.parse(text))
      res.writeHead(state.healthy ? 200 : 500, { "content-type": "application/json" })
      res.end("")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`
  return { url, state, close: () => new Promise<void>((resolve) => http.close(() => resolve())) }
}

let hook: Awaited<ReturnType<typeof backend>>

/** Waits until the bot has `n` dead deliveries (the test server gives up after 2 seconds); returns them. */
const deadLetters = (botId: number, n: number) =>
  eventually(async () => {
    const reply = await world.server.call(`/api/deliveries?bot_id=${botId}&status=dead`)
    return reply.json.length === n ? reply.json as Array<any> : undefined
  }, 15_000)

describe.skipIf(!hasChromium)("the console's Deliveries page", () => {
  beforeAll(async () => {
    // The harness's short runtime (fastRuntime) dead-letters a delivery 2 seconds after it was queued.
    world = await startConsole()
    hook = await backend()
    await world.signIn()
  })
  afterAll(async () => {
    await world?.close()
    await hook?.close()
  })

  it("shows Dead letters even when there are none", async () => {
    const page = world.page
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Deliveries" }).click()
    await page.waitForURL(/\/deliveries$/)
    const table = page.getByRole("table", { name: "Dead letters" })
    await table.waitFor()
    assert.strictEqual(await table.getByRole("row").count(), 1)
    assert.isTrue(await page.getByRole("button", { name: "Retry all", exact: true }).isDisabled())
    assert.isTrue(await page.getByRole("button", { name: "Discard all", exact: true }).isDisabled())
    assert.strictEqual(await page.getByRole("search").getByLabel("Status").inputValue(), "dead")
  })

  it("retries a dead letter: the backend gets the update and the row goes", async () => {
    hook.state.healthy = false
    const { tg, id } = await world.addBot({ name: "Proxied", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(tg.id, { text: "lost in transit" })
    const [dead] = await deadLetters(id, 1)
    assert.strictEqual(dead.last_error, "HTTP 500")

    const page = world.page
    await page.goto("/deliveries")
    const table = page.getByRole("table", { name: "Dead letters" })
    const row = table.getByRole("row").filter({ hasText: "Proxied" })
    await row.waitFor()
    const cells = await row.getByRole("cell").allTextContents()
    assert.deepStrictEqual(cells.slice(0, 5), ["Proxied", `${dead.update_id} · message`, "Dead", String(dead.attempts), "HTTP 500"])
    assert.deepStrictEqual(await row.getByRole("button").allTextContents(), ["Retry", "Discard"])
    await world.screenshot("deliveries")

    hook.state.healthy = true
    await row.getByRole("button", { name: "Retry" }).click()
    await row.waitFor({ state: "detached" })
    await expect.poll(() => hook.state.received.map((u) => u.message?.text)).toEqual(["lost in transit"])
    await expect.poll(async () =>
      (await world.server.call(`/api/deliveries?bot_id=${id}`)).json.find((d: any) => d.id === dead.id)?.status
    ).toBe("delivered")
    assert.strictEqual(await table.getByRole("row").count(), 1)
  }, 30_000)

  it("discards a dead letter after confirming: never sent, listed under Discarded", async () => {
    hook.state.healthy = false
    hook.state.received.length = 0
    const { tg, id } = await world.addBot({ name: "Given up", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(tg.id, { text: "not wanted" })
    const [dead] = await deadLetters(id, 1)

    const page = world.page
    await page.goto("/deliveries")
    const table = page.getByRole("table", { name: "Dead letters" })
    const row = table.getByRole("row").filter({ hasText: "Given up" })
    await row.getByRole("button", { name: "Discard" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Discard" })
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "hidden" })
    assert.strictEqual((await world.server.call(`/api/deliveries?bot_id=${id}&status=dead`)).json.length, 1)
    await row.getByRole("button", { name: "Discard" }).click()
    await confirm.getByRole("button", { name: "Discard" }).click()
    await row.waitFor({ state: "detached" })
    const listed = (await world.server.call(`/api/deliveries?bot_id=${id}`)).json
    assert.deepStrictEqual(listed.map((d: any) => [d.id, d.status]), [[dead.id, "discarded"]])

    await page.getByRole("search").getByLabel("Status").selectOption({ label: "Discarded" })
    const discarded = table.getByRole("row").filter({ hasText: "Given up" })
    await discarded.waitFor()
    assert.strictEqual((await discarded.getByRole("cell").allTextContents())[2], "Discarded")
    assert.strictEqual(await discarded.getByRole("button").count(), 0)
    hook.state.healthy = true
    assert.strictEqual((await world.server.call(`/api/deliveries/retry?id=${dead.id}`, { method: "POST" })).status, 404)
    assert.deepStrictEqual(hook.state.received, [])
  }, 30_000)

  it("retries all dead letters of a bot, and discards all of another, after confirming", async () => {
    hook.state.healthy = false
    hook.state.received.length = 0
    const twice = await world.addBot({ name: "Twice", proxy_enabled: true, backend_url: hook.url })
    const dropped = await world.addBot({ name: "Dropped", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(twice.tg.id, { text: "first" })
    world.fake.userSends(twice.tg.id, { text: "second" })
    world.fake.userSends(dropped.tg.id, { text: "gone" })
    world.fake.userSends(dropped.tg.id, { text: "gone too" })
    await deadLetters(twice.id, 2)
    await deadLetters(dropped.id, 2)

    const page = world.page
    await page.goto("/deliveries")
    const table = page.getByRole("table", { name: "Dead letters" })
    const filters = page.getByRole("search")
    await filters.getByLabel("Bot").selectOption({ label: "Twice" })
    await expect.poll(() => table.getByRole("row").filter({ hasText: "Twice" }).count()).toBe(2)
    assert.strictEqual(await table.getByRole("row").filter({ hasText: "Dropped" }).count(), 0)
    hook.state.healthy = true
    await page.getByRole("button", { name: "Retry all", exact: true }).click()
    const retryAll = page.getByRole("alertdialog", { name: "Retry all", exact: true })
    assert.include(await retryAll.textContent(), "Every dead delivery of Twice")
    await retryAll.getByRole("button", { name: "Retry all", exact: true }).click()
    await retryAll.waitFor({ state: "hidden" })
    await expect.poll(() => page.getByRole("status").filter({ hasText: "put back" }).textContent()).toBe("2 put back in line.")
    await expect.poll(() => table.getByRole("row").count()).toBe(1)
    await expect.poll(() => hook.state.received.map((u) => u.message?.text)).toEqual(["first", "second"])

    await filters.getByLabel("Bot").selectOption({ label: "Dropped" })
    await expect.poll(() => table.getByRole("row").filter({ hasText: "Dropped" }).count()).toBe(2)
    await page.getByRole("button", { name: "Discard all", exact: true }).click()
    const discardAll = page.getByRole("alertdialog", { name: "Discard all", exact: true })
    await discardAll.getByRole("button", { name: "Discard all", exact: true }).click()
    await discardAll.waitFor({ state: "hidden" })
    await expect.poll(() => table.getByRole("row").count()).toBe(1)
    const statuses = (await world.server.call(`/api/deliveries?bot_id=${dropped.id}`)).json.map((d: any) => d.status)
    assert.deepStrictEqual(statuses, ["discarded", "discarded"])
    assert.deepStrictEqual(hook.state.received.map((u) => u.message?.text), ["first", "second"])
  }, 40_000)

  it("replays a range of update ids to the backend and shows what was queued and missing", async () => {
    hook.state.healthy = true
    hook.state.received.length = 0
    const { tg, id } = await world.addBot({ name: "Replayed", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(tg.id, { text: "again 1" })
    world.fake.userSends(tg.id, { text: "again 2" })
    const delivered = await eventually(async () => {
      const list = (await world.server.call(`/api/deliveries?bot_id=${id}&status=delivered`)).json as Array<any>
      return list.length === 2 ? list.map((d) => d.update_id as number).sort((a, b) => a - b) : undefined
    })

    const page = world.page
    await page.goto("/deliveries")
    const form = page.getByRole("form", { name: "Replay" })
    await form.getByLabel("Bot").selectOption({ label: "Replayed" })
    await form.getByLabel("From update_id").fill(String(delivered[1]))
    await form.getByLabel("To update_id").fill(String(delivered[0]))
    await form.getByRole("button", { name: "Replay" }).click()
    await expect.poll(() => form.getByText("to_update_id is before from_update_id").count()).toBe(1)

    await form.getByLabel("From update_id").fill(String(delivered[0]))
    await form.getByLabel("To update_id").fill(String(delivered[1]! + 1))
    await form.getByRole("button", { name: "Replay" }).click()
    await expect.poll(() => page.getByRole("status").filter({ hasText: "queued" }).textContent()).toBe("2 queued, 1 missing.")
    await expect.poll(() => hook.state.received.map((u) => u.message?.text)).toEqual(["again 1", "again 2", "again 1", "again 2"])
    const audit = (await world.server.call(`/api/audit?action=deliveries.replay&bot_id=${id}`)).json.items
    assert.deepStrictEqual(audit.map((e: any) => [e.outcome, e.details.queued, e.details.missing]).at(0), ["ok", 2, 1])
  }, 30_000)

  it("shows an operator the deliveries of their bots only, and lets them retry those", async () => {
    hook.state.healthy = false
    hook.state.received.length = 0
    const mine = await world.addBot({ name: "Mine", proxy_enabled: true, backend_url: hook.url })
    const theirs = await world.addBot({ name: "Theirs", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(mine.tg.id, { text: "mine" })
    world.fake.userSends(theirs.tg.id, { text: "theirs" })
    await deadLetters(mine.id, 1)
    await deadLetters(theirs.id, 1)

    const page = await world.newPage({ width: 360, height: 740 })
    await world.signIn({
      role: "operator",
      scopes: [{ bot_id: mine.id, abilities: ["read", "reply", "moderate", "configure"] }],
      username: "op",
      page
    })
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Deliveries" }).click()
    const table = page.getByRole("table", { name: "Dead letters" })
    const row = table.getByRole("row").filter({ hasText: "Mine" })
    await row.waitFor()
    assert.strictEqual(await table.getByRole("row").count(), 2)
    assert.deepStrictEqual(
      await page.getByRole("search").getByLabel("Bot").locator("option").allTextContents(),
      ["All bots", "Mine"]
    )
    assert.isAtMost(await page.evaluate(() => document.documentElement.scrollWidth), 360)
    hook.state.healthy = true
    await row.getByRole("button", { name: "Retry" }).click()
    await row.waitFor({ state: "detached" })
    await expect.poll(() => hook.state.received.map((u) => u.message?.text)).toEqual(["mine"])
    assert.strictEqual((await world.server.call(`/api/deliveries?bot_id=${theirs.id}&status=dead`)).json.length, 1)
    assert.deepStrictEqual(world.pageErrors, [])
  }, 30_000)
})
