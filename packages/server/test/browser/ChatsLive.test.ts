import type { Request } from "playwright-core"
import { afterAll, assert, beforeAll, describe, expect, it } from "vitest"
import { type ConsoleWorld, hasChromium, startConsole } from "./Console.js"

let world: ConsoleWorld
let bot: Awaited<ReturnType<ConsoleWorld["addBot"]>>

/**
 * The chats' live stream when it breaks: the server cuts off a stream whose client falls more than
 * two events behind (`--events-max-pending 2`), so a burst of messages (a `message` and a `chat` event
 * each) cuts the console's stream, while one message at a time goes through.
 */
describe.skipIf(!hasChromium)("the chats' live stream", () => {
  beforeAll(async () => {
    world = await startConsole({ server: { flags: { "events-max-pending": "2" } } })
    bot = await world.addBot({ name: "Desk" }, { username: "desk_bot" })
    await world.fake.waitForPoll(bot.tg.id, "10 seconds")
    await world.signIn()
  })
  afterAll(async () => {
    await world?.close()
  })

  const streams: Array<Request> = []
  const chatLoads: Array<Request> = []
  const watch = () =>
    world.page.on("request", (r) => {
      const path = new URL(r.url()).pathname
      if (path === "/api/events") streams.push(r)
      if (path === "/api/chats") chatLoads.push(r)
    })

  it("reconnects after a cut-off with Last-Event-ID and replays what it missed, without reloading", async () => {
    const page = world.page
    watch()
    const first = world.fake.addUser({ first_name: "Rita" })
    world.fake.userSends(bot.tg.id, { user: first, text: "hi" })
    const list = page.getByRole("list", { name: "Chats" })
    await list.getByRole("link", { name: "Rita · Desk" }).click()
    const log = page.getByRole("log", { name: "Messages" })
    await log.getByRole("article").filter({ hasText: "hi" }).waitFor()
    // one message: its events come through live, and the console holds an event id to replay from
    world.fake.userSends(bot.tg.id, { user: first, text: "still there?" })
    await log.getByRole("article").filter({ hasText: "still there?" }).waitFor()
    const before = { streams: streams.length, loads: chatLoads.length }

    const burst = world.fake.addUser({ first_name: "Burst" })
    for (let i = 0; i < 6; i++) world.fake.userSends(bot.tg.id, { user: burst, text: `burst ${i}` })
    for (let i = 0; i < 6; i++) world.fake.userSends(bot.tg.id, { user: first, text: `again ${i}` })
    const item = list.getByRole("listitem").filter({ has: page.getByRole("link", { name: "Burst · Desk" }) })
    await item.getByLabel("6 unread").waitFor()
    await log.getByRole("article").filter({ hasText: "again 5" }).waitFor()
    assert.strictEqual(await log.getByRole("article").count(), 8)
    assert.isTrue(world.server.logs.some((l) => l.includes("an event stream was cut off")), "the stream was cut off")
    const again = streams.slice(before.streams)
    assert.isAtLeast(again.length, 1, "the stream was opened again")
    const replayedFrom = (await again[0]!.allHeaders())["last-event-id"]
    assert.match(replayedFrom ?? "", /^\d+$/, "from the last event it had")
    assert.strictEqual(chatLoads.length, before.loads, "replayed, not reloaded")
    assert.deepStrictEqual(world.pageErrors, [])
  })

  it("reloads what it shows when the server cannot replay (reset), then goes on live", async () => {
    const page = world.page
    // the next stream, after a cut-off, says `reset` (as when the log no longer reaches back) and ends;
    // the browser reconnects from its id, which the server's log never held: a real `reset` follows
    let served = false
    await page.route("**/api/events*", async (route) => {
      if (served) return route.continue()
      served = true
      await route.fulfill({
        status: 200,
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
        body: `retry: 100\nid: 999999999\nevent: reset\ndata: {"type":"reset"}\n\n`
      })
      await page.unroute("**/api/events*")
    })
    const before = { streams: streams.length, loads: chatLoads.length }
    const late = world.fake.addUser({ first_name: "Lena" })
    for (let i = 0; i < 12; i++) world.fake.userSends(bot.tg.id, { user: late, text: `late ${i}` })
    const item = page.getByRole("list", { name: "Chats" }).getByRole("listitem")
      .filter({ has: page.getByRole("link", { name: "Lena · Desk" }) })
    await item.getByLabel("12 unread").waitFor()
    await expect.poll(() => streams.length).toBeGreaterThan(before.streams + 1)
    assert.isTrue(served)
    assert.isAbove(chatLoads.length, before.loads, "the list was loaded again")
    const last = (await streams.at(-1)!.allHeaders())["last-event-id"]
    assert.strictEqual(last, "999999999")
    // and the stream goes on
    world.fake.userSends(bot.tg.id, { user: late, text: "one more" })
    await item.getByLabel("13 unread").waitFor()
    assert.deepStrictEqual(world.pageErrors, [])
  })
})
