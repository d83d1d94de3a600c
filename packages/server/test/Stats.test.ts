import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { BotApi } from "@botrelay/telegram"
import { assertError, eventually } from "./Harness.js"
import { addBot, type InboxWorld, operatorKey, startWorld, stored } from "./Inbox.js"

const hour = 3600
const day = 86400
/** Midnight UTC two days ago: the seeded messages fall on it, the next day and today. */
const base = Math.floor(Date.now() / 1000 / day) * day - 2 * day

let world: InboxWorld
let backend: { url: string; status: number; close: () => Promise<void> }
let s: Awaited<ReturnType<typeof addBot>>
let plain: Awaited<ReturnType<typeof addBot>>
let ann: BotApi.User
let bob: BotApi.User
let cleo: BotApi.User
let team: BotApi.Chat

const call = (path: string, init?: Parameters<InboxWorld["server"]["call"]>[1]) => world.server.call(path, init)
const dayName = (at: number) => new Date(at * 1000).toISOString().slice(0, 10)

/** A backend answering `status` to every POST, to be changed at will. */
const startBackend = async () => {
  const state = { status: 200 }
  const http: Server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(state.status)
      res.end()
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return Object.assign(state, {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  })
}

beforeAll(async () => {
  world = await startWorld(base)
  backend = await startBackend()
  s = await addBot(world, { proxy_enabled: true, backend_url: backend.url })
  plain = await addBot(world, { manage_enabled: false })
  ann = world.fake.addUser({ first_name: "Ann", last_name: "Lee" })
  bob = world.fake.addUser({ first_name: "Bob" })
  cleo = world.fake.addUser({ first_name: "Cleo" })
  team = world.fake.addGroup({ title: "Team", members: [s.tg.id] })

  const at = (t: number, send: () => void) => {
    world.clock = t
    send()
  }
  at(base - hour, () => world.fake.userSends(s.tg.id, { chat: ann.id, text: "before the range" }))
  at(base + 9 * hour, () => world.fake.userSends(s.tg.id, { chat: ann.id, text: "a1" }))
  at(base + 9 * hour + 10, () => world.fake.userSends(s.tg.id, { chat: ann.id, text: "a2" }))
  at(base + day + 14 * hour, () => world.fake.userSends(s.tg.id, { chat: team.id, user: bob, text: "t1" }))
  at(base + day + 14 * hour + 1, () => world.fake.userSends(s.tg.id, { chat: team.id, user: bob, text: "t2" }))
  at(base + day + 14 * hour + 2, () => world.fake.userSends(s.tg.id, { chat: team.id, user: ann, text: "t3" }))
  at(base + day + 23 * hour, () => world.fake.userSends(s.tg.id, { chat: cleo.id, text: "c1" }))
  at(base + 2 * day, () => world.fake.userSends(s.tg.id, { chat: ann.id, text: "a3" }))
  await stored(world, s.id, ann.id, "a3")
  await stored(world, s.id, cleo.id, "c1")
  await stored(world, s.id, team.id, "t3")
  world.clock = base + 9 * hour + 20
  const reply = await call("/api/messages/send", { body: { bot_id: s.id, chat_id: ann.id, text: "answer" } })
  assert.strictEqual(reply.status, 200, reply.text)
  await eventually(async () => {
    const stats = (await call(`/api/stats?bot_id=${s.id}&from=${base - day}&to=${base + 3 * day}`)).json
    return stats?.deliveries?.delivered === 8 ? true : undefined
  })
})
afterAll(async () => {
  await world?.close()
  await backend?.close()
})

