import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let tgA: FakeTelegram.FakeBot
let tgB: FakeTelegram.FakeBot
let botA: number
let botB: number
let operatorKey: string

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  tgA = fake.addBot({ username: "shop_bot", first_name: "Shop" })
  tgB = fake.addBot({ username: "other_bot", first_name: "Other" })
  botA = (await server.call("/api/bots/add", { body: { token: tgA.token, manage_enabled: true } })).json.id
  botB = (await server.call("/api/bots/add", { body: { token: tgB.token, manage_enabled: true } })).json.id
  operatorKey = (await server.call("/api/auth/api-keys", { body: { name: "op", role: "operator", bot_ids: [botA] } }))
    .json.key
})
afterAll(async () => {
  await server?.close()
  await fake?.close()
})

const search = (query: Record<string, string | number>, key?: string) =>
  server.call(`/api/search?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`, {
    ...(key === undefined ? {} : { key })
  })

/** The items `q` finds (as the admin unless `key`), after asserting a 200. */
const found = async (query: Record<string, string | number>, key?: string): Promise<Array<any>> => {
  const reply = await search(query, key)
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json.items
}

const send = async (botId: number, chatId: number, text: string) => {
  const reply = await server.call("/api/messages/send", { body: { bot_id: botId, chat_id: chatId, text } })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json
}

