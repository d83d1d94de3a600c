import type { BotApi } from "@botrelay/telegram"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, eventually, type Reply, replyOf, storages } from "./Harness.js"
import { addBot, type InboxWorld, operatorKey, startWorld, stored } from "./Inbox.js"

const t0 = 1_750_000_000

/** A signed-in account: requests with its session cookie and CSRF token. */
interface Session {
  readonly id: number
  /** The session cookie, for reads such as the event stream. */
  readonly cookie: Record<string, string>
  readonly call: (path: string, init?: { readonly body?: unknown; readonly method?: string }) => Promise<Reply>
}

const signIn = async (world: InboxWorld, account: Record<string, unknown>): Promise<Session> => {
  const created = await world.server.call("/api/accounts", { body: { password: "correct horse battery", ...account } })
  assert.strictEqual(created.status, 200, created.text)
  const login = await replyOf(await fetch(`${world.server.baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: account.username, password: "correct horse battery" })
  }))
  assert.strictEqual(login.status, 200, login.text)
  const session = /botrelay_session=([^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1]!
  const csrf = login.json.csrf_token as string
  return {
    id: created.json.id,
    cookie: { cookie: `botrelay_session=${session}` },
    call: async (path, init = {}) => {
      const headers: Record<string, string> = { cookie: `botrelay_session=${session}`, "x-csrf-token": csrf }
      if (init.body !== undefined) headers["content-type"] = "application/json"
      return replyOf(await fetch(`${world.server.baseUrl}${path}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
      }))
    }
  }
}

/** The events of a stream replayed from the start, read until `found` says enough (then the stream is closed). */
const replayed = async (world: InboxWorld, headers: Record<string, string>, query: string, found: (events: Array<any>) => boolean) => {
  const controller = new AbortController()
  const response = await fetch(`${world.server.baseUrl}/api/events?last_event_id=0&${query}`, { headers, signal: controller.signal })
  assert.strictEqual(response.status, 200)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ""
  const events = () =>
    text.split("\n\n").filter((block) => block.includes("event: ")).map((block) => ({
      event: /event: (.*)/.exec(block)![1],
      data: JSON.parse(/data: (.*)/.exec(block)![1]!)
    }))
  const deadline = Date.now() + 5_000
  while (!found(events()) && Date.now() < deadline) {
    const chunk = await Promise.race([reader.read(), new Promise<undefined>((r) => setTimeout(r, 200, undefined))])
    if (chunk !== undefined && !chunk.done) text += decoder.decode(chunk.value, { stream: true })
  }
  controller.abort()
  return events()
}

