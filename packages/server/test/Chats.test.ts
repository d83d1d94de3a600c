import { FetchHttpClient } from "@effect/platform"
import { Client } from "@botrelay/http"
import type { BotApi } from "@botrelay/telegram"
import { Effect } from "effect"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, eventually } from "./Harness.js"
import { addBot, chatWhen, type InboxWorld, operatorKey, startWorld, stored } from "./Inbox.js"

const t0 = 1_750_000_000

let world: InboxWorld
let a: Awaited<ReturnType<typeof addBot>>
let b: Awaited<ReturnType<typeof addBot>>
let plain: Awaited<ReturnType<typeof addBot>>
let operator: string
let ann: BotApi.User
let bob: BotApi.User
let team: BotApi.Chat

const call = (path: string, init?: Parameters<InboxWorld["server"]["call"]>[1]) => world.server.call(path, init)

beforeAll(async () => {
  world = await startWorld(t0)
  a = await addBot(world, {}, { username: "alpha_bot" })
  b = await addBot(world, {}, { username: "beta_bot" })
  plain = await addBot(world, { manage_enabled: false, proxy_enabled: false })
  operator = await operatorKey(world, [a.id])
  ann = world.fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann", language_code: "de" })
  bob = world.fake.addUser({ first_name: "Bob" })
  team = world.fake.addGroup({ title: "Team", members: [a.tg.id, b.tg.id] })

  world.clock = t0 + 10
  world.fake.userSends(a.tg.id, { chat: ann.id, text: "hello from Ann" })
  world.clock = t0 + 20
  world.fake.userSends(a.tg.id, { chat: team.id, user: bob, text: "hello team" })
  await stored(world, a.id, ann.id, "hello from Ann")
  await stored(world, a.id, team.id, "hello team")
  await stored(world, b.id, team.id, "hello team")
})
afterAll(async () => {
  await world?.close()
})

