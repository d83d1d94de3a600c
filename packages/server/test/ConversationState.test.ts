import type { BotApi } from "@botrelay/telegram"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, eventually, fastRuntime, type Reply, replyOf, storages } from "./Harness.js"
import { addBot, chatWhen, type InboxWorld, operatorKey, startWorld, stored } from "./Inbox.js"

const t0 = 1_750_000_000
const password = "a long enough password"

/** The chat events a stream sent so far, read with `fetch` until `close`. */
const watch = async (world: InboxWorld, botId: number) => {
  const chats: Array<any> = []
  const abort = new AbortController()
  const connected = await fetch(`${world.server.baseUrl}/api/events?bot_id=${botId}`, {
    headers: { authorization: `Bearer ${world.server.adminKey}` },
    signal: abort.signal
  })
  const done = Promise.resolve(connected).then(async (response) => {
    const decoder = new TextDecoder()
    let buffer = ""
    const reader = response.body!.getReader()
    while (true) {
      const { done: ended, value } = await reader.read()
      if (ended) break
      buffer += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        if (!block.includes("event: chat")) continue
        const data = block.split("\n").find((line) => line.startsWith("data: "))
        if (data !== undefined) chats.push(JSON.parse(data.slice(6)).chat)
      }
    }
  }).catch(() => undefined)
  return {
    chats,
    close: async () => {
      abort.abort()
      await done
    }
  }
}