describe("GET /api/stats", () => {
  it("exact figures of a seeded range, from the counters", async () => {
    const reply = await call(`/api/stats?bot_id=${s.id}&from=${base}&to=${base + 3 * day}`)
    assert.strictEqual(reply.status, 200, reply.text)
    const perHour = Array.from({ length: 24 }, () => 0)
    perHour[9] = 3
    perHour[14] = 3
    perHour[23] = 1
    perHour[0] = 1
    const { deliveries, ...figures } = reply.json
    assert.deepStrictEqual(figures, {
      totals: { in: 7, out: 1, chats: 3, people: 3, active_chats_7d: 3 },
      per_day: [
        { day: dayName(base), in: 2, out: 1 },
        { day: dayName(base + day), in: 4, out: 0 },
        { day: dayName(base + 2 * day), in: 1, out: 0 }
      ],
      per_hour: perHour,
      top_chats: [
        { bot_id: s.id, chat_id: ann.id, title: "Ann Lee", messages: 4 },
        { bot_id: s.id, chat_id: team.id, title: "Team", messages: 3 },
        { bot_id: s.id, chat_id: cleo.id, title: "Cleo", messages: 1 }
      ]
    })
    assert.deepInclude(deliveries, { delivered: 8, retrying: 0, dead: 0 })
    assert.isAtLeast(deliveries.p50_ms, 0)
    assert.isBelow(deliveries.p50_ms, 5000)
  })

  it("ranges cover the hours and days they touch; active chats count the 7 days up to `to`", async () => {
    const oneHour = (await call(`/api/stats?bot_id=${s.id}&from=${base + 9 * hour + 5}&to=${base + 9 * hour + 6}`)).json
    assert.deepStrictEqual(oneHour.totals, { in: 2, out: 1, chats: 3, people: 3, active_chats_7d: 1 })
    assert.deepStrictEqual(oneHour.per_day, [{ day: dayName(base), in: 2, out: 1 }])
    const firstDay = (await call(`/api/stats?bot_id=${s.id}&from=${base - day}&to=${base + day}`)).json
    assert.deepInclude(firstDay.totals, { in: 3, out: 1, active_chats_7d: 1 })
    assert.deepStrictEqual(firstDay.top_chats.map((c: any) => [c.chat_id, c.messages]), [[ann.id, 4]])
    assert.strictEqual(firstDay.per_day.length, 2)
    const later = (await call(`/api/stats?bot_id=${s.id}&from=${base + 10 * day}&to=${base + 11 * day}`)).json
    assert.deepStrictEqual(later.totals, { in: 0, out: 0, chats: 3, people: 3, active_chats_7d: 0 })
    assert.deepStrictEqual(later.top_chats, [])
    assert.deepStrictEqual(later.deliveries, { delivered: 0, retrying: 0, dead: 0, p50_ms: 0 })
  })

  it("by default the last 30 days up to now", async () => {
    const reply = (await call(`/api/stats?bot_id=${s.id}`)).json
    assert.deepInclude(reply.totals, { in: 8, out: 1 })
    assert.strictEqual(reply.per_day.length, 31)
    assert.strictEqual(reply.per_day.at(-1).day, dayName(Math.floor(Date.now() / 1000)))
  })

  it("deliveries: retrying while the backend fails, delivered once it answers, dead past the deadline", async () => {
    const flaky = await startBackend()
    const broken = await startBackend()
    try {
      flaky.status = 500
      broken.status = 500
      const f = await addBot(world, { proxy_enabled: true, backend_url: flaky.url })
      const d = await addBot(world, { proxy_enabled: true, backend_url: broken.url })
      const user = world.fake.addUser({ first_name: "Fay" })
      world.clock = Math.floor(Date.now() / 1000)
      world.fake.userSends(f.tg.id, { chat: user.id, text: "to flaky" })
      world.fake.userSends(d.tg.id, { chat: user.id, text: "to broken" })
      const figures = (botId: number) =>
        call(`/api/stats?bot_id=${botId}`).then((r) => r.json.deliveries)
      await eventually(async () => (await figures(f.id)).retrying === 1 || undefined)
      flaky.status = 200
      assert.deepInclude(await eventually(async () => {
        const now = await figures(f.id)
        return now.delivered === 1 ? now : undefined
      }), { retrying: 0, dead: 0 })
      await eventually(async () => (await figures(d.id)).dead === 1 || undefined, 10_000)
      const all = (await call("/api/stats")).json.deliveries
      assert.deepInclude(all, { delivered: 9, retrying: 0, dead: 1 })
      const mine = (await call("/api/stats", { key: await operatorKey(world, [f.id]) })).json
      assert.deepInclude(mine.deliveries, { delivered: 1, dead: 0 })
      assert.deepInclude(mine.totals, { in: 1, out: 0, chats: 1, people: 1 })
    } finally {
      await flaky.close()
      await broken.close()
    }
  }, 20_000)

  it("400 for a bad range, 403 outside the scope, 404 for an unknown bot, 409 without history", async () => {
    for (
      const query of [
        `from=${base}&to=${base}`,
        `from=${base + 10}&to=${base}`,
        `from=${base}&to=${base + 367 * day}`,
        "from=abc",
        "to=1.5",
        "from=-1",
        `from=${Math.floor(Date.now() / 1000) + day}`
      ]
    ) {
      assertError(await call(`/api/stats?bot_id=${s.id}&${query}`), 400, "invalid_request")
    }
    assert.strictEqual((await call(`/api/stats?bot_id=${s.id}&from=${base}&to=${base + 366 * day}`)).status, 200)
    const op = await operatorKey(world, [plain.id])
    assertError(await call(`/api/stats?bot_id=${s.id}`, { key: op }), 403, "forbidden")
    assertError(await call("/api/stats?bot_id=999999"), 404, "bot_not_found")
    assertError(await call(`/api/stats?bot_id=${plain.id}`), 409, "history_disabled")
    const none = (await call("/api/stats", { key: op })).json
    assert.deepInclude(none.totals, { in: 0, out: 0, chats: 0, people: 0 })
  })
})