describe("GET /api/chats", () => {
  it("lists the bot's chats, newest activity first, with names, last message and counts", async () => {
    const reply = await call(`/api/chats?bot_id=${a.id}`)
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.next_cursor, null)
    const [group, pm] = reply.json.items
    assert.deepInclude(group, {
      bot_id: a.id,
      chat_id: team.id,
      type: "group",
      title: "Team",
      username: "",
      last_message_at: t0 + 20,
      unread_count: 1,
      message_count: 1,
      member_count: 0,
      state: "member",
      tags: []
    })
    assert.deepInclude(group.last_message, { text: "hello team", user_id: bob.id, direction: "in", date: t0 + 20 })
    assert.deepInclude(pm, {
      chat_id: ann.id,
      type: "private",
      title: "",
      username: "ann",
      first_name: "Ann",
      last_name: "Lee",
      unread_count: 1
    })
    assert.strictEqual(reply.json.items.length, 2)
  })

  it("without bot_id: every bot in scope that keeps history; operators see their bots only", async () => {
    const all = await call("/api/chats")
    assert.deepStrictEqual(all.json.items.map((c: any) => [c.bot_id, c.chat_id]), [
      [b.id, team.id],
      [a.id, team.id],
      [a.id, ann.id]
    ])
    const mine = await call("/api/chats", { key: operator })
    assert.strictEqual(mine.status, 200, mine.text)
    assert.deepStrictEqual(mine.json.items.map((c: any) => [c.bot_id, c.chat_id]), [[a.id, team.id], [a.id, ann.id]])
    assertError(await call(`/api/chats?bot_id=${b.id}`, { key: operator }), 403, "forbidden")
  })

  it("filters by text in any case, by type and by unread", async () => {
    const ids = async (query: string) => (await call(`/api/chats?bot_id=${a.id}&${query}`)).json.items.map((c: any) => c.chat_id)
    assert.deepStrictEqual(await ids("q=TEA"), [team.id])
    assert.deepStrictEqual(await ids("q=lee"), [ann.id])
    assert.deepStrictEqual(await ids("q=%25"), [])
    assert.deepStrictEqual(await ids("type=private"), [ann.id])
    assert.deepStrictEqual(await ids("type=channel"), [])
    assert.deepStrictEqual(await ids("unread=true"), [team.id, ann.id])
    assert.deepStrictEqual(await ids("unread=false"), [team.id, ann.id])
  })

  it("400 for bad parameters, 404 for an unknown bot, 409 for a bot without history", async () => {
    for (
      const query of [
        "limit=0",
        "limit=201",
        "limit=x",
        "cursor=not-a-cursor!",
        "cursor=WzEsMl0",
        "type=forum",
        "unread=yes",
        "bot_id=0",
        `q=${"x".repeat(257)}`
      ]
    ) {
      assertError(await call(`/api/chats?${query}`), 400, "invalid_request")
    }
    assertError(await call("/api/chats?bot_id=999999"), 404, "bot_not_found")
    const disabled = await call(`/api/chats?bot_id=${plain.id}`)
    assertError(disabled, 409, "history_disabled")
    assert.include(disabled.json.error, "manage_enabled")
  })

  it("a cursor walk visits every chat once while new messages arrive", async () => {
    const walker = await addBot(world)
    const users = Array.from({ length: 12 }, (_, i) => world.fake.addUser({ first_name: `Walker ${i}` }))
    for (const [i, user] of users.entries()) {
      world.clock = t0 + 100 + (i % 4)
      world.fake.userSends(walker.tg.id, { chat: user.id, text: `hi ${i}` })
    }
    await eventually(async () =>
      (await call(`/api/chats?bot_id=${walker.id}&limit=200`)).json.items.length === 12 || undefined
    )
    const seen: Array<number> = []
    const moved = new Set<number>()
    let cursor: string | null = null
    let pages = 0
    do {
      const page: any = (await call(`/api/chats?bot_id=${walker.id}&limit=5${cursor === null ? "" : `&cursor=${cursor}`}`)).json
      seen.push(...page.items.map((c: any) => c.chat_id))
      cursor = page.next_cursor
      pages++
      if (pages === 1) {
        const early = users[0]!
        const late = users[11]!
        world.clock = t0 + 200
        world.fake.userSends(walker.tg.id, { chat: early.id, text: "again" })
        world.fake.userSends(walker.tg.id, { chat: late.id, text: "again" })
        moved.add(early.id).add(late.id)
        await stored(world, walker.id, early.id, "again")
        await stored(world, walker.id, late.id, "again")
      }
    } while (cursor !== null)
    assert.strictEqual(new Set(seen).size, seen.length, `duplicates in ${seen.join(",")}`)
    for (const user of users) {
      if (!moved.has(user.id)) assert.include(seen, user.id)
    }
    assert.isAtLeast(pages, 3)
  })
})

describe("GET /api/chats/get", () => {
  it("returns one chat as the list shows it", async () => {
    const listed = (await call(`/api/chats?bot_id=${a.id}&type=private`)).json.items[0]
    const reply = await call(`/api/chats/get?bot_id=${a.id}&chat_id=${ann.id}`)
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json, listed)
  })

  it("404 for an unknown chat or bot, 403 outside the key's scope, 409 without history, 400 for bad ids", async () => {
    assertError(await call(`/api/chats/get?bot_id=${a.id}&chat_id=12345`), 404, "chat_not_found")
    assertError(await call(`/api/chats/get?bot_id=999999&chat_id=1`), 404, "bot_not_found")
    assertError(await call(`/api/chats/get?bot_id=${b.id}&chat_id=${team.id}`, { key: operator }), 403, "forbidden")
    assertError(await call(`/api/chats/get?bot_id=${plain.id}&chat_id=1`), 409, "history_disabled")
    assertError(await call(`/api/chats/get?bot_id=${a.id}`), 400, "invalid_request")
    assertError(await call(`/api/chats/get?bot_id=${a.id}&chat_id=1.5`), 400, "invalid_request")
  })
})