describe.each(storages)("notes (%s)", (storage) => {
  let world: InboxWorld
  let bot: Awaited<ReturnType<typeof addBot>>
  let other: Awaited<ReturnType<typeof addBot>>
  let ann: BotApi.User
  let alice: Session
  let bob: Session
  let admin: Session
  let operator: string

  beforeAll(async () => {
    world = await startWorld(t0, { storage })
    bot = await addBot(world)
    other = await addBot(world)
    ann = world.fake.addUser({ first_name: "Ann", username: "ann" })
    world.clock = t0 + 10
    world.fake.userSends(bot.tg.id, { chat: ann.id, text: "first message" })
    await stored(world, bot.id, ann.id, "first message")
    alice = await signIn(world, { username: "alice", display_name: "Alice A.", role: "operator", bot_ids: [bot.id] })
    bob = await signIn(world, { username: "bob", role: "operator", bot_ids: [bot.id] })
    admin = await signIn(world, { username: "root", role: "admin" })
    operator = await operatorKey(world, [bot.id])
  })
  afterAll(async () => {
    await world?.close()
  })

  it("adds, lists, edits and deletes notes; never sends them to Telegram", async () => {
    const sentBefore = world.fake.sent().length
    const added = await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text: "VIP, be kind" } })
    assert.strictEqual(added.status, 200, added.text)
    assert.deepInclude(added.json, { bot_id: bot.id, chat_id: ann.id, author_id: alice.id, author_name: "Alice A.", text: "VIP, be kind" })
    assert.isAbove(added.json.created_at, t0)
    assert.strictEqual(added.json.updated_at, added.json.created_at)

    const listed = await alice.call(`/api/notes?bot_id=${bot.id}&chat_id=${ann.id}`)
    assert.deepStrictEqual(listed.json.map((n: any) => n.id), [added.json.id])

    const edited = await alice.call("/api/notes/update", { body: { id: added.json.id, text: "VIP, be very kind" } })
    assert.strictEqual(edited.status, 200, edited.text)
    assert.strictEqual(edited.json.text, "VIP, be very kind")

    const gone = await alice.call(`/api/notes/delete?id=${added.json.id}`, { method: "POST" })
    assert.strictEqual(gone.status, 200, gone.text)
    assert.deepStrictEqual((await alice.call(`/api/notes?bot_id=${bot.id}&chat_id=${ann.id}`)).json, [])
    assertError(await alice.call(`/api/notes/delete?id=${added.json.id}`, { method: "POST" }), 404, "note_not_found")
    assert.strictEqual(world.fake.sent().length, sentBefore)
    assert.isFalse(world.fake.calls.some((c) => JSON.stringify(c).includes("be kind")))
  })

  it("text of 1 to 10,000 code points; 10,001 or none is a 400 that changes nothing", async () => {
    const longest = await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text: "😀".repeat(10_000) } })
    assert.strictEqual(longest.status, 200, longest.text)
    for (const text of ["x".repeat(10_001), "", "   "]) {
      assertError(await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text } }), 400, "invalid_request")
    }
    assertError(await alice.call("/api/notes/update", { body: { id: longest.json.id, text: "x".repeat(10_001) } }), 400, "invalid_request")
    const listed = (await alice.call(`/api/notes?bot_id=${bot.id}&chat_id=${ann.id}`)).json
    assert.strictEqual(listed.length, 1)
    assert.strictEqual(listed[0].text, "😀".repeat(10_000))
    await alice.call(`/api/notes/delete?id=${longest.json.id}`, { method: "POST" })
  })

  it("only the author edits; the author or an admin deletes; others get 403", async () => {
    const note = (await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text: "mine" } })).json
    assertError(await bob.call("/api/notes/update", { body: { id: note.id, text: "yours" } }), 403, "forbidden")
    assertError(await admin.call("/api/notes/update", { body: { id: note.id, text: "admin's" } }), 403, "forbidden")
    assertError(await bob.call(`/api/notes/delete?id=${note.id}`, { method: "POST" }), 403, "forbidden")
    const removed = await admin.call(`/api/notes/delete?id=${note.id}`, { method: "POST" })
    assert.strictEqual(removed.status, 200, removed.text)
    assert.strictEqual(removed.json.text, "mine")
  })

  it("API keys get 403 account_required; a chat outside the scope 403; an unknown chat 404", async () => {
    for (const key of [world.server.adminKey, operator]) {
      assertError(await world.server.call(`/api/notes?bot_id=${bot.id}&chat_id=${ann.id}`, { key }), 403, "account_required")
      assertError(
        await world.server.call("/api/notes/add", { key, body: { bot_id: bot.id, chat_id: ann.id, text: "x" } }),
        403,
        "account_required"
      )
      assertError(await world.server.call("/api/notes/update", { key, body: { id: 1, text: "x" } }), 403, "account_required")
      assertError(await world.server.call("/api/notes/delete?id=1", { key, method: "POST" }), 403, "account_required")
    }
    assertError(await alice.call("/api/notes/add", { body: { bot_id: other.id, chat_id: ann.id, text: "x" } }), 403, "forbidden")
    assertError(await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: 424242, text: "x" } }), 404, "chat_not_found")
    assertError(await alice.call(`/api/notes?bot_id=${bot.id}&chat_id=424242`), 404, "chat_not_found")
  })

  it("the timeline interleaves messages and notes newest first, paged as messages are", async () => {
    const note = (await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text: "between the two" } })).json
    world.clock = note.created_at + 1000
    world.fake.userSends(bot.tg.id, { chat: ann.id, text: "later message" })
    await stored(world, bot.id, ann.id, "later message")
    const timeline = await alice.call(`/api/chats/timeline?bot_id=${bot.id}&chat_id=${ann.id}`)
    assert.strictEqual(timeline.status, 200, timeline.text)
    assert.deepStrictEqual(timeline.json.map((i: any) => [i.kind, i.text]), [
      ["message", "later message"],
      ["note", "between the two"],
      ["message", "first message"]
    ])
    const second = await alice.call(`/api/chats/timeline?bot_id=${bot.id}&chat_id=${ann.id}&limit=1&offset=1`)
    assert.deepStrictEqual(second.json.map((i: any) => i.kind), ["note"])
    assert.deepInclude(second.json[0], { author_name: "Alice A.", id: note.id })
    const byKey = await world.server.call(`/api/chats/timeline?bot_id=${bot.id}&chat_id=${ann.id}`, { key: operator })
    assert.deepStrictEqual(byKey.json.map((i: any) => i.kind), ["message", "message"])
    assertError(await alice.call(`/api/chats/timeline?bot_id=${bot.id}&chat_id=${ann.id}&limit=0`), 400, "invalid_request")
    assertError(await alice.call(`/api/chats/timeline?bot_id=${other.id}&chat_id=${ann.id}`), 403, "forbidden")
  })

  it("search finds notes with kinds=note, drops them once deleted, finds edits; keys find messages only", async () => {
    const note = (await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text: "refund approved by finance" } })).json
    const found = await alice.call("/api/search?q=refund&kinds=note")
    assert.strictEqual(found.status, 200, found.text)
    assert.deepStrictEqual(found.json.items.map((i: any) => [i.kind, i.id]), [["note", note.id]])
    assert.include(found.json.items[0].highlight, "<mark>refund</mark>")
    const both = await alice.call("/api/search?q=refund")
    assert.deepStrictEqual(both.json.items.map((i: any) => i.kind), ["note"])
    assert.deepStrictEqual((await alice.call("/api/search?q=refund&kinds=message")).json.items, [])
    assertError(await alice.call("/api/search?q=refund&kinds=notes"), 400, "invalid_request")

    await alice.call("/api/notes/update", { body: { id: note.id, text: "chargeback approved" } })
    assert.deepStrictEqual((await alice.call("/api/search?q=refund&kinds=note")).json.items, [])
    assert.strictEqual((await alice.call("/api/search?q=chargeback&kinds=note")).json.items.length, 1)

    const message = await world.server.call("/api/search?q=later", { key: operator })
    assert.deepStrictEqual(message.json.items.map((i: any) => i.kind), ["message"])
    assert.deepStrictEqual((await world.server.call("/api/search?q=chargeback", { key: operator })).json.items, [])
    assertError(await world.server.call("/api/search?q=chargeback&kinds=note", { key: operator }), 403, "account_required")

    await alice.call(`/api/notes/delete?id=${note.id}`, { method: "POST" })
    assert.deepStrictEqual((await alice.call("/api/search?q=chargeback&kinds=note")).json.items, [])
  })

  it("search pages through messages and notes together", async () => {
    const ids: Array<number> = []
    for (let i = 0; i < 3; i++) {
      ids.push((await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text: `paging word ${i}` } })).json.id)
    }
    world.fake.userSends(bot.tg.id, { chat: ann.id, text: "paging word message" })
    await stored(world, bot.id, ann.id, "paging word message")
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const page: Reply = await alice.call(`/api/search?q=paging&limit=1${cursor === null ? "" : `&cursor=${cursor}`}`)
      assert.strictEqual(page.status, 200, page.text)
      seen.push(...page.json.items.map((i: any) => `${i.kind}:${i.id}`))
      cursor = page.json.next_cursor
    } while (cursor !== null && seen.length < 10)
    assert.strictEqual(seen.length, 4)
    assert.strictEqual(new Set(seen).size, 4)
    for (const id of ids) await alice.call(`/api/notes/delete?id=${id}`, { method: "POST" })
  })

  it("audits notes.add, notes.update and notes.delete, and sends live note events to accounts only", async () => {
    const note = (await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: ann.id, text: "audited" } })).json
    await alice.call("/api/notes/update", { body: { id: note.id, text: "audited again" } })
    await alice.call(`/api/notes/delete?id=${note.id}`, { method: "POST" })
    const entries = (await world.server.call("/api/audit?limit=200")).json.items
      .filter((e: any) => e.target_type === "note" && e.target_id === String(note.id))
    assert.deepStrictEqual(entries.map((e: any) => [e.action, e.outcome, e.actor_name, e.chat_id]).reverse(), [
      ["notes.add", "ok", "alice", ann.id],
      ["notes.update", "ok", "alice", ann.id],
      ["notes.delete", "ok", "alice", ann.id]
    ])
    const denied = (await world.server.call("/api/audit?limit=200&action=notes.update")).json.items
    assert.isTrue(denied.some((e: any) => e.outcome === "denied" && e.actor_name === "bob"))

    const cookieEvents = await replayed(
      world,
      admin.cookie,
      "",
      (all) => all.some((e) => e.event === "note" && e.data.deleted === true && e.data.note_id === note.id)
    )
    const forNote = cookieEvents.filter((e) => e.event === "note" && e.data.note_id === note.id)
    assert.deepStrictEqual(forNote.map((e) => [e.data.note?.text, e.data.deleted]), [
      ["audited", undefined],
      ["audited again", undefined],
      [undefined, true]
    ])
    assert.deepInclude(forNote[0]!.data, { type: "note", bot_id: bot.id, chat_id: ann.id })
    const keyEvents = await replayed(
      world,
      { authorization: `Bearer ${world.server.adminKey}` },
      `bot_id=${bot.id}`,
      (all) => all.some((e) => e.event === "message")
    )
    assert.isTrue(keyEvents.some((e) => e.event === "message"))
    assert.isFalse(keyEvents.some((e) => e.event === "note"))
  })

  it("notes follow a group's move to a supergroup", async () => {
    const group = world.fake.addGroup({ title: "Movers", members: [bot.tg.id] })
    world.fake.userSends(bot.tg.id, { chat: group.id, user: ann, text: "before the move" })
    await stored(world, bot.id, group.id, "before the move")
    const note = (await alice.call("/api/notes/add", { body: { bot_id: bot.id, chat_id: group.id, text: "moving soon" } })).json
    const supergroup = { id: group.id - 1_000_000_000_000 + 4_000_000_000, type: "supergroup", title: "Movers+" }
    const later = world.clock + 10
    world.fake.enqueue(bot.tg.id, { message: { message_id: 3, date: later, chat: group, from: ann, migrate_to_chat_id: supergroup.id } })
    world.fake.enqueue(bot.tg.id, { message: { message_id: 1, date: later, chat: supergroup, from: ann, migrate_from_chat_id: group.id } })
    const moved = await eventually(async () => {
      const listed = await alice.call(`/api/notes?bot_id=${bot.id}&chat_id=${supergroup.id}`)
      return listed.status === 200 && listed.json.length === 1 ? listed.json : undefined
    })
    assert.deepInclude(moved[0], { id: note.id, chat_id: supergroup.id, text: "moving soon" })
  })
})

