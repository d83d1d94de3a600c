import type { BotApi } from "@botrelay/telegram"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertError, storages } from "./Harness.js"
import { addBot, type InboxWorld, operatorKey, startWorld, stored } from "./Inbox.js"

const t0 = 1_750_000_000

describe.each(storages)("canned replies (%s)", (storage) => {
  let world: InboxWorld
  let bot: Awaited<ReturnType<typeof addBot>>
  let other: Awaited<ReturnType<typeof addBot>>
  let ann: BotApi.User
  let bob: BotApi.User
  let group: BotApi.Chat
  let operator: string

  const call = (path: string, init?: Parameters<InboxWorld["server"]["call"]>[1]) => world.server.call(path, init)

  beforeAll(async () => {
    world = await startWorld(t0, { storage })
    bot = await addBot(world, { name: "Support" })
    other = await addBot(world, { name: "Other" })
    operator = await operatorKey(world, [bot.id])
    ann = world.fake.addUser({ first_name: "Ann", username: "ann" })
    bob = world.fake.addUser({ first_name: "Bob", username: "bobby" })
    group = world.fake.addGroup({ title: "Team", members: [bot.tg.id] })
    world.clock = t0 + 10
    world.fake.userSends(bot.tg.id, { chat: ann.id, text: "hi" })
    world.fake.userSends(bot.tg.id, { chat: group.id, user: bob, text: "help" })
    await stored(world, bot.id, ann.id, "hi")
    await stored(world, bot.id, group.id, "help")
  })
  afterAll(async () => {
    await world?.close()
  })

  it("adds, lists, updates and deletes replies", async () => {
    const added = await call("/api/canned-replies/add", { body: { code: "greet", text: "Hello {first_name}!" } })
    assert.strictEqual(added.status, 200, added.text)
    assert.deepInclude(added.json, { code: "greet", text: "Hello {first_name}!", bot_ids: [] })
    assert.isAbove(added.json.created_at, 0)
    const listed = await call("/api/canned-replies", { key: operator })
    assert.deepStrictEqual(listed.json.map((r: any) => r.code), ["greet"])

    const updated = await call("/api/canned-replies/update", { key: operator, body: { id: added.json.id, text: "Hi {first_name}" } })
    assert.strictEqual(updated.status, 200, updated.text)
    assert.deepInclude(updated.json, { code: "greet", text: "Hi {first_name}" })
    const renamed = await call("/api/canned-replies/update", { body: { id: added.json.id, code: "greeting" } })
    assert.strictEqual(renamed.json.code, "greeting")

    const removed = await call(`/api/canned-replies/delete?id=${added.json.id}`, { method: "POST" })
    assert.strictEqual(removed.status, 200, removed.text)
    assert.deepStrictEqual((await call("/api/canned-replies")).json, [])
    assertError(await call(`/api/canned-replies/delete?id=${added.json.id}`, { method: "POST" }), 404, "canned_reply_not_found")
    assertError(await call("/api/canned-replies/update", { body: { id: added.json.id, text: "x" } }), 404, "canned_reply_not_found")
  })

  it("validates the code and the text (400), refuses a code taken (409), unknown bots (404)", async () => {
    for (const body of [
      { code: "", text: "x" },
      { code: "Greet", text: "x" },
      { code: "has space", text: "x" },
      { code: "x".repeat(33), text: "x" },
      { code: "ok", text: "" },
      { code: "ok", text: "x".repeat(4097) },
      { code: "ok" },
      { text: "x" }
    ]) {
      assertError(await call("/api/canned-replies/add", { body }), 400, "invalid_request")
    }
    assert.strictEqual((await call("/api/canned-replies/add", { body: { code: "a_b-1", text: "😀".repeat(4096) } })).status, 200)
    const first = (await call("/api/canned-replies/add", { body: { code: "dup", text: "one" } })).json
    assertError(await call("/api/canned-replies/add", { body: { code: "dup", text: "two" } }), 409, "duplicate_code")
    const second = (await call("/api/canned-replies/add", { body: { code: "dup2", text: "two" } })).json
    assertError(await call("/api/canned-replies/update", { body: { id: second.id, code: "dup" } }), 409, "duplicate_code")
    assertError(await call("/api/canned-replies/add", { body: { code: "nobot", text: "x", bot_ids: [999999] } }), 404, "bot_not_found")
    assert.deepStrictEqual(
      (await call("/api/canned-replies")).json.map((r: any) => r.code),
      ["a_b-1", "dup", "dup2"]
    )
    for (const reply of [first, second]) await call(`/api/canned-replies/delete?id=${reply.id}`, { method: "POST" })
  })

  it("renders {first_name}, {username} and {bot_name}; unknown variables stay as written", async () => {
    await call("/api/canned-replies/add", {
      body: { code: "vars", text: "Hi {first_name} (@{username}), {bot_name} here. {unknown} {first_name}" }
    })
    const pm = await call(`/api/canned-replies/render?code=vars&bot_id=${bot.id}&chat_id=${ann.id}`, { key: operator })
    assert.strictEqual(pm.status, 200, pm.text)
    assert.deepStrictEqual(pm.json, { text: "Hi Ann (@ann), Support here. {unknown} Ann" })
    const inGroup = await call(`/api/canned-replies/render?code=vars&bot_id=${bot.id}&chat_id=${group.id}`)
    assert.deepStrictEqual(inGroup.json, { text: "Hi Bob (@bobby), Support here. {unknown} Bob" })
    assertError(await call(`/api/canned-replies/render?code=nope&bot_id=${bot.id}&chat_id=${ann.id}`), 404, "canned_reply_not_found")
    assertError(await call(`/api/canned-replies/render?code=vars&bot_id=${bot.id}&chat_id=5555`), 404, "chat_not_found")
    assertError(await call(`/api/canned-replies/render?code=vars&bot_id=${other.id}&chat_id=${ann.id}`, { key: operator }), 403, "forbidden")
  })

  it("bot_ids limits the bots a reply is offered for; operators manage only replies of their bots", async () => {
    const limited = (await call("/api/canned-replies/add", { body: { code: "other-only", text: "x", bot_ids: [other.id] } })).json
    assert.deepStrictEqual(limited.bot_ids, [other.id])
    const forBot = (await call(`/api/canned-replies?bot_id=${bot.id}`)).json.map((r: any) => r.code)
    assert.notInclude(forBot, "other-only")
    assert.include((await call(`/api/canned-replies?bot_id=${other.id}`)).json.map((r: any) => r.code), "other-only")
    assert.notInclude((await call("/api/canned-replies", { key: operator })).json.map((r: any) => r.code), "other-only")
    assertError(await call(`/api/canned-replies/render?code=other-only&bot_id=${bot.id}&chat_id=${ann.id}`), 404, "canned_reply_not_found")
    assertError(
      await call("/api/canned-replies/add", { key: operator, body: { code: "sneaky", text: "x", bot_ids: [other.id] } }),
      403,
      "forbidden"
    )
    assertError(await call(`/api/canned-replies/delete?id=${limited.id}`, { key: operator, method: "POST" }), 404, "canned_reply_not_found")
    const mine = await call("/api/canned-replies/add", { key: operator, body: { code: "mine", text: "x", bot_ids: [bot.id] } })
    assert.strictEqual(mine.status, 200, mine.text)
  })

  it("audits canned_replies.add, update and delete", async () => {
    const reply = (await call("/api/canned-replies/add", { body: { code: "audited", text: "x" } })).json
    await call("/api/canned-replies/update", { body: { id: reply.id, text: "y" } })
    await call(`/api/canned-replies/delete?id=${reply.id}`, { method: "POST" })
    const entries = (await call("/api/audit?limit=200")).json.items
      .filter((e: any) => e.target_type === "canned_reply" && e.target_id === String(reply.id))
    assert.deepStrictEqual(entries.map((e: any) => [e.action, e.outcome]).reverse(), [
      ["canned_replies.add", "ok"],
      ["canned_replies.update", "ok"],
      ["canned_replies.delete", "ok"]
    ])
    assert.strictEqual(entries[0].details.code, "audited")
  })
})