describe.each(storages)("conversation state (%s)", (storage) => {
  let world: InboxWorld
  let a: Awaited<ReturnType<typeof addBot>>
  let b: Awaited<ReturnType<typeof addBot>>
  let bKey: string
  let ann: BotApi.User
  let bob: BotApi.User
  let team: BotApi.Chat
  let mia: { id: number; session: string }
  let carl: number
  let dan: number

  const call = (path: string, init?: Parameters<InboxWorld["server"]["call"]>[1]) => world.server.call(path, init)
  const update = (body: Record<string, unknown>, key?: string) =>
    call("/api/chats/update", { body: { bot_id: a.id, ...body }, ...(key === undefined ? {} : { key }) })
  const asMia = async (path: string): Promise<Reply> =>
    replyOf(await fetch(`${world.server.baseUrl}${path}`, { headers: { cookie: `botrelay_session=${mia.session}` } }))
  const audit = async (action: string) =>
    (await call(`/api/audit?action=${action}&limit=200`)).json.items as Array<any>
  const now = () => Math.floor(Date.now() / 1000)
  const account = async (username: string, body: Record<string, unknown>) => {
    const reply = await call("/api/accounts", { body: { username, password, ...body } })
    assert.strictEqual(reply.status, 200, reply.text)
    return reply.json.id as number
  }

  beforeAll(async () => {
    world = await startWorld(t0, { storage, runtime: { ...fastRuntime, snoozes: { interval: "100 millis" } } })
    a = await addBot(world)
    b = await addBot(world)
    bKey = await operatorKey(world, [b.id])
    ann = world.fake.addUser({ first_name: "Ann", username: "ann" })
    bob = world.fake.addUser({ first_name: "Bob" })
    team = world.fake.addGroup({ title: "Team", members: [a.tg.id] })
    const miaId = await account("mia", { display_name: "Mia M.", bot_ids: [a.id] })
    const login = await call("/api/auth/login", { key: null, body: { username: "mia", password } })
    assert.strictEqual(login.status, 200, login.text)
    mia = { id: miaId, session: /botrelay_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1]! }
    carl = await account("carl", { bot_ids: [b.id] })
    dan = await account("dan", { bot_ids: [a.id] })
    assert.strictEqual((await call("/api/accounts/update", { body: { id: dan, enabled: false } })).status, 200)

    world.fake.userSends(a.tg.id, { chat: ann.id, text: "hello" })
    world.fake.userSends(a.tg.id, { chat: team.id, user: bob, text: "hello team" })
    world.fake.userSends(b.tg.id, { chat: ann.id, text: "hello b" })
    await stored(world, a.id, ann.id, "hello")
    await stored(world, a.id, team.id, "hello team")
    await stored(world, b.id, ann.id, "hello b")
  })
  afterAll(async () => {
    await world?.close()
  })

  it("a new chat is open, without priority, assignee or snooze", async () => {
    const chat = (await call(`/api/chats/get?bot_id=${a.id}&chat_id=${ann.id}`)).json
    assert.deepInclude(chat, { status: "open", priority: "none", assignee_id: 0, assignee_name: "", snoozed_until: 0 })
  })

  it("updates each field, audits what changed as {field: [old, new]} and sends the chat live; no change writes nothing", async () => {
    const stream = await watch(world, a.id)
    try {
      const pending = await update({ chat_id: team.id, status: "pending" })
      assert.strictEqual(pending.status, 200, pending.text)
      assert.deepInclude(pending.json, { chat_id: team.id, status: "pending", title: "Team" })
      const high = await update({ chat_id: team.id, priority: "high", assignee_id: mia.id })
      assert.deepInclude(high.json, { status: "pending", priority: "high", assignee_id: mia.id, assignee_name: "Mia M." })
      const entries = await audit("chats.update")
      assert.deepStrictEqual(entries.slice(0, 2).map((e) => [e.outcome, e.bot_id, e.chat_id, e.target_type, e.details]), [
        ["ok", a.id, team.id, "chat", { priority: ["none", "high"], assignee_id: [0, mia.id] }],
        ["ok", a.id, team.id, "chat", { status: ["open", "pending"] }]
      ])
      const same = await update({ chat_id: team.id, priority: "high", status: "pending" })
      assert.strictEqual(same.status, 200)
      assert.deepInclude(same.json, { priority: "high" })
      assert.strictEqual((await audit("chats.update")).length, entries.length)
      const live = await eventually(() =>
        stream.chats.find((c) => c?.chat_id === team.id && c.priority === "high" && c.assignee_name === "Mia M.")
      )
      assert.deepInclude(live, { status: "pending", assignee_id: mia.id })
      const unassigned = await update({ chat_id: team.id, assignee_id: 0, priority: "none", status: "open" })
      assert.deepInclude(unassigned.json, { status: "open", priority: "none", assignee_id: 0, assignee_name: "" })
    } finally {
      await stream.close()
    }
  })

  it("snoozed needs a future snoozed_until; any other status clears it", async () => {
    assertError(await update({ chat_id: ann.id, status: "snoozed" }), 400, "invalid_request")
    assertError(await update({ chat_id: ann.id, status: "snoozed", snoozed_until: now() - 10 }), 400, "invalid_request")
    assertError(await update({ chat_id: ann.id, snoozed_until: now() + 3600 }), 400, "invalid_request")
    assertError(await update({ chat_id: ann.id, status: "later" }), 400, "invalid_request")
    assert.strictEqual((await call(`/api/chats/get?bot_id=${a.id}&chat_id=${ann.id}`)).json.status, "open")
    const until = now() + 3600
    const snoozed = await update({ chat_id: ann.id, status: "snoozed", snoozed_until: until })
    assert.deepInclude(snoozed.json, { status: "snoozed", snoozed_until: until })
    const pending = await update({ chat_id: ann.id, status: "pending" })
    assert.deepInclude(pending.json, { status: "pending", snoozed_until: 0 })
    assert.deepStrictEqual((await audit("chats.update"))[0].details, {
      status: ["snoozed", "pending"],
      snoozed_until: [until, 0]
    })
    await update({ chat_id: ann.id, status: "open" })
  })

  it("an unknown, disabled or out-of-bot assignee is a 400 invalid_assignee naming it; outside the scope a 403", async () => {
    for (const id of [987_654, carl, dan]) {
      const reply = await update({ chat_id: ann.id, assignee_id: id })
      assertError(reply, 400, "invalid_assignee")
      assert.include(reply.json.error, String(id))
      assert.deepStrictEqual(reply.json.details.map((d: any) => d.path), ["assignee_id"])
    }
    assertError(await update({ chat_id: ann.id, status: "resolved" }, bKey), 403, "forbidden")
    assertError(await update({ chat_id: 424242, status: "resolved" }), 404, "chat_not_found")
    assert.strictEqual((await call(`/api/chats/get?bot_id=${a.id}&chat_id=${ann.id}`)).json.status, "open")
    assert.strictEqual((await update({ chat_id: ann.id, assignee_id: 0 }, undefined)).status, 200)
  })

  it("GET /api/chats filters by status, priority and assignee (me with a session; 400 with a key)", async () => {
    await update({ chat_id: team.id, status: "pending", assignee_id: mia.id })
    await update({ chat_id: ann.id, status: "resolved", priority: "urgent" })
    const ids = async (query: string) => {
      const reply = await call(`/api/chats?bot_id=${a.id}&${query}`)
      assert.strictEqual(reply.status, 200, reply.text)
      return reply.json.items.map((c: any) => c.chat_id).sort((x: number, y: number) => x - y)
    }
    assert.deepStrictEqual(await ids("status=pending"), [team.id])
    assert.deepStrictEqual(await ids("status=pending,resolved"), [team.id, ann.id].sort((x, y) => x - y))
    assert.deepStrictEqual(await ids("priority=urgent,high"), [ann.id])
    assert.deepStrictEqual(await ids("assignee=none"), [ann.id])
    assert.deepStrictEqual(await ids(`assignee=${mia.id},none`), [team.id, ann.id].sort((x, y) => x - y))
    const mine = await asMia(`/api/chats?assignee=me`)
    assert.strictEqual(mine.status, 200, mine.text)
    assert.deepStrictEqual(mine.json.items.map((c: any) => c.chat_id), [team.id])
    assertError(await call(`/api/chats?assignee=me`), 400, "invalid_request")
    assertError(await call(`/api/chats?status=open,closed`), 400, "invalid_request")
    assertError(await call(`/api/chats?priority=extreme`), 400, "invalid_request")
    assertError(await call(`/api/chats?assignee=someone`), 400, "invalid_request")
  })

  it("counts come from the kept counters, equal a fresh count, and follow the caller's scope", async () => {
    const changes: Array<Record<string, unknown>> = [
      { chat_id: ann.id, status: "open", assignee_id: mia.id },
      { chat_id: team.id, status: "resolved" },
      { chat_id: ann.id, status: "snoozed", snoozed_until: now() + 3600 },
      { chat_id: team.id, status: "pending", assignee_id: 0 },
      { chat_id: ann.id, status: "pending" }
    ]
    for (const change of changes) assert.strictEqual((await update(change)).status, 200)
    const fresh = async (botIds: ReadonlyArray<number>, me: number) => {
      const status: Record<string, number> = { open: 0, pending: 0, resolved: 0, snoozed: 0 }
      const assignee: Record<string, number> = { me: 0, none: 0 }
      for (const botId of botIds) {
        for (const c of (await call(`/api/chats?bot_id=${botId}&limit=200`)).json.items) {
          status[c.status] = (status[c.status] ?? 0) + 1
          if (c.status === "resolved") continue
          if (c.assignee_id === 0) assignee["none"] = assignee["none"]! + 1
          else assignee[String(c.assignee_id)] = (assignee[String(c.assignee_id)] ?? 0) + 1
          if (me !== 0 && c.assignee_id === me) assignee["me"] = assignee["me"]! + 1
        }
      }
      return { status, assignee }
    }
    const all = await call("/api/chats/counts")
    assert.strictEqual(all.status, 200, all.text)
    assert.deepStrictEqual(all.json, await fresh([a.id, b.id], 0))
    assert.deepStrictEqual(all.json.status, { open: 1, pending: 2, resolved: 0, snoozed: 0 })
    assert.deepStrictEqual((await call(`/api/chats/counts?bot_id=${a.id}`)).json, await fresh([a.id], 0))
    const mine = await asMia("/api/chats/counts")
    assert.deepStrictEqual(mine.json, await fresh([a.id], mia.id))
    assert.strictEqual(mine.json.assignee.me, 1)
    assert.deepStrictEqual((await call("/api/chats/counts", { key: bKey })).json, await fresh([b.id], 0))
    assertError(await call(`/api/chats/counts?bot_id=${a.id}`, { key: bKey }), 403, "forbidden")
  })

  it("an incoming message or button press reopens the chat, audited by system; the bot's own message does not", async () => {
    await update({ chat_id: ann.id, status: "resolved" })
    world.fake.userSends(a.tg.id, { chat: ann.id, text: "one more thing" })
    const reopened = await chatWhen(world, a.id, ann.id, (c) => c.status === "open")
    assert.strictEqual(reopened.snoozed_until, 0)
    const entry = (await audit("chats.reopen")).find((e) => e.chat_id === ann.id)
    assert.deepInclude(entry, { actor_type: "system", actor_name: "system", bot_id: a.id, outcome: "ok" })
    assert.deepStrictEqual(entry.details.status, ["resolved", "open"])

    await update({ chat_id: team.id, status: "resolved" })
    const sent = await call("/api/messages/send", { body: { bot_id: a.id, chat_id: team.id, text: "we are on it" } })
    assert.strictEqual(sent.status, 200, sent.text)
    await stored(world, a.id, team.id, "we are on it")
    assert.strictEqual((await call(`/api/chats/get?bot_id=${a.id}&chat_id=${team.id}`)).json.status, "resolved")
    world.fake.userSends(a.tg.id, { chat: team.id, user: bob, text: "thanks" })
    await chatWhen(world, a.id, team.id, (c) => c.status === "open")

    await update({ chat_id: team.id, status: "snoozed", snoozed_until: now() + 3600 })
    const button = world.fake.userSends(a.tg.id, { chat: team.id, user: bob, text: "menu" })
    await chatWhen(world, a.id, team.id, (c) => c.status === "open")
    await update({ chat_id: team.id, status: "pending" })
    world.fake.userPresses(a.tg.id, button, "pressed", { user: bob })
    await chatWhen(world, a.id, team.id, (c) => c.status === "open")
  })

  it("a snooze ends by itself when its time comes", async () => {
    // at least a whole second ahead: one second after a floored now is the past once that second turns
    const until = Math.ceil(Date.now() / 1000) + 1
    assert.strictEqual((await update({ chat_id: ann.id, status: "snoozed", snoozed_until: until })).status, 200)
    const woken = await chatWhen(world, a.id, ann.id, (c) => c.status === "open")
    assert.strictEqual(woken.snoozed_until, 0)
    const entry = (await audit("chats.reopen")).find((e) => e.chat_id === ann.id && e.details.reason === "snooze_expired")
    assert.deepInclude(entry, { actor_type: "system", bot_id: a.id })
    assert.deepStrictEqual(entry.details.snoozed_until, [until, 0])
    assert.deepStrictEqual((await call("/api/chats/counts")).json.status.snoozed, 0)
  })
})
