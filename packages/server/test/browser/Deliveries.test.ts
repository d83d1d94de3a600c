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
    const reply = await world.server.call(`/api/bots/deliveries?bot_id=${botId}&status=dead`)
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
    assert.isTrue(await page.getByRole("button", { name: "Retry all" }).isDisabled())
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
    assert.deepStrictEqual(cells.slice(0, 4), ["Proxied", `${dead.update_id} · message`, String(dead.attempts), "HTTP 500"])
    assert.deepStrictEqual(await row.getByRole("button").allTextContents(), ["Retry", "Discard"])
    await world.screenshot("deliveries")

    hook.state.healthy = true
    await row.getByRole("button", { name: "Retry" }).click()
    await row.waitFor({ state: "detached" })
    await expect.poll(() => hook.state.received.map((u) => u.message?.text)).toEqual(["lost in transit"])
    await expect.poll(async () =>
      (await world.server.call(`/api/bots/deliveries?bot_id=${id}`)).json.find((d: any) => d.id === dead.id)?.status
    ).toBe("delivered")
    assert.strictEqual(await table.getByRole("row").count(), 1)
  }, 30_000)

  it("discards a dead letter after confirming: never sent, gone from the API", async () => {
    hook.state.healthy = false
    hook.state.received.length = 0
    const { tg, id } = await world.addBot({ name: "Given up", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(tg.id, { text: "not wanted" })
    const [dead] = await deadLetters(id, 1)

    const page = world.page
    await page.goto("/deliveries")
    const row = page.getByRole("table", { name: "Dead letters" }).getByRole("row").filter({ hasText: "Given up" })
    await row.getByRole("button", { name: "Discard" }).click()
    const confirm = page.getByRole("alertdialog", { name: "Discard" })
    await confirm.getByRole("button", { name: "Cancel" }).click()
    await confirm.waitFor({ state: "hidden" })
    assert.strictEqual((await world.server.call(`/api/bots/deliveries?bot_id=${id}&status=dead`)).json.length, 1)
    await row.getByRole("button", { name: "Discard" }).click()
    await confirm.getByRole("button", { name: "Discard" }).click()
    await row.waitFor({ state: "detached" })
    assert.deepStrictEqual((await world.server.call(`/api/bots/deliveries?bot_id=${id}`)).json, [])
    hook.state.healthy = true
    assert.strictEqual((await world.server.call(`/api/bots/deliveries/retry?id=${dead.id}`, { method: "POST" })).status, 404)
    assert.deepStrictEqual(hook.state.received, [])
  }, 30_000)

  it("retries all dead letters at once", async () => {
    hook.state.healthy = false
    hook.state.received.length = 0
    const { tg, id } = await world.addBot({ name: "Twice", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(tg.id, { text: "first" })
    world.fake.userSends(tg.id, { text: "second" })
    await deadLetters(id, 2)

    const page = world.page
    await page.goto("/deliveries")
    const table = page.getByRole("table", { name: "Dead letters" })
    await expect.poll(() => table.getByRole("row").filter({ hasText: "Twice" }).count()).toBe(2)
    hook.state.healthy = true
    await page.getByRole("button", { name: "Retry all" }).click()
    await expect.poll(() => table.getByRole("row").count()).toBe(1)
    await expect.poll(() => hook.state.received.map((u) => u.message?.text).sort()).toEqual(["first", "second"])
    assert.deepStrictEqual((await world.server.call(`/api/bots/deliveries?bot_id=${id}&status=dead`)).json, [])
  }, 30_000)

  it("shows an operator the dead letters of their bots only, without Retry", async () => {
    hook.state.healthy = false
    const mine = await world.addBot({ name: "Mine", proxy_enabled: true, backend_url: hook.url })
    const theirs = await world.addBot({ name: "Theirs", proxy_enabled: true, backend_url: hook.url })
    world.fake.userSends(mine.tg.id, { text: "mine" })
    world.fake.userSends(theirs.tg.id, { text: "theirs" })
    await deadLetters(mine.id, 1)
    await deadLetters(theirs.id, 1)

    const page = await world.newPage({ width: 360, height: 740 })
    await world.signIn({ role: "operator", bot_ids: [mine.id], username: "op", page })
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Deliveries" }).click()
    const table = page.getByRole("table", { name: "Dead letters" })
    await table.getByRole("row").filter({ hasText: "Mine" }).waitFor()
    assert.strictEqual(await table.getByRole("row").count(), 2)
    assert.strictEqual(await table.getByRole("button").count(), 0)
    assert.strictEqual(await page.getByRole("button", { name: "Retry all" }).count(), 0)
    assert.isAtMost(await page.evaluate(() => document.documentElement.scrollWidth), 360)
    assert.deepStrictEqual(world.pageErrors, [])
  }, 30_000)
})
