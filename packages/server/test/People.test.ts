import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { BotApi } from "@botrelay/telegram"
import { assertError, eventually } from "./Harness.js"
import { addBot, type InboxWorld, operatorKey, startWorld, stored } from "./Inbox.js"

const t0 = 1_750_000_000

let world: InboxWorld
let a: Awaited<ReturnType<typeof addBot>>
let b: Awaited<ReturnType<typeof addBot>>
let plain: Awaited<ReturnType<typeof addBot>>
let operator: string
let ann: BotApi.User
let bob: BotApi.User
let cleo: BotApi.User
let team: BotApi.Chat

const call = (path: string, init?: Parameters<InboxWorld["server"]["call"]>[1]) => world.server.call(path, init)
const userIds = (page: any) => page.items.map((p: any) => p.user_id)

beforeAll(async () => {
  world = await startWorld(t0)
  a = await addBot(world)
  b = await addBot(world)
  plain = await addBot(world, { manage_enabled: false, proxy_enabled: false })
  operator = await operatorKey(world, [a.id])
  ann = world.fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann", language_code: "de" })
  bob = world.fake.addUser({ first_name: "Bob", username: "bobby" })
  cleo = world.fake.addUser({ first_name: "Клео", language_code: "ru" })
  team = world.fake.addGroup({ title: "Team", members: [a.tg.id, b.tg.id] })

  world.clock = t0 + 10
  world.fake.userSends(a.tg.id, { chat: ann.id, text: "ann to a" })
  world.clock = t0 + 20
  world.fake.userSends(a.tg.id, { chat: team.id, user: bob, text: "bob in team" })
  world.clock = t0 + 30
  world.fake.userSends(b.tg.id, { chat: ann.id, text: "ann to b" })
  world.clock = t0 + 40
  world.fake.userSends(b.tg.id, { chat: cleo.id, text: "cleo to b" })
  await stored(world, a.id, ann.id, "ann to a")
  await stored(world, a.id, team.id, "bob in team")
  await stored(world, b.id, team.id, "bob in team")
  await stored(world, b.id, ann.id, "ann to b")
  await stored(world, b.id, cleo.id, "cleo to b")
})
afterAll(async () => {
  await world?.close()
})

describe("GET /api/people/get", () => {
  it("one person across the caller's bots: first and last seen, names, chats and tags", async () => {
    const tag = await call("/api/tags/add", { body: { bot_id: a.id, chat_id: ann.id, user_id: ann.id, tag: "vip" } })
    await call("/api/tags/add", { body: { bot_id: b.id, chat_id: ann.id, user_id: ann.id, tag: "b-only" } })
    const reply = await call(`/api/people/get?user_id=${ann.id}`)
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json, {
      user_id: ann.id,
      username: "ann",
      first_name: "Ann",
      last_name: "Lee",
      language_code: "de",
      is_bot: false,
      first_seen_at: t0 + 10,
      last_seen_at: t0 + 30,
      chats: [
        { bot_id: b.id, chat_id: ann.id, title: "Ann Lee", reachable: true, unreachable_since: 0, unreachable_reason: "" },
        { bot_id: a.id, chat_id: ann.id, title: "Ann Lee", reachable: true, unreachable_since: 0, unreachable_reason: "" }
      ],
      tags: [tag.json, (await call(`/api/tags?chat_id=${ann.id}&bot_id=${b.id}`)).json[0]],
      reachable_bot_ids: [b.id, a.id]
    })
  })

  it("an operator sees what its bots saw only; 404 for a user none of them saw", async () => {
    const mine = await call(`/api/people/get?user_id=${ann.id}`, { key: operator })
    assert.strictEqual(mine.status, 200, mine.text)
    assert.deepInclude(mine.json, { first_seen_at: t0 + 10, last_seen_at: t0 + 10 })
    assert.deepStrictEqual(mine.json.chats, [{ bot_id: a.id, chat_id: ann.id, title: "Ann Lee", reachable: true, unreachable_since: 0, unreachable_reason: "" }])
    assert.deepStrictEqual(mine.json.tags.map((t: any) => t.tag), ["vip"])
    assertError(await call(`/api/people/get?user_id=${cleo.id}`, { key: operator }), 404, "person_not_found")
    assert.strictEqual((await call(`/api/people/get?user_id=${cleo.id}`)).json.language_code, "ru")
    assertError(await call("/api/people/get?user_id=999"), 404, "person_not_found")
    assertError(await call("/api/people/get?user_id=abc"), 400, "invalid_request")
    assertError(await call("/api/people/get"), 400, "invalid_request")
  })
})