const tgapi = async (token: string, method: string, body: Record<string, unknown>) => {
  const response = await fetch(`${server.baseUrl}/tgapi/bot${token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json: any = await response.json()
  assert.isTrue(json.ok, JSON.stringify(json))
  return json.result
}

/** Waits until the search finds `count` messages and returns them. */
const foundEventually = (query: Record<string, string | number>, count: number, key?: string) =>
  eventually(async () => {
    const items = await found(query, key)
    return items.length === count ? items : undefined
  })

describe("GET /api/search", () => {
  it("finds incoming and outgoing messages, newest stored first, each with its escaped highlight", async () => {
    const user = fake.addUser({ first_name: "Olga", username: "olga" })
    const incoming = fake.userSends(tgA.id, { user, text: "Where is my parcel #42? <urgent>" })
    await foundEventually({ q: "parcel" }, 1)
    const outgoing = await send(botA, user.id, "Your parcel ships tomorrow & arrives <b>soon</b>")
    const items = await found({ q: "parcel" })
    assert.deepStrictEqual(items.map((m) => m.id), [outgoing.id, incoming.message_id])
    assert.deepStrictEqual(items[0], {
      kind: "message",
      ...outgoing,
      highlight: "Your <mark>parcel</mark> ships tomorrow &amp; arrives &lt;b&gt;soon&lt;/b&gt;"
    })
    const history = await server.call(`/api/messages?bot_id=${botA}&chat_id=${user.id}`)
    const stored = history.json.find((m: any) => m.id === incoming.message_id)
    assert.deepStrictEqual(items[1], { kind: "message", ...stored, highlight: "Where is my <mark>parcel</mark> #42? &lt;urgent&gt;" })
    assert.deepInclude(items[1], { direction: "in", user_id: user.id, username: "olga" })
    assert.deepStrictEqual((await search({ q: "parcel" })).json.next_cursor, null)
  })

  it("searches captions, Cyrillic in any case, phrases and prefixes (URL-encoded)", async () => {
    const user = fake.addUser({ first_name: "Иван" })
    fake.userSends(tgA.id, { user, photo: true, caption: "Закат над морем" })
    fake.userSends(tgA.id, { user, text: "good morning, team" })
    fake.userSends(tgA.id, { user, text: "morning is good" })
    await foundEventually({ q: "good", user_id: user.id }, 2)
    const [photo] = await foundEventually({ q: "ЗАКАТ" }, 1)
    assert.deepInclude(photo, { media_type: "photo", text: "Закат над морем", highlight: "<mark>Закат</mark> над морем" })
    assert.lengthOf(await found({ q: "закат" }), 1)
    assert.deepStrictEqual((await found({ q: "мор*" })).map((m) => m.highlight), ["Закат над <mark>морем</mark>"])
    const phrase = await server.call(`/api/search?q=%22good%20morning%22&user_id=${user.id}`)
    assert.deepStrictEqual(phrase.json.items.map((m: any) => m.text), ["good morning, team"])
    assert.deepStrictEqual(phrase.json.items[0].highlight, "<mark>good morning</mark>, team")
    assert.deepStrictEqual((await found({ q: "morn* good", user_id: user.id })).map((m) => m.text), [
      "morning is good",
      "good morning, team"
    ])
  })

  it("finds an edited message by its new text only, and never a deleted one", async () => {
    const user = fake.addUser()
    const sent = await send(botA, user.id, "draft alpha version")
    const doomed = await send(botA, user.id, "remove this gamma note")
    const typed = fake.userSends(tgA.id, { user, text: "my delta question" })
    await foundEventually({ q: "delta" }, 1)
    assert.lengthOf(await found({ q: "gamma" }), 1)

    await tgapi(tgA.token, "editMessageText", { chat_id: user.id, message_id: sent.id, text: "final beta version" })
    await tgapi(tgA.token, "deleteMessage", { chat_id: user.id, message_id: doomed.id })
    fake.userEdits(tgA.id, user.id, typed.message_id, "my epsilon question")

    const [edited] = await foundEventually({ q: "beta" }, 1)
    assert.deepInclude(edited, { id: sent.id, text: "final beta version", highlight: "final <mark>beta</mark> version" })
    assert.isAbove(edited.edit_date, 0)
    assert.deepStrictEqual(await found({ q: "alpha" }), [])
    assert.deepStrictEqual(await found({ q: "gamma" }), [])
    const [userEdited] = await foundEventually({ q: "epsilon" }, 1)
    assert.strictEqual(userEdited.id, typed.message_id)
    assert.deepStrictEqual(await found({ q: "delta" }), [])
    const byVersion = await found({ q: "version" })
    assert.deepStrictEqual(byVersion, [{ ...edited, highlight: "final beta <mark>version</mark>" }])
  })

  it("keeps operators to their bots: all of them without bot_id, 403 outside, 404 for an unknown bot (admin)", async () => {
    const group = fake.addGroup({ title: "Both bots" })
    await send(botA, group.id, "scoped kiwi from A")
    await send(botB, group.id, "scoped kiwi from B")
    assert.deepStrictEqual((await found({ q: "kiwi" })).map((m) => m.bot_id), [botB, botA])
    assert.deepStrictEqual((await found({ q: "kiwi", bot_id: botB })).map((m) => m.bot_id), [botB])
    assert.deepStrictEqual((await found({ q: "kiwi" }, operatorKey)).map((m) => m.bot_id), [botA])
    assert.deepStrictEqual((await found({ q: "kiwi", bot_id: botA }, operatorKey)).map((m) => m.bot_id), [botA])
    assert.deepStrictEqual((await found({ q: "kiwi", chat_id: group.id }, operatorKey)).map((m) => m.bot_id), [botA])
    assertError(await search({ q: "kiwi", bot_id: botB }, operatorKey), 403, "forbidden")
    assertError(await search({ q: "kiwi", bot_id: 999999 }, operatorKey), 403, "forbidden")
    assertError(await search({ q: "kiwi", bot_id: 999999 }), 404, "bot_not_found")
    assertError(await server.call("/api/search?q=kiwi", { key: null }), 401, "unauthorized")
    const nobody = (await server.call("/api/auth/api-keys", { body: { name: "none", role: "operator", bot_ids: [] } }))
      .json.key
    assert.deepStrictEqual(await search({ q: "kiwi" }, nobody).then((r) => r.json), { items: [], next_cursor: null })
  })

  it("filters by chat, sender and time; from is inclusive, to exclusive", async () => {
    const user = fake.addUser()
    const group = fake.addGroup({ title: "Filters", members: [tgA.id] })
    const inGroup = fake.userSends(tgA.id, { user, chat: group, text: "mango in the group" })
    fake.userSends(tgA.id, { user, text: "mango in private" })
    // The incoming messages are stored before the bot's, whatever the pipeline's pace: results are newest stored first.
    await foundEventually({ q: "mango" }, 2)
    const fromBot = await send(botA, group.id, "mango from the bot")
    await foundEventually({ q: "mango" }, 3)
    assert.deepStrictEqual((await found({ q: "mango", chat_id: group.id })).map((m) => m.text), [
      "mango from the bot",
      "mango in the group"
    ])
    assert.deepStrictEqual((await found({ q: "mango", chat_id: group.id, user_id: user.id })).map((m) => m.id), [
      inGroup.message_id
    ])
    assert.deepStrictEqual((await found({ q: "mango", user_id: tgA.id })).map((m) => m.id), [fromBot.id])
    const at = fromBot.date as number
    assert.include((await found({ q: "mango", from: at, to: at + 1 })).map((m) => m.id), fromBot.id)
    assert.deepStrictEqual(await found({ q: "mango", from: at + 1 }), [])
    assert.deepStrictEqual(await found({ q: "mango", to: inGroup.date }), [])
    assert.lengthOf(await found({ q: "mango", from: 0, to: at + 1 }), 3)
  })

  it("pages with limit and next_cursor: newest first, no duplicates, no gaps", async () => {
    const group = fake.addGroup({ title: "Pages", members: [tgA.id] })
    const ids: Array<number> = []
    for (let i = 0; i < 7; i++) {
      ids.push(fake.userSends(tgA.id, { chat: group, text: `papaya number ${i}` }).message_id)
      fake.userSends(tgA.id, { chat: group, text: `filler ${i}` })
    }
    await foundEventually({ q: "papaya" }, 7)
    const pages: Array<Array<number>> = []
    let cursor: string | null = null
    do {
      const reply = await search({ q: "papaya", limit: 3, ...(cursor === null ? {} : { cursor }) })
      assert.strictEqual(reply.status, 200, reply.text)
      pages.push(reply.json.items.map((m: any) => m.id))
      cursor = reply.json.next_cursor
    } while (cursor !== null)
    assert.deepStrictEqual(pages, [ids.slice(4).reverse(), ids.slice(1, 4).reverse(), [ids[0]]])
    const exact = await search({ q: "papaya", limit: 7 })
    assert.strictEqual(exact.json.items.length, 7)
    assert.strictEqual(exact.json.next_cursor, null)
    const first = await search({ q: "papaya", limit: 200 })
    assert.deepStrictEqual(first.json.items.map((m: any) => m.id), [...ids].reverse())
    assert.deepStrictEqual((await found({ q: "papaya" })).length, 7)
  })

  it("400 naming the problem for a bad q, limit, cursor, time or id; never a 500", async () => {
    const problems: Array<readonly [Record<string, string | number> | string, string, RegExp]> = [
      ["", "q", /q must not be empty/],
      [{ q: "   " }, "q", /q must not be empty/],
      [{ q: "\"" }, "q", /not closed/],
      [{ q: "a\"b" }, "q", /not closed/],
      [{ q: "\"open phrase" }, "q", /not closed/],
      [{ q: "*" }, "q", /a letter or a digit/],
      [{ q: "**" }, "q", /a letter or a digit/],
      [{ q: "🙂 👍" }, "q", /a letter or a digit/],
      [{ q: "x".repeat(10_000) }, "q", /at most 256 characters/],
      [{ q: "a", limit: 0 }, "limit", /from 1 to 200/],
      [{ q: "a", limit: 201 }, "limit", /from 1 to 200/],
      [{ q: "a", limit: "ten" }, "limit", /./],
      [{ q: "a", cursor: "garbage" }, "cursor", /next_cursor/],
      [{ q: "a", cursor: "" }, "cursor", /next_cursor/],
      [{ q: "a", from: "yesterday" }, "from", /./],
      [{ q: "a", from: -1 }, "from", /Unix time/],
      [{ q: "a", to: 1.5 }, "to", /./],
      [{ q: "a", from: 200, to: 200 }, "from", /earlier than to/],
      [{ q: "a", from: 300, to: 200 }, "from", /earlier than to/],
      [{ q: "a", bot_id: 0 }, "bot_id", /./],
      [{ q: "a", chat_id: "x" }, "chat_id", /./],
      [{ q: "a", user_id: "abc" }, "user_id", /./]
    ]
    for (const [query, path, message] of problems) {
      const reply = typeof query === "string" ? await server.call(`/api/search${query}`) : await search(query)
      assertError(reply, 400, "invalid_request")
      assert.deepStrictEqual([...new Set(reply.json.details?.map((d: any) => d.path))], [path], reply.text)
      assert.match(reply.json.details[0].message, message, reply.text)
    }
  })

  it("takes every other character as text: nasty queries are a 200 or a 400, never a 500", async () => {
    const user = fake.addUser()
    fake.userSends(tgA.id, { user, text: "NEAR(a b) x-ray key:value ^caret (paren) +plus 🙂 Ёлка" })
    await foundEventually({ q: "caret" }, 1)
    const nasty = ["\"", "a\"b", "*", "**", "-x", "NEAR(a b)", "a:b", "(", ")", "^a", "🙂", "Ёлка", "ёлка",
      "x".repeat(10_000), "AND", "OR NOT", "a OR b", "{key value}", "key : value", "\"\"", "'", "\\", "%", "_", "a*b",
      "\u0000", "caret\u0000\"", "text:caret", "scope:b1", "caret*^", "x-ray*", "+plus -minus"]
    for (const q of nasty) {
      const reply = await search({ q })
      assert.include([200, 400], reply.status, `${JSON.stringify(q)}: ${reply.text}`)
      if (reply.status === 400) assertError(reply, 400, "invalid_request")
    }
    for (const q of ["NEAR(a b)", "x-ray", "key:value", "^caret", "(paren)", "+plus", "ёлка", "ЁЛКА", "text:caret"]) {
      const items = await found({ q })
      assert.deepStrictEqual(items.length, q === "text:caret" ? 0 : 1, q)
    }
  })
})
