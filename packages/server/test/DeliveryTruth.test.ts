import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, storages } from "./Harness.js"
import { addBot, chatWhen, type InboxWorld, operatorKey, startWorld } from "./Inbox.js"

const t0 = 1_800_000_000

describe.each(storages)("delivery truth (%s)", (storage) => {
  let world: InboxWorld
  let a: Awaited<ReturnType<typeof addBot>>
  let b: Awaited<ReturnType<typeof addBot>>
  let ann: { id: number }
  let bob: { id: number }

  beforeAll(async () => {
    world = await startWorld(t0, { storage })
    a = await addBot(world, {}, { username: "alpha_bot" })
    b = await addBot(world, {}, { username: "beta_bot" })
    ann = world.fake.addUser({ first_name: "Ann", username: "ann" })
    bob = world.fake.addUser({ first_name: "Bob", username: "bob" })
    world.fake.userSends(a.tg.id, { chat: ann.id, text: "ann to a" })
    world.fake.userSends(b.tg.id, { chat: ann.id, text: "ann to b" })
    await chatWhen(world, a.id, ann.id, (c) => c.message_count === 1)
    await chatWhen(world, b.id, ann.id, (c) => c.message_count === 1)
  })
  afterAll(async () => {
    await world?.close()
  })

  const send = (body: Record<string, unknown>, key?: string) =>
    world.server.call("/api/messages/send", { body, ...(key === undefined ? {} : { key }) })
  const history = async (botId: number, chatId: number) =>
    (await world.server.call(`/api/messages?bot_id=${botId}&chat_id=${chatId}`)).json as Array<any>
  const sends = (botId: number, text: string) => world.fake.sent(botId).filter((s) => s.message.text === text).length

  it("sent: Telegram's message_id, a local_id, delivery sent with its time; the history shows the same", async () => {
    const reply = await send({ bot_id: a.id, chat_id: ann.id, text: "hello Ann" })
    assert.strictEqual(reply.status, 200, reply.text)
    const sent = world.fake.sent(a.tg.id).at(-1)!.message
    assert.strictEqual(reply.json.id, sent.message_id)
    assert.isAbove(reply.json.local_id, 0)
    assert.strictEqual(reply.json.delivery, "sent")
    assert.strictEqual(reply.json.delivery_error, "")
    assert.isAbove(reply.json.delivery_at, 0)
    assert.deepStrictEqual((await history(a.id, ann.id))[0], reply.json)
    const chat = (await world.server.call(`/api/chats/get?bot_id=${a.id}&chat_id=${ann.id}`)).json
    assert.strictEqual(chat.last_message.id, sent.message_id)
    assert.strictEqual(chat.reachable, true)
    const received = (await history(a.id, ann.id)).find((m) => m.text === "ann to a")
    assert.isUndefined(received.delivery)
    assert.isUndefined(received.local_id)
  })

  it("failed: a 403 blocked is 502 with the stored message; the person is unreachable through that bot only", async () => {
    world.fake.failNext("sendMessage", FakeTelegram.blockedByUser, { botId: a.tg.id })
    const reply = await send({ bot_id: a.id, chat_id: ann.id, text: "are you there?" })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "bot was blocked by the user")
    const message = reply.json.message
    assert.strictEqual(message.id, 0)
    assert.strictEqual(message.delivery, "failed")
    assert.strictEqual(message.delivery_error, "Forbidden: bot was blocked by the user")
    assert.isAbove(message.local_id, 0)
    assert.deepInclude((await history(a.id, ann.id)).find((m) => m.local_id === message.local_id), message)

    const chat = (await world.server.call(`/api/chats/get?bot_id=${a.id}&chat_id=${ann.id}`)).json
    assert.strictEqual(chat.reachable, false)
    assert.strictEqual(chat.unreachable_reason, "Forbidden: bot was blocked by the user")
    assert.isAbove(chat.unreachable_since, 0)
    const person = (await world.server.call(`/api/people/get?user_id=${ann.id}`)).json
    const through = (botId: number) => person.chats.find((c: any) => c.bot_id === botId && c.chat_id === ann.id)
    assert.strictEqual(through(a.id).reachable, false)
    assert.strictEqual(through(a.id).unreachable_reason, "Forbidden: bot was blocked by the user")
    assert.strictEqual(through(b.id).reachable, true)
    assert.deepStrictEqual(person.reachable_bot_ids, [b.id])
  })

  it("the person writing again clears the mark, as a sent message does", async () => {
    world.fake.userSends(a.tg.id, { chat: ann.id, text: "back again" })
    const chat = await chatWhen(world, a.id, ann.id, (c) => c.reachable === true)
    assert.strictEqual(chat.unreachable_reason, "")
    assert.strictEqual(chat.unreachable_since, 0)
    const person = (await world.server.call(`/api/people/get?user_id=${ann.id}`)).json
    assert.sameMembers(person.reachable_bot_ids, [a.id, b.id])

    world.fake.failNext("sendMessage", { error_code: 403, description: "Forbidden: user is deactivated" })
    assertError(await send({ bot_id: b.id, chat_id: ann.id, text: "hi from b" }), 502, "telegram_error")
    assert.strictEqual((await chatWhen(world, b.id, ann.id, (c) => c.reachable === false)).unreachable_reason,
      "Forbidden: user is deactivated")
    assert.strictEqual((await send({ bot_id: b.id, chat_id: ann.id, text: "hi again from b" })).status, 200)
    assert.strictEqual((await chatWhen(world, b.id, ann.id, (c) => c.reachable === true)).unreachable_since, 0)
  })

  it("another refusal fails the message without marking anyone unreachable", async () => {
    world.fake.failNext("sendMessage", { error_code: 400, description: "Bad Request: message is too long" })
    const reply = await send({ bot_id: a.id, chat_id: ann.id, text: "too long, says Telegram" })
    assertError(reply, 502, "telegram_error")
    assert.strictEqual(reply.json.message.delivery_error, "Bad Request: message is too long")
    assert.strictEqual((await world.server.call(`/api/chats/get?bot_id=${a.id}&chat_id=${ann.id}`)).json.reachable, true)
  })

  it("unknown: the connection dropped after Telegram took it is 504 delivery_unknown, and it is never sent again", async () => {
    world.fake.dropNext("sendMessage", { botId: a.tg.id })
    const reply = await send({ bot_id: a.id, chat_id: bob.id, text: "did it arrive?" })
    assertError(reply, 504, "delivery_unknown")
    assert.strictEqual(reply.json.message.delivery, "unknown")
    assert.strictEqual(reply.json.message.id, 0)
    assert.strictEqual(reply.json.message.text, "did it arrive?")
    assert.strictEqual(sends(a.tg.id, "did it arrive?"), 1)
    const stored = (await history(a.id, bob.id)).find((m) => m.local_id === reply.json.message.local_id)
    assert.strictEqual(stored.delivery, "unknown")
    await new Promise((resolve) => setImmediate(resolve))
    assert.strictEqual(sends(a.tg.id, "did it arrive?"), 1)
  })

  it("resolve-delivery: sent (with Telegram's id), failed, resend; 409 for states that do not allow it", async () => {
    const unknown = async (text: string) => {
      world.fake.dropNext("sendMessage", { botId: a.tg.id })
      const reply = await send({ bot_id: a.id, chat_id: bob.id, text })
      assert.strictEqual(reply.status, 504, reply.text)
      return reply.json.message.local_id as number
    }
    const resolve = (body: Record<string, unknown>, key?: string) =>
      world.server.call("/api/messages/resolve-delivery", { body, ...(key === undefined ? {} : { key }) })

    const first = await unknown("first unknown")
    const telegramId = world.fake.sent(a.tg.id).at(-1)!.message.message_id
    const sent = await resolve({ local_id: first, outcome: "sent", message_id: telegramId })
    assert.strictEqual(sent.status, 200, sent.text)
    assert.deepInclude(sent.json, { local_id: first, delivery: "sent", id: telegramId, delivery_error: "" })
    assertError(await resolve({ local_id: first, outcome: "failed" }), 409, "delivery_not_resolvable")
    assertError(await resolve({ local_id: first, outcome: "resend" }), 409, "delivery_not_resolvable")

    const second = await unknown("second unknown")
    const failed = await resolve({ local_id: second, outcome: "failed" })
    assert.strictEqual(failed.status, 200, failed.text)
    assert.deepInclude(failed.json, { local_id: second, delivery: "failed", id: 0 })
    const resent = await resolve({ local_id: second, outcome: "resend" })
    assert.strictEqual(resent.status, 200, resent.text)
    assert.strictEqual(resent.json.delivery, "sent")
    assert.strictEqual(resent.json.local_id, second)
    assert.strictEqual(resent.json.id, world.fake.sent(a.tg.id).at(-1)!.message.message_id)
    assert.strictEqual(sends(a.tg.id, "second unknown"), 2)
    assert.strictEqual((await history(a.id, bob.id)).filter((m) => m.local_id === second).length, 1)

    const third = await unknown("third unknown")
    world.fake.failNext("sendMessage", FakeTelegram.blockedByUser, { botId: a.tg.id })
    const refused = await resolve({ local_id: third, outcome: "resend" })
    assertError(refused, 502, "telegram_error")
    assert.deepInclude(refused.json.message, { local_id: third, delivery: "failed" })

    assertError(await resolve({ local_id: 987654, outcome: "sent" }), 404, "message_not_found")
    assertError(await resolve({ local_id: first, outcome: "maybe" }), 400, "invalid_request")
    const outsider = await operatorKey(world, [b.id])
    assertError(await resolve({ local_id: third, outcome: "failed" }, outsider), 403, "forbidden")
    const audit = (await world.server.call("/api/audit?action=messages.resolve_delivery")).json
    assert.isAtLeast(audit.items.length, 4)
    await eventually(async () => (await world.server.call(`/api/chats/get?bot_id=${a.id}&chat_id=${bob.id}`)).json
      ?.reachable === false || undefined)
  })

  it("a route's reply refused as blocked marks the person unreachable through the sending bot; one that arrives marks them reachable", async () => {
    const deskTg = world.fake.addBot({ username: "desk_bot" })
    const desk = (await world.server.call("/api/bots/add", { body: { token: deskTg.token, manage_enabled: true } })).json
    const group = world.fake.addGroup({ title: "Operators", members: [deskTg.id] })
    const olga = world.fake.addUser({ first_name: "Olga" })
    const cleo = world.fake.addUser({ first_name: "Cleo" })
    const route = await world.server.call("/api/routes/add", {
      body: { source_bot_id: a.id, target_bot_id: desk.id, action: "copy", target_chat_id: group.id }
    })
    assert.strictEqual(route.status, 200, route.text)
    world.fake.userSends(a.tg.id, { user: cleo, text: "help me, desk" })
    const relayed = await world.fake.waitForSent((s) => s.botId === deskTg.id && s.message.text?.endsWith("help me, desk") === true)
    await chatWhen(world, a.id, cleo.id, (c) => c.reachable === true)
    world.fake.failNext("sendMessage", FakeTelegram.blockedByUser, { botId: a.tg.id })
    world.fake.userSends(deskTg.id, { chat: group.id, user: olga, text: "on it", reply_to_message_id: relayed.message.message_id })
    const chat = await chatWhen(world, a.id, cleo.id, (c) => c.reachable === false)
    assert.strictEqual(chat.unreachable_reason, "Forbidden: bot was blocked by the user")
    world.fake.userSends(deskTg.id, { chat: group.id, user: olga, text: "unblocked?", reply_to_message_id: relayed.message.message_id })
    await world.fake.waitForSent((s) => s.botId === a.tg.id && s.message.text?.endsWith("unblocked?") === true)
    const again = await chatWhen(world, a.id, cleo.id, (c) => c.reachable === true)
    assert.strictEqual(again.unreachable_reason, "")
  })
})