describe("read marks", () => {
  it("POST /api/chats/read marks everything up to now read, for every operator", async () => {
    const reader = await addBot(world)
    const carol = world.fake.addUser({ first_name: "Carol" })
    world.clock = Math.floor(Date.now() / 1000) - 60
    world.fake.userSends(reader.tg.id, { chat: carol.id, text: "one" })
    world.fake.userSends(reader.tg.id, { chat: carol.id, text: "two" })
    await chatWhen(world, reader.id, carol.id, (c) => c.unread_count === 2)
    const key = await operatorKey(world, [reader.id])

    assertError(await call("/api/chats/read", { body: { bot_id: reader.id, chat_id: carol.id }, key: operator }), 403, "forbidden")
    assertError(await call("/api/chats/read", { body: { bot_id: reader.id, chat_id: 999 } }), 404, "chat_not_found")
    assertError(await call("/api/chats/read", { body: { bot_id: reader.id } }), 400, "invalid_request")
    assert.strictEqual((await call(`/api/chats/get?bot_id=${reader.id}&chat_id=${carol.id}`)).json.unread_count, 2)

    const read = await call("/api/chats/read", { body: { bot_id: reader.id, chat_id: carol.id }, key })
    assert.strictEqual(read.status, 200, read.text)
    assert.deepInclude(read.json, { chat_id: carol.id, unread_count: 0, message_count: 2 })
    assert.strictEqual((await call(`/api/chats/get?bot_id=${reader.id}&chat_id=${carol.id}`)).json.unread_count, 0)

    world.clock = Math.floor(Date.now() / 1000) + 60
    world.fake.userSends(reader.tg.id, { chat: carol.id, text: "three" })
    await chatWhen(world, reader.id, carol.id, (c) => c.unread_count === 1 && c.message_count === 3)
  })

  it("a reply sent through the API moves the mark to now", async () => {
    const replier = await addBot(world)
    const dan = world.fake.addUser({ first_name: "Dan" })
    world.clock = Math.floor(Date.now() / 1000) - 60
    world.fake.userSends(replier.tg.id, { chat: dan.id, text: "question?" })
    await chatWhen(world, replier.id, dan.id, (c) => c.unread_count === 1)
    const sent = await call("/api/messages/send", { body: { bot_id: replier.id, chat_id: dan.id, text: "answer" } })
    assert.strictEqual(sent.status, 200, sent.text)
    const chat = (await call(`/api/chats/get?bot_id=${replier.id}&chat_id=${dan.id}`)).json
    assert.deepInclude(chat, { unread_count: 0, message_count: 2 })
    assert.deepInclude(chat.last_message, { id: sent.json.id, text: "answer", direction: "out" })
  })

  it("an API send through a bot without history starts no chat list for it", async () => {
    const sent = await call("/api/messages/send", { body: { bot_id: plain.id, chat_id: ann.id, text: "from a plain bot" } })
    assert.strictEqual(sent.status, 200, sent.text)
    assertError(await call(`/api/chats?bot_id=${plain.id}`), 409, "history_disabled")
    const all = (await call("/api/chats?limit=200")).json.items
    assert.isFalse(all.some((c: any) => c.bot_id === plain.id))
  })
})

