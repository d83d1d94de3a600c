import type { BotApi } from "@botrelay/telegram"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, eventually, storages } from "./Harness.js"
import { addBot, chatWhen, type InboxWorld, startWorld, stored } from "./Inbox.js"

const t0 = 1_750_000_000

describe.each(storages)("chat-level scopes (%s)", (storage) => {
  let world: InboxWorld
  let a: Awaited<ReturnType<typeof addBot>>
  let b: Awaited<ReturnType<typeof addBot>>
  let ann: BotApi.User
  let bob: BotApi.User
  let one: BotApi.Chat
  let two: BotApi.Chat
  let moderator: string

  const call = (path: string, init?: Parameters<InboxWorld["server"]["call"]>[1]) => world.server.call(path, init)

  /** A key with these scopes; its secret. */
  const keyWith = async (scopes: ReadonlyArray<Record<string, unknown>>) => {
    const created = await call("/api/auth/api-keys", { body: { name: "scoped", role: "operator", scopes } })
    assert.strictEqual(created.status, 200, created.text)
    return created.json.key as string
  }

  beforeAll(async () => {
    world = await startWorld(t0, { storage })
    a = await addBot(world, {}, { username: "scoped_a_bot" })
    b = await addBot(world, {}, { username: "scoped_b_bot" })
    ann = world.fake.addUser({ first_name: "Ann", username: "ann" })
    bob = world.fake.addUser({ first_name: "Bob", username: "bob" })
    one = world.fake.addGroup({ title: "One", members: [a.tg.id] })
    two = world.fake.addGroup({ title: "Two", members: [a.tg.id] })
    world.clock = t0 + 10
    world.fake.userSends(a.tg.id, { chat: one.id, user: bob, text: "alpha words" })
    world.clock = t0 + 20
    world.fake.userSends(a.tg.id, { chat: two.id, user: ann, text: "bravo words" })
    world.clock = t0 + 30
    world.fake.userSends(a.tg.id, { chat: ann.id, text: "charlie words" })
    await stored(world, a.id, one.id, "alpha words")
    await stored(world, a.id, two.id, "bravo words")
    await stored(world, a.id, ann.id, "charlie words")
    moderator = await keyWith([{ bot_id: a.id, chat_ids: [one.id] }])
  }, 60_000)
  afterAll(async () => {
    await world?.close()
  })

  it("keys and accounts take scopes and return them with bot_ids; bot_ids stays a shorthand", async () => {
    const scoped = await call("/api/auth/api-keys", {
      body: { name: "desk", role: "operator", scopes: [{ bot_id: a.id, chat_ids: [two.id, one.id, one.id], abilities: ["reply", "read"] }] }
    })
    assert.strictEqual(scoped.status, 200, scoped.text)
    assert.deepStrictEqual(scoped.json.bot_ids, [a.id])
    assert.deepStrictEqual(scoped.json.scopes, [
      { bot_id: a.id, chat_ids: [Math.min(one.id, two.id), Math.max(one.id, two.id)], abilities: ["read", "reply"] }
    ])
    const short = await call("/api/auth/api-keys", { body: { name: "short", role: "operator", bot_ids: [b.id, a.id] } })
    assert.deepStrictEqual(short.json.scopes, [
      { bot_id: a.id, chat_ids: [], abilities: ["read", "reply", "moderate"] },
      { bot_id: b.id, chat_ids: [], abilities: ["read", "reply", "moderate"] }
    ])
    const listed = (await call("/api/auth/api-keys")).json.find((k: any) => k.id === scoped.json.id)
    assert.deepStrictEqual(listed.scopes, scoped.json.scopes)

    const bad = (body: Record<string, unknown>) => call("/api/auth/api-keys", { body: { name: "bad", role: "operator", ...body } })
    assertError(await bad({ scopes: [{ bot_id: a.id }, { bot_id: a.id, chat_ids: [one.id] }] }), 400, "invalid_request")
    assertError(await bad({ scopes: [{ bot_id: a.id, abilities: [] }] }), 400, "invalid_request")
    assertError(await bad({ scopes: [{ bot_id: a.id, abilities: ["own"] }] }), 400, "invalid_request")
    assertError(await bad({ bot_ids: [b.id], scopes: [{ bot_id: a.id }] }), 400, "invalid_request")
    assertError(await bad({ scopes: [{ bot_id: 999_999 }] }), 404, "bot_not_found")
    assertError(await bad({ role: "admin", scopes: [{ bot_id: a.id }] }), 400, "invalid_request")

    const updated = await call("/api/auth/api-keys/update", {
      body: { id: short.json.id, scopes: [{ bot_id: b.id, abilities: ["read"] }] }
    })
    assert.strictEqual(updated.status, 200, updated.text)
    assert.deepStrictEqual(updated.json.scopes, [{ bot_id: b.id, chat_ids: [], abilities: ["read"] }])
    assert.deepStrictEqual(updated.json.bot_ids, [b.id])
    assertError(await call(`/api/chats?bot_id=${a.id}`, { key: short.json.key }), 403, "forbidden")
    assertError(await call("/api/auth/api-keys/update", { body: { id: 999_999, bot_ids: [] } }), 404, "api_key_not_found")
    assertError(
      await call("/api/auth/api-keys/update", { body: { id: short.json.id, scopes: [{ bot_id: a.id }] }, key: moderator }),
      403,
      "forbidden"
    )

    const account = await call("/api/accounts", {
      body: { username: "scoped", password: "correct horse battery", scopes: [{ bot_id: a.id, chat_ids: [one.id], abilities: ["read"] }] }
    })
    assert.strictEqual(account.status, 200, account.text)
    assert.deepStrictEqual(account.json.bot_ids, [a.id])
    assert.deepStrictEqual(account.json.scopes, [{ bot_id: a.id, chat_ids: [one.id], abilities: ["read"] }])
    const widened = await call("/api/accounts/update", { body: { id: account.json.id, bot_ids: [a.id, b.id] } })
    assert.deepStrictEqual(widened.json.scopes.map((e: any) => [e.bot_id, e.chat_ids]), [[a.id, []], [b.id, []]])
    assertError(
      await call("/api/accounts/update", { body: { id: account.json.id, scopes: [{ bot_id: b.id }, { bot_id: b.id }] } }),
      400,
      "invalid_request"
    )
  })

  it("configuration export carries scopes; an import changes an account's scope, not a key's", async () => {
    const account = await call("/api/accounts", {
      body: { username: "imported", password: "correct horse battery", scopes: [{ bot_id: a.id, chat_ids: [one.id] }] }
    })
    const exported = (await call("/api/config/export")).json
    const mine = exported.accounts.find((x: any) => x.id === account.json.id)
    assert.deepStrictEqual(mine.scopes, [{ bot_id: a.id, chat_ids: [one.id], abilities: ["read", "reply", "moderate"] }])
    const key = exported.keys.find((k: any) => k.scopes.some((e: any) => e.chat_ids.includes(one.id)))
    assert.isDefined(key)
    const changed = [{ bot_id: a.id, chat_ids: [two.id], abilities: ["read"] }]
    const imported = await call("/api/config/import", {
      body: { ...exported, accounts: exported.accounts.map((x: any) => x.id === mine.id ? { ...x, scopes: changed } : x) }
    })
    assert.strictEqual(imported.status, 200, imported.text)
    assert.deepStrictEqual((await call("/api/accounts")).json.find((x: any) => x.id === mine.id).scopes, changed)
    const again = (await call("/api/config/export")).json
    const refused = await call("/api/config/import", {
      body: { ...again, keys: again.keys.map((k: any) => k.id === key.id ? { ...k, scopes: changed } : k) }
    })
    assertError(refused, 400, "invalid_request")
  })

  it("a key of one group cannot read another chat of the same bot, existing or not", async () => {
    const key = { key: moderator }
    assert.strictEqual((await call(`/api/messages?bot_id=${a.id}&chat_id=${one.id}`, key)).status, 200)
    assertError(await call(`/api/messages?bot_id=${a.id}&chat_id=${two.id}`, key), 403, "forbidden")
    assertError(await call(`/api/chats/get?bot_id=${a.id}&chat_id=${two.id}`, key), 403, "forbidden")
    assertError(await call(`/api/chats/get?bot_id=${a.id}&chat_id=-4242`, key), 403, "forbidden")
    assertError(await call(`/api/chats/admins?bot_id=${a.id}&chat_id=${two.id}`, key), 403, "forbidden")
    assertError(await call(`/api/people?bot_id=${a.id}&chat_id=${two.id}`, key), 403, "forbidden")
    assertError(await call(`/api/search?q=words&bot_id=${a.id}&chat_id=${two.id}`, key), 403, "forbidden")
    assertError(await call(`/api/events?bot_id=${a.id}&chat_id=${two.id}`, key), 403, "forbidden")
    assertError(await call(`/api/updates/poll?bot_id=${a.id}`, key), 403, "forbidden")
    assertError(await call(`/api/chats?bot_id=${b.id}`, key), 403, "forbidden")
  })

  it("lists, people, search and stats are filtered to the scope", async () => {
    const key = { key: moderator }
    for (const path of [`/api/chats?bot_id=${a.id}`, "/api/chats"]) {
      const chats = await call(path, key)
      assert.strictEqual(chats.status, 200, chats.text)
      assert.deepStrictEqual(chats.json.items.map((c: any) => c.chat_id), [one.id])
    }
    const admin = (await call(`/api/chats?bot_id=${a.id}`)).json.items.map((c: any) => c.chat_id)
    assert.sameMembers(admin, [one.id, two.id, ann.id])

    const people = await call("/api/people", key)
    assert.strictEqual(people.status, 200, people.text)
    assert.deepStrictEqual(people.json.items.map((p: any) => p.user_id), [bob.id])
    assert.deepStrictEqual(people.json.items[0].chats.map((c: any) => c.chat_id), [one.id])
    assertError(await call(`/api/people/get?user_id=${ann.id}`, key), 404, "person_not_found")
    assert.strictEqual((await call(`/api/people/get?user_id=${bob.id}`, key)).status, 200)

    for (const path of ["/api/search?q=words", `/api/search?q=words&bot_id=${a.id}`]) {
      const found = await call(path, key)
      assert.strictEqual(found.status, 200, found.text)
      assert.deepStrictEqual(found.json.items.map((m: any) => m.text), ["alpha words"])
    }
    assert.strictEqual((await call("/api/search?q=words")).json.items.length, 3)

    const stats = await call(`/api/stats?bot_id=${a.id}&from=${t0}&to=${t0 + 86_400}`, key)
    assert.strictEqual(stats.status, 200, stats.text)
    assert.deepInclude(stats.json.totals, { in: 1, out: 0, chats: 1, people: 1 })
    assert.deepStrictEqual(stats.json.top_chats.map((c: any) => c.chat_id), [one.id])
    const all = (await call(`/api/stats?bot_id=${a.id}&from=${t0}&to=${t0 + 86_400}`)).json
    assert.deepInclude(all.totals, { in: 3, chats: 3 })
  })

  it("read cannot send, reply cannot ban, moderate can; reply and moderate imply read", async () => {
    const reader = await keyWith([{ bot_id: a.id, chat_ids: [one.id], abilities: ["read"] }])
    const replier = await keyWith([{ bot_id: a.id, chat_ids: [one.id], abilities: ["reply"] }])
    assert.strictEqual((await call(`/api/messages?bot_id=${a.id}&chat_id=${one.id}`, { key: reader })).status, 200)
    assertError(await call("/api/messages/send", { key: reader, body: { bot_id: a.id, chat_id: one.id, text: "hi" } }), 403, "forbidden")
    assertError(await call("/api/chats/read", { key: reader, body: { bot_id: a.id, chat_id: one.id } }), 403, "forbidden")

    assert.strictEqual((await call(`/api/chats/get?bot_id=${a.id}&chat_id=${one.id}`, { key: replier })).status, 200)
    const sent = await call("/api/messages/send", { key: replier, body: { bot_id: a.id, chat_id: one.id, text: "from the desk" } })
    assert.strictEqual(sent.status, 200, sent.text)
    assertError(await call("/api/messages/send", { key: replier, body: { bot_id: a.id, chat_id: two.id, text: "no" } }), 403, "forbidden")
    const ban = { bot_id: a.id, chat_id: one.id, user_id: bob.id }
    assertError(await call("/api/chats/ban", { key: replier, body: ban }), 403, "forbidden")
    assertError(await call("/api/messages/pin", { key: replier, body: { ...ban, message_id: sent.json.id } }), 403, "forbidden")
    const incoming = (await call(`/api/messages?bot_id=${a.id}&chat_id=${one.id}`)).json.find((m: any) => m.direction === "in")
    assertError(
      await call("/api/messages/delete", { key: replier, body: { bot_id: a.id, chat_id: one.id, message_id: incoming.id } }),
      403,
      "forbidden"
    )
    const own = await call("/api/messages/delete", { key: replier, body: { bot_id: a.id, chat_id: one.id, message_id: sent.json.id } })
    assert.strictEqual(own.status, 200, own.text)

    world.fake.setRights(one.id, a.tg.id, { can_restrict_members: true })
    const banned = await call("/api/chats/ban", { key: moderator, body: ban })
    assert.strictEqual(banned.status, 200, banned.text)
    assertError(await call("/api/chats/ban", { key: moderator, body: { ...ban, chat_id: two.id } }), 403, "forbidden")
    const denied = (await call(`/api/audit?action=chats.ban&outcome=denied`)).json.items
    assert.isAtLeast(denied.length, 2)
  })

  it("configure can change the bot's settings and routes, not another bot's, nor its token", async () => {
    const configurer = await keyWith([{ bot_id: a.id, abilities: ["configure"] }])
    const key = { key: configurer }
    const renamed = await call("/api/bots/update", { ...key, body: { id: a.id, name: "Renamed" } })
    assert.strictEqual(renamed.status, 200, renamed.text)
    assert.strictEqual(renamed.json.name, "Renamed")
    assertError(await call("/api/bots/update", { ...key, body: { id: b.id, name: "Nope" } }), 403, "forbidden")
    assertError(await call("/api/bots/update", { ...key, body: { id: a.id, token: "1:abc" } }), 403, "forbidden")
    const route = await call("/api/routes/add", { ...key, body: { source_bot_id: a.id, target_bot_id: a.id, action: "drop" } })
    assert.strictEqual(route.status, 200, route.text)
    assertError(
      await call("/api/routes/add", { ...key, body: { source_bot_id: b.id, target_bot_id: b.id, action: "drop" } }),
      403,
      "forbidden"
    )
    assertError(
      await call("/api/routes/add", { ...key, body: { source_bot_id: a.id, target_bot_id: b.id, action: "drop" } }),
      403,
      "forbidden"
    )
    const other = await call("/api/routes/add", { body: { source_bot_id: b.id, target_bot_id: b.id, action: "drop" } })
    assertError(await call(`/api/routes/delete?id=${other.json.id}`, { ...key, method: "POST" }), 403, "forbidden")
    assert.strictEqual((await call(`/api/routes/delete?id=${route.json.id}`, { ...key, method: "POST" })).status, 200)
    assertError(await call(`/api/messages?bot_id=${a.id}&chat_id=${one.id}`, key), 403, "forbidden")
    assertError(await call(`/api/bots/deliveries/retry?bot_id=${b.id}`, { ...key, method: "POST" }), 403, "forbidden")
    assert.deepStrictEqual((await call(`/api/bots/deliveries/retry?bot_id=${a.id}`, { ...key, method: "POST" })).json, { retried: 0 })
  })

  it("live events are filtered to the scope: its chat's events, no bot events", async () => {
    const controller = new AbortController()
    const response = await fetch(`${world.server.baseUrl}/api/events?last_event_id=0`, {
      headers: { authorization: `Bearer ${moderator}` },
      signal: controller.signal
    })
    assert.strictEqual(response.status, 200)
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    world.fake.userSends(a.tg.id, { chat: two.id, user: ann, text: "not for the desk" })
    await stored(world, a.id, two.id, "not for the desk")
    world.fake.userSends(a.tg.id, { chat: one.id, user: bob, text: "live marker" })
    let text = ""
    while (!text.includes("live marker")) {
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    controller.abort()
    const events = text.split("\n\n").flatMap((block) => {
      const data = block.split("\n").find((line) => line.startsWith("data: "))
      return data === undefined ? [] : [JSON.parse(data.slice(6))]
    })
    assert.isAbove(events.length, 1)
    assert.deepStrictEqual([...new Set(events.map((e) => `${e.bot_id}:${e.chat_id}`))], [`${a.id}:${one.id}`])
    assert.notInclude(events.map((e) => e.type), "bot")
    assert.notInclude(text, "not for the desk")
  })

  it("an account scoped to one chat sees only that chat: lists, notes found by search, counts, status changes", async () => {
    await call("/api/accounts", {
      body: { username: "onechat", password: "correct horse battery", scopes: [{ bot_id: a.id, chat_ids: [one.id] }] }
    })
    const login = await call("/api/auth/login", { key: null, body: { username: "onechat", password: "correct horse battery" } })
    assert.strictEqual(login.status, 200, login.text)
    assert.deepStrictEqual(login.json.account.scopes, [{ bot_id: a.id, chat_ids: [one.id], abilities: ["read", "reply", "moderate"] }])
    const session = /botrelay_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1]!
    const chats = await fetch(`${world.server.baseUrl}/api/chats`, { headers: { cookie: `botrelay_session=${session}` } })
    assert.strictEqual(chats.status, 200)
    assert.deepStrictEqual(((await chats.json())).items.map((c: any) => c.chat_id), [one.id])
    const other = await fetch(`${world.server.baseUrl}/api/messages?bot_id=${a.id}&chat_id=${two.id}`, {
      headers: { cookie: `botrelay_session=${session}` }
    })
    assert.strictEqual(other.status, 403)

    const as = (signedIn: typeof login) => (path: string, body?: unknown) =>
      fetch(`${world.server.baseUrl}${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: {
          cookie: `botrelay_session=${/botrelay_session=([^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")![1]!}`,
          "x-csrf-token": signedIn.json.csrf_token,
          "content-type": "application/json"
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    const desk = as(login)
    await call("/api/accounts", { body: { username: "boss", password: "correct horse battery", role: "admin" } })
    const lead = as(await call("/api/auth/login", { key: null, body: { username: "boss", password: "correct horse battery" } }))
    assert.strictEqual((await lead("/api/notes/add", { bot_id: a.id, chat_id: two.id, text: "zulu elsewhere" })).status, 200)
    assert.strictEqual((await desk("/api/notes/add", { bot_id: a.id, chat_id: one.id, text: "zulu here" })).status, 200)
    const found = await (await desk("/api/search?q=zulu&kinds=note")).json()
    assert.deepStrictEqual(found.items.map((i: any) => i.text), ["zulu here"])
    assert.strictEqual((await lead("/api/search?q=zulu&kinds=note")).status, 200)
    assert.strictEqual((await (await lead("/api/search?q=zulu&kinds=note")).json()).items.length, 2)

    assert.strictEqual((await desk("/api/chats/update", { bot_id: a.id, chat_id: two.id, status: "resolved" })).status, 403)
    assert.strictEqual((await desk("/api/chats/update", { bot_id: a.id, chat_id: one.id, status: "pending" })).status, 200)
    const counts = await (await desk("/api/chats/counts")).json()
    assert.deepStrictEqual(counts.status, { open: 0, pending: 1, resolved: 0, snoozed: 0 })
  })

  it("scopes follow a group's migration to a supergroup", async () => {
    const group = world.fake.addGroup({ title: "Movers", members: [a.tg.id] })
    world.fake.userSends(a.tg.id, { chat: group.id, user: bob, text: "before the move" })
    await stored(world, a.id, group.id, "before the move")
    const created = await call("/api/auth/api-keys", {
      body: { name: "mover", role: "operator", scopes: [{ bot_id: a.id, chat_ids: [group.id] }] }
    })
    const mover = created.json.key as string
    const supergroup = { id: group.id - 1_000_000_000_000 + 4_000_000_000, type: "supergroup", title: "Movers+" }
    const later = Math.floor(Date.now() / 1000) + 3600
    world.fake.enqueue(a.tg.id, { message: { message_id: 3, date: later, chat: group, from: ann, migrate_to_chat_id: supergroup.id } })
    world.fake.enqueue(a.tg.id, {
      message: { message_id: 1, date: later, chat: supergroup, from: ann, migrate_from_chat_id: group.id }
    })
    await chatWhen(world, a.id, supergroup.id, (c) => c.message_count >= 2)
    const key = (await call("/api/auth/api-keys")).json.find((k: any) => k.id === created.json.id)
    assert.sameMembers(key.scopes[0].chat_ids, [group.id, supergroup.id])
    await eventually(async () =>
      (await call(`/api/messages?bot_id=${a.id}&chat_id=${supergroup.id}`, { key: mover })).status === 200 ? true : undefined
    )
    const listed = (await call("/api/chats", { key: mover })).json.items.map((c: any) => c.chat_id)
    assert.deepStrictEqual(listed, [supergroup.id])
  })
})