describe("GET /api/people", () => {
  it("people seen by the bots in scope, last seen first", async () => {
    const all = await call("/api/people")
    assert.strictEqual(all.status, 200, all.text)
    assert.deepStrictEqual(userIds(all.json), [cleo.id, ann.id, bob.id])
    assert.strictEqual(all.json.next_cursor, null)
    assert.deepStrictEqual(userIds((await call("/api/people", { key: operator })).json), [bob.id, ann.id])
    assert.deepStrictEqual(userIds((await call(`/api/people?bot_id=${b.id}`)).json), [cleo.id, ann.id, bob.id])
    const bobby = all.json.items[2]
    assert.deepStrictEqual(bobby.chats.map((c: any) => [c.bot_id, c.chat_id, c.title]).sort(), [
      [a.id, team.id, "Team"],
      [b.id, team.id, "Team"]
    ].sort())
  })

  it("filters by chat and by text; pages with a cursor", async () => {
    assert.deepStrictEqual(userIds((await call(`/api/people?chat_id=${team.id}`)).json), [bob.id])
    assert.deepStrictEqual(userIds((await call(`/api/people?bot_id=${a.id}&chat_id=${ann.id}`)).json), [ann.id])
    assert.deepStrictEqual(userIds((await call("/api/people?q=BOBB")).json), [bob.id])
    assert.deepStrictEqual(userIds((await call(`/api/people?q=${encodeURIComponent("клЕо")}`)).json), [cleo.id])
    const first = (await call("/api/people?limit=2")).json
    assert.deepStrictEqual(userIds(first), [cleo.id, ann.id])
    const rest = (await call(`/api/people?limit=2&cursor=${first.next_cursor}`)).json
    assert.deepStrictEqual([userIds(rest), rest.next_cursor], [[bob.id], null])
  })

  it("users seen only in button presses, inline queries and joins are people too", async () => {
    const dora = world.fake.addUser({ first_name: "Dora", username: "dora" })
    const eli = { id: 300_000_001, is_bot: false, first_name: "Eli", language_code: "es" }
    const helper = { id: 300_000_002, is_bot: true, first_name: "Helper", username: "helper_bot" }
    const sent = await call("/api/messages/send", { body: { bot_id: a.id, chat_id: team.id, text: "press me" } })
    assert.strictEqual(sent.status, 200, sent.text)
    const message = world.fake.sent(a.tg.id).at(-1)!.message
    world.clock = t0 + 50
    world.fake.userPresses(a.tg.id, message, "ok", { user: dora })
    world.fake.enqueue(a.tg.id, { inline_query: { id: "iq1", from: eli, query: "cats", offset: "" } })
    world.fake.enqueue(a.tg.id, {
      message: { message_id: 77, date: t0 + 60, chat: team, from: bob, new_chat_members: [helper] }
    })
    const person = (id: number) =>
      eventually(async () => {
        const reply = await call(`/api/people/get?user_id=${id}`)
        return reply.status === 200 ? reply.json : undefined
      })
    const pressed = await person(dora.id)
    assert.deepStrictEqual(pressed.chats, [{ bot_id: a.id, chat_id: team.id, title: "Team", reachable: true, unreachable_since: 0, unreachable_reason: "" }])
    const inline = await person(eli.id)
    assert.deepInclude(inline, { first_name: "Eli", language_code: "es", chats: [] })
    const bot = await person(helper.id)
    assert.deepInclude(bot, { is_bot: true, username: "helper_bot", first_seen_at: t0 + 60 })
    assert.deepStrictEqual(userIds((await call(`/api/people?bot_id=${a.id}&chat_id=${team.id}`)).json).sort(), [
      bob.id,
      dora.id,
      helper.id
    ].sort())
  })

  it("a member who leaves is no longer in the chat", async () => {
    world.fake.enqueue(a.tg.id, {
      message: { message_id: 78, date: t0 + 70, chat: team, from: bob, left_chat_member: bob }
    })
    await eventually(async () => {
      const ids = userIds((await call(`/api/people?bot_id=${a.id}&chat_id=${team.id}`)).json)
      return ids.includes(bob.id) ? undefined : ids
    })
    const person = (await call(`/api/people/get?user_id=${bob.id}`)).json
    assert.deepStrictEqual(person.chats.map((c: any) => [c.bot_id, c.chat_id]), [[b.id, team.id]])
  })

  it("400 for bad parameters, 403 outside the scope, 404 for an unknown bot or chat, 409 without history", async () => {
    for (const query of ["limit=0", "limit=201", "cursor=xyz", "chat_id=abc", "bot_id=-1", `q=${"q".repeat(300)}`]) {
      assertError(await call(`/api/people?${query}`), 400, "invalid_request")
    }
    assertError(await call(`/api/people?bot_id=${b.id}`, { key: operator }), 403, "forbidden")
    assertError(await call("/api/people?bot_id=999999"), 404, "bot_not_found")
    assertError(await call(`/api/people?bot_id=${a.id}&chat_id=123`), 404, "chat_not_found")
    assertError(await call(`/api/people?bot_id=${plain.id}`), 409, "history_disabled")
  })
})