describe("keeping chats current", () => {
  it("a new title arrives with the chat's next message", async () => {
    world.clock = t0 + 30
    world.fake.enqueue(a.tg.id, {
      message: { message_id: 900, date: t0 + 30, chat: { ...team, title: "Team Renamed" }, from: bob, new_chat_title: "Team Renamed" }
    })
    const chat = await chatWhen(world, a.id, team.id, (c) => c.title === "Team Renamed")
    assert.strictEqual(chat.type, "group")
    assert.deepStrictEqual(
      (await call(`/api/chats?bot_id=${a.id}&q=renamed`)).json.items.map((c: any) => c.chat_id),
      [team.id]
    )
  })

  it("the bot removed from a group, and added again, shows in its state", async () => {
    const me = { id: a.tg.id, is_bot: true, first_name: "Alpha", username: "alpha_bot" }
    const change = (status: string, date: number) => ({
      my_chat_member: {
        chat: team,
        from: bob,
        date,
        old_chat_member: { status: status === "kicked" ? "member" : "kicked", user: me },
        new_chat_member: { status, user: me }
      }
    })
    world.fake.enqueue(a.tg.id, change("kicked", t0 + 40))
    await chatWhen(world, a.id, team.id, (c) => c.state === "kicked")
    world.fake.enqueue(a.tg.id, change("member", t0 + 41))
    await chatWhen(world, a.id, team.id, (c) => c.state === "member")
    world.fake.enqueue(a.tg.id, {
      message: { message_id: 901, date: t0 + 42, chat: team, from: bob, left_chat_member: me }
    })
    await chatWhen(world, a.id, team.id, (c) => c.state === "left")
  })

  for (const order of ["old group first", "supergroup first"] as const) {
    it(`a migration to a supergroup moves the chat (${order})`, async () => {
      const mover = await addBot(world)
      const group = world.fake.addGroup({ title: "Movers", members: [mover.tg.id] })
      const supergroup = { id: group.id - 1_000_000_000_000 + 4_000_000_000, type: "supergroup", title: "Movers+" }
      world.clock = t0 + 50
      const first = world.fake.userSends(mover.tg.id, { chat: group.id, user: ann, text: "before the move" })
      world.fake.userSends(mover.tg.id, { chat: group.id, user: bob, text: "reply", reply_to_message_id: first.message_id })
      await stored(world, mover.id, group.id, "reply")
      const tag = await call("/api/tags/add", { body: { bot_id: mover.id, chat_id: group.id, user_id: ann.id, tag: "lead" } })
      assert.strictEqual(tag.status, 200, tag.text)
      await call("/api/chats/read", { body: { bot_id: mover.id, chat_id: group.id } })

      const later = Math.floor(Date.now() / 1000) + 3600
      const to = { message: { message_id: 3, date: later, chat: group, from: ann, migrate_to_chat_id: supergroup.id } }
      const from = {
        message: { message_id: 1, date: later, chat: supergroup, from: ann, migrate_from_chat_id: group.id }
      }
      for (const update of order === "old group first" ? [to, from, to] : [from, to, from]) {
        world.fake.enqueue(mover.tg.id, update)
      }
      const chat = await chatWhen(world, mover.id, supergroup.id, (c) => c.message_count === 4)
      assert.deepInclude(chat, { type: "supergroup", title: "Movers+", unread_count: 2 })
      await eventually(async () => {
        const listed = (await call(`/api/chats?bot_id=${mover.id}`)).json.items.map((c: any) => c.chat_id)
        return listed.length === 1 && listed[0] === supergroup.id ? true : undefined
      })
      const old = await call(`/api/chats/get?bot_id=${mover.id}&chat_id=${group.id}`)
      assertError(old, 404, "chat_not_found")
      assert.deepStrictEqual((await call(`/api/messages?bot_id=${mover.id}&chat_id=${group.id}`)).json, [])
      const history = (await call(`/api/messages?bot_id=${mover.id}&chat_id=${supergroup.id}`)).json
      const moved = (id: number) => id - 2 ** 53
      assert.deepStrictEqual(history.map((m: any) => [m.id, m.text, m.reply_to_message_id]), [
        [1, "", undefined],
        [moved(3), "", undefined],
        [moved(2), "reply", moved(1)],
        [moved(1), "before the move", undefined]
      ])
      const tags = (await call(`/api/tags?chat_id=${supergroup.id}&bot_id=${mover.id}`)).json
      assert.deepStrictEqual(tags.map((t: any) => [t.tag, t.user_id]), [["lead", ann.id]])
      const person = (await call(`/api/people/get?user_id=${bob.id}`)).json
      assert.isTrue(person.chats.some((c: any) => c.bot_id === mover.id && c.chat_id === supergroup.id))
      assert.isFalse(person.chats.some((c: any) => c.chat_id === group.id))
    })
  }
})

describe("POST /api/chats/refresh", () => {
  it("asks Telegram for the chat's names and member count", async () => {
    world.fake.enqueue(a.tg.id, { message: { message_id: 902, date: t0 + 43, chat: { ...team, title: "Stale" }, from: bob, text: "x" } })
    await chatWhen(world, a.id, team.id, (c) => c.title === "Stale")
    const reply = await call("/api/chats/refresh", { body: { bot_id: a.id, chat_id: team.id }, key: operator })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepInclude(reply.json, { chat_id: team.id, title: "Team", member_count: 3 })
    assert.deepStrictEqual(world.fake.calls.filter((c) => c.method === "getChat").at(-1)?.params.chat_id, team.id)
    const pm = await call("/api/chats/refresh", { body: { bot_id: a.id, chat_id: ann.id } })
    assert.deepInclude(pm.json, { first_name: "Ann", last_name: "Lee", username: "ann", member_count: 2 })
  })

  it("502 with Telegram's description when it refuses; 404 and 403 before asking it", async () => {
    const outsider = world.fake.addGroup({ title: "Elsewhere", members: [b.tg.id] })
    world.fake.enqueue(a.tg.id, { message: { message_id: 1, date: t0 + 44, chat: outsider, from: bob, text: "seen once" } })
    await stored(world, a.id, outsider.id, "seen once")
    const calls = world.fake.calls.length
    const refused = await call("/api/chats/refresh", { body: { bot_id: a.id, chat_id: outsider.id } })
    assertError(refused, 502, "telegram_error")
    assert.include(refused.json.error, "chat not found")
    assert.notInclude(refused.text, a.tg.token)
    assert.strictEqual((await call(`/api/chats/get?bot_id=${a.id}&chat_id=${outsider.id}`)).json.title, "Elsewhere")
    assert.isAbove(world.fake.calls.length, calls)
    const asked = () => world.fake.calls.filter((c) => c.method === "getChat" || c.method === "getChatMemberCount").length
    const before = asked()
    assertError(await call("/api/chats/refresh", { body: { bot_id: a.id, chat_id: 4242 } }), 404, "chat_not_found")
    assertError(await call("/api/chats/refresh", { body: { bot_id: b.id, chat_id: team.id }, key: operator }), 403, "forbidden")
    assertError(await call("/api/chats/refresh", { body: { bot_id: plain.id, chat_id: 1 } }), 409, "history_disabled")
    assertError(await call("/api/chats/refresh", { body: { bot_id: 999999, chat_id: 1 } }), 404, "bot_not_found")
    assert.strictEqual(asked(), before)
  })
})

describe("the typed client", () => {
  it("lists, reads and gets chats, people and stats with typed answers and errors", async () => {
    const result = await Effect.runPromise(
      Client.make({ baseUrl: world.server.baseUrl, apiKey: world.server.adminKey }).pipe(
        Effect.flatMap((client) =>
          Effect.all({
            page: client.chats.list({ urlParams: { bot_id: a.id, type: "private", limit: 1 } }),
            read: client.chats.read({ payload: { bot_id: a.id, chat_id: ann.id } }),
            person: client.people.get({ urlParams: { user_id: ann.id } }),
            stats: client.stats.get({ urlParams: { bot_id: a.id, from: t0, to: t0 + 86400 } }),
            missing: Effect.flip(client.chats.get({ urlParams: { bot_id: a.id, chat_id: 5 } }))
          }, { concurrency: 1 })
        ),
        Effect.provide(FetchHttpClient.layer)
      )
    )
    assert.deepStrictEqual(result.page.items.map((c) => [c.chat_id, c.type]), [[ann.id, "private"]])
    assert.strictEqual(result.read.unread_count, 0)
    assert.strictEqual(result.person.username, "ann")
    assert.strictEqual(result.stats.per_hour.length, 24)
    assert.strictEqual(result.missing._tag, "NotFound")
    assert.strictEqual((result.missing as { code?: string }).code, "chat_not_found")
  })
})
