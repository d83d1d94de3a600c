import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createServer, type Server } from "node:http"
import { type AddressInfo, createServer as createNetServer } from "node:net"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeLlm, FakeTelegram } from "@botrelay/testing"
import * as Config from "../src/Config.js"
import { eventually, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let llm: FakeLlm.FakeLlm
let server: TestServer

beforeAll(async () => {
  fake = await FakeTelegram.start()
  llm = await FakeLlm.start()
  server = await startServer({ telegramApi: fake.apiRoot })
})
afterAll(async () => {
  await server?.close()
  await llm?.close()
  await fake?.close()
})

let counter = 0

const addBot = async (tg: FakeTelegram.FakeBot, body: Record<string, unknown> = {}, on = server) => {
  const reply = await on.call("/api/bots/add", { body: { token: tg.token, name: tg.first_name, ...body } })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { id: number }
}

const addRoute = async (body: Record<string, unknown>, on = server) => {
  const reply = await on.call("/api/routes/add", { body })
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as { id: number } & Record<string, unknown>
}

const messages = async (botId: number, chatId: number, on = server) => {
  const reply = await on.call(`/api/messages?bot_id=${botId}&chat_id=${chatId}`)
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as Array<Record<string, any>>
}

const sends = async (botId: number, on = server) => {
  const reply = await on.call(`/api/routes/sends?bot_id=${botId}`)
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json as Array<Record<string, any>>
}

/** Resolves once the bot's history holds `count` incoming messages of the chat: their routes are evaluated by then. */
const processed = (botId: number, chatId: number, count: number, on = server) =>
  eventually(async () => {
    const found = (await messages(botId, chatId, on)).filter((m) => m.direction === "in")
    return found.length >= count ? found : undefined
  })

/** Resolves once none of the bot's route sends is pending, with them oldest first; group sends are paced 3 s apart. */
const settled = (botId: number, on = server) =>
  eventually(async () => {
    const all = await sends(botId, on)
    return all.every((s) => s.status !== "pending") ? all.reverse() : undefined
  }, 15_000)

const sentBy = (tg: FakeTelegram.FakeBot, chatId?: number) =>
  fake.sent(tg.id).filter((s) => chatId === undefined || s.message.chat.id === chatId)

const sha256 = (bytes: Uint8Array | undefined) => createHash("sha256").update(bytes ?? new Uint8Array()).digest("hex")

const largest = (message: { readonly photo?: ReadonlyArray<{ file_id: string; width: number; height: number }> }) =>
  [...(message.photo ?? [])].sort((a, b) => b.width * b.height - a.width * a.height)[0]!.file_id

/**
 * A support desk: customers write to the support bot privately; the operator bot posts their messages in the
 * operators' group, which the support bot is not in.
 */
const desk = async (route: Record<string, unknown> = {}, on = server) => {
  const n = ++counter
  const supportTg = fake.addBot({ username: `support${n}_bot`, first_name: `Support ${n}` })
  const operatorTg = fake.addBot({ username: `operator${n}_bot`, first_name: `Operators ${n}` })
  const group = fake.addGroup({ title: `Operators ${n}`, members: [operatorTg.id] })
  const operatorUser = fake.addUser({ first_name: "Olga", username: `olga${n}` })
  const support = await addBot(supportTg, { manage_enabled: true }, on)
  const operator = await addBot(operatorTg, { manage_enabled: true }, on)
  const routed = await addRoute({
    source_bot_id: support.id,
    target_bot_id: operator.id,
    action: "copy",
    target_chat_id: group.id,
    ...route
  }, on)
  return { supportTg, operatorTg, group, operatorUser, support, operator, route: routed }
}

const header = (user: { id: number; first_name: string; last_name?: string; username?: string }) =>
  `${[user.first_name, user.last_name].filter(Boolean).join(" ")} (${
    user.username === undefined ? "" : `@${user.username}, `
  }id ${user.id}):`

describe("routes", () => {
  it("support desk with text: the operator bot posts the message; the answer goes back as a reply", async () => {
    const d = await desk()
    const ann = fake.addUser({ first_name: "Ann", last_name: "Lee", username: "ann" })
    const bob = fake.addUser({ first_name: "Bob" })
    const text = "Is 2 < 3 & is <b>this</b> bold?"
    const question = fake.userSends(d.supportTg.id, {
      user: ann,
      text,
      entities: [{ type: "italic", offset: 0, length: 2 }]
    })
    const relayedBy = (tail: string) =>
      fake.waitForSent((s) => s.botId === d.operatorTg.id && s.message.text?.endsWith(tail) === true)
    const relayed = await relayedBy(text)
    const line = header(ann)
    assert.strictEqual(relayed.method, "sendMessage")
    assert.strictEqual(relayed.message.chat.id, d.group.id)
    assert.strictEqual(relayed.message.text, `${line}\n${text}`)
    assert.deepStrictEqual(relayed.message.entities, [
      { type: "bold", offset: 0, length: line.length },
      { type: "italic", offset: line.length + 1, length: 2 }
    ])
    const other = fake.userSends(d.supportTg.id, { user: bob, text: "me too" })
    const relayedOther = await relayedBy("me too")

    fake.userSends(d.operatorTg.id, {
      chat: d.group.id,
      user: d.operatorUser,
      text: "Yes: 2 < 3.",
      reply_to_message_id: relayed.message.message_id
    })
    const answer = await fake.waitForSent((s) => s.botId === d.supportTg.id && s.message.chat.id === ann.id)
    assert.strictEqual(answer.message.text, "Yes: 2 < 3.")
    assert.strictEqual(answer.message.reply_to_message?.message_id, question.message_id)
    fake.userSends(d.operatorTg.id, {
      chat: d.group.id,
      user: d.operatorUser,
      text: "Bob, wait please",
      reply_to_message_id: relayedOther.message.message_id
    })
    const answerOther = await fake.waitForSent((s) => s.botId === d.supportTg.id && s.message.chat.id === bob.id)
    assert.strictEqual(answerOther.message.reply_to_message?.message_id, other.message_id)
    assert.deepStrictEqual(sentBy(d.supportTg, ann.id).map((s) => s.message.text), ["Yes: 2 < 3."])

    const posted = (await messages(d.operator.id, d.group.id)).find((m) => m.id === relayed.message.message_id)
    assert.deepInclude(posted, { direction: "out", text: `${line}\n${text}` })
    const history = await messages(d.support.id, ann.id)
    assert.deepInclude(history.find((m) => m.direction === "out"), {
      text: "Yes: 2 < 3.",
      reply_to_message_id: question.message_id
    })
    const done = await settled(d.operator.id)
    assert.deepStrictEqual(done.map((s) => [s.kind, s.status]), [["copy", "sent"], ["copy", "sent"]])
  })

  it("support desk with a photo: the photo is uploaded again both ways, bytes unchanged", async () => {
    const d = await desk()
    const cid = fake.addUser({ first_name: "Cid", username: "cid" })
    const photo = fake.userSends(d.supportTg.id, { user: cid, photo: true, caption: "my receipt" })
    const relayed = await fake.waitForSent((s) => s.botId === d.operatorTg.id)
    assert.strictEqual(relayed.method, "sendPhoto")
    assert.strictEqual(relayed.message.chat.id, d.group.id)
    assert.strictEqual(relayed.message.caption, `${header(cid)}\nmy receipt`)
    assert.isDefined(relayed.upload)
    assert.strictEqual(relayed.upload.sha256, sha256(fake.fileBytes(largest(photo))))

    const reply = fake.userSends(d.operatorTg.id, {
      chat: d.group.id,
      user: d.operatorUser,
      photo: true,
      caption: "here is the fix",
      reply_to_message_id: relayed.message.message_id
    })
    const answer = await fake.waitForSent((s) => s.botId === d.supportTg.id)
    assert.strictEqual(answer.method, "sendPhoto")
    assert.strictEqual(answer.message.chat.id, cid.id)
    assert.strictEqual(answer.message.caption, "here is the fix")
    assert.strictEqual(answer.message.reply_to_message?.message_id, photo.message_id)
    assert.strictEqual(answer.upload!.sha256, sha256(fake.fileBytes(largest(reply))))
  })

  it("forwards with forwardMessage when the target bot sees the chat, and copies with copyMessage", async () => {
    const n = ++counter
    const aTg = fake.addBot({ username: `fwd_a${n}_bot` })
    const bTg = fake.addBot({ username: `fwd_b${n}_bot` })
    const shared = fake.addGroup({ title: "shared", members: [aTg.id, bTg.id] })
    const archive = fake.addGroup({ title: "archive", members: [bTg.id] })
    const a = await addBot(aTg)
    const b = await addBot(bTg)
    await addRoute({ source_bot_id: a.id, target_bot_id: b.id, action: "forward", target_chat_id: archive.id })
    await addRoute({ source_bot_id: a.id, target_bot_id: b.id, action: "copy", target_chat_id: archive.id })
    const user = fake.addUser({ first_name: "Dan" })
    fake.userSends(aTg.id, { chat: shared.id, user, text: "<i>as is</i>" })
    await eventually(() => sentBy(bTg, archive.id).length === 2 || undefined)
    const [forwarded, copied] = sentBy(bTg, archive.id)
    assert.strictEqual(forwarded!.method, "forwardMessage")
    assert.strictEqual(forwarded!.message.text, "<i>as is</i>")
    assert.strictEqual(forwarded!.message.forward_origin?.sender_user?.id, user.id)
    assert.strictEqual(copied!.method, "copyMessage")
    assert.strictEqual(copied!.message.text, "<i>as is</i>")
    assert.isUndefined(copied!.message.forward_origin)
  })

  it("falls back to sending the content when Telegram says the target bot cannot see the chat", async () => {
    const n = ++counter
    const aTg = fake.addBot({ username: `hidden_a${n}_bot` })
    const bTg = fake.addBot({ username: `hidden_b${n}_bot` })
    const secret = fake.addGroup({ title: "secret", members: [aTg.id] })
    const open = fake.addGroup({ title: "open", members: [bTg.id] })
    const a = await addBot(aTg)
    const b = await addBot(bTg)
    await addRoute({ source_bot_id: a.id, target_bot_id: b.id, action: "forward", target_chat_id: open.id })
    const user = fake.addUser({ first_name: "Eve" })
    fake.userSends(aTg.id, { chat: secret.id, user, text: "psst" })
    const sent = await fake.waitForSent((s) => s.botId === bTg.id)
    assert.strictEqual(sent.method, "sendMessage")
    assert.strictEqual(sent.message.text, `${header(user)}\npsst`)
    assert.isTrue(fake.calls.some((c) => c.method.toLowerCase() === "forwardmessage" && c.botId === bTg.id))
  })

  it("a send Telegram fails with a 5xx is retried; one it refuses is given up and shown as dead", async () => {
    const d = await desk()
    const user = fake.addUser({ first_name: "Ola" })
    fake.failNext("sendMessage", { error_code: 502, description: "Bad Gateway" }, { botId: d.operatorTg.id })
    fake.userSends(d.supportTg.id, { user, text: "first" })
    await processed(d.support.id, user.id, 1)
    await settled(d.operator.id)
    const refusal = "Forbidden: bot was kicked from the group chat"
    fake.failNext("sendMessage", { error_code: 403, description: refusal }, { botId: d.operatorTg.id })
    fake.userSends(d.supportTg.id, { user, text: "second" })
    await processed(d.support.id, user.id, 2)
    const done = await settled(d.operator.id)
    assert.deepStrictEqual(done.map((s) => [s.status, s.attempts]), [["sent", 2], ["dead", 1]])
    assert.strictEqual(done[1]!.last_error, `403 ${refusal}`)
    const dead = await server.call(`/api/routes/sends?bot_id=${d.operator.id}&status=dead`)
    assert.deepStrictEqual(dead.json.map((s: any) => s.id), [done[1]!.id])
    assert.deepStrictEqual(sentBy(d.operatorTg).map((s) => s.message.text), [`${header(user)}\nfirst`])
  })

  it("keyword routes match whole words, case-insensitively, in any script", async () => {
    const d = await desk({ condition_type: "keyword", condition_value: "help, refund,помощь" })
    const user = fake.addUser({ first_name: "Fay" })
    const texts = ["I need help!", "helpful tips", "REFUND please", "с помощью", "нужна ПОМОЩЬ"]
    for (const text of texts) fake.userSends(d.supportTg.id, { user, text })
    await processed(d.support.id, user.id, texts.length)
    const done = await settled(d.operator.id)
    assert.strictEqual(done.length, 3)
    assert.deepStrictEqual(
      sentBy(d.operatorTg, d.group.id).map((s) => s.message.text!.split("\n")[1]),
      ["I need help!", "REFUND please", "нужна ПОМОЩЬ"]
    )
  })

  it("user_id and chat_id conditions take lists of ids", async () => {
    const n = ++counter
    const sourceTg = fake.addBot({ username: `lists${n}_bot` })
    const targetTg = fake.addBot({ username: `lists_t${n}_bot` })
    const inbox = fake.addGroup({ title: "inbox", members: [targetTg.id] })
    const [g1, g2, g3] = [1, 2, 3].map((i) => fake.addGroup({ title: `g${i}`, members: [sourceTg.id] }))
    const [u1, u2, u3] = ["U1", "U2", "U3"].map((first_name) => fake.addUser({ first_name }))
    const source = await addBot(sourceTg, { manage_enabled: true })
    const target = await addBot(targetTg)
    const byUser = await addRoute({
      source_bot_id: source.id,
      target_bot_id: target.id,
      action: "copy",
      target_chat_id: inbox.id,
      condition_type: "user_id",
      condition_value: `${u1!.id}, ${u2!.id}`
    })
    const byChat = await addRoute({
      source_bot_id: source.id,
      target_bot_id: target.id,
      action: "copy",
      target_chat_id: inbox.id,
      condition_type: "chat_id",
      condition_value: `${g1!.id},${g2!.id}`
    })
    for (const user of [u1!, u2!, u3!]) fake.userSends(sourceTg.id, { user, text: `private ${user.first_name}` })
    for (const group of [g1!, g2!, g3!]) {
      fake.userSends(sourceTg.id, { chat: group.id, user: u3!, text: `in ${group.title}` })
    }
    for (const user of [u1!, u2!, u3!]) await processed(source.id, user.id, 1)
    for (const group of [g1!, g2!, g3!]) await processed(source.id, group.id, 1)
    const done = await settled(target.id)
    assert.deepStrictEqual(
      done.map((s) => [s.route_id, JSON.parse(s.payload).message.text]),
      [[byUser.id, "private U1"], [byUser.id, "private U2"], [byChat.id, "in g1"], [byChat.id, "in g2"]]
    )
  })

  it("regex routes match the text or caption", async () => {
    const d = await desk({ condition_type: "regex", condition_value: "^order #\\d+$" })
    const user = fake.addUser({ first_name: "Gus" })
    fake.userSends(d.supportTg.id, { user, text: "my order #12" })
    fake.userSends(d.supportTg.id, { user, photo: true, caption: "order #34" })
    fake.userSends(d.supportTg.id, { user, text: "order #56" })
    await processed(d.support.id, user.id, 3)
    const done = await settled(d.operator.id)
    const texts = done.map((s) => JSON.parse(s.payload).message).map((m) => m.text ?? m.caption)
    assert.deepStrictEqual(texts, ["order #34", "order #56"])
  })

  it("drop keeps the update from the backend and long-poll buffer, not history, and stops later routes", async () => {
    const received: Array<any> = []
    const hook: Server = createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => body += chunk)
      req.on("end", () => {
        received.push(JSON.parse(body))
        res.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve))
    try {
      const n = ++counter
      const sourceTg = fake.addBot({ username: `drop${n}_bot` })
      const targetTg = fake.addBot({ username: `drop_t${n}_bot` })
      const room = fake.addGroup({ title: "room", members: [targetTg.id] })
      const source = await addBot(sourceTg, {
        manage_enabled: true,
        proxy_enabled: true,
        long_poll_enabled: true,
        backend_url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`
      })
      const target = await addBot(targetTg)
      const common = { source_bot_id: source.id, target_bot_id: target.id, target_chat_id: room.id }
      const before = await addRoute({ ...common, action: "copy", condition_type: "keyword", condition_value: "spam" })
      await addRoute({ ...common, action: "drop", condition_type: "keyword", condition_value: "spam" })
      const after = await addRoute({ ...common, action: "copy" })
      const user = fake.addUser({ first_name: "Hal" })
      fake.userSends(sourceTg.id, { user, text: "buy spam now" })
      fake.userSends(sourceTg.id, { user, text: "hello" })
      await processed(source.id, user.id, 2)
      await eventually(() => received.length >= 1 || undefined)
      const done = await settled(target.id)
      assert.deepStrictEqual(
        done.map((s) => [s.route_id, JSON.parse(s.payload).message.text]),
        [[before.id, "buy spam now"], [after.id, "hello"]]
      )
      assert.deepStrictEqual(received.map((u) => u.message.text), ["hello"])
      const poll = await fetch(`${server.baseUrl}/tgapi/bot${sourceTg.token}/getUpdates`)
      const buffered = (await poll.json()) as { result: Array<any> }
      assert.deepStrictEqual(buffered.result.map((u) => u.message.text), ["hello"])
      assert.deepStrictEqual((await messages(source.id, user.id)).map((m) => m.text).sort(), ["buy spam now", "hello"])
    } finally {
      await new Promise<void>((resolve) => hook.close(() => resolve()))
    }
  })

  it("a route change starts and stops the polling of the bots it names, and only theirs", async () => {
    const sourceTg = fake.addBot()
    const targetTg = fake.addBot()
    const bystanderTg = fake.addBot()
    const source = await addBot(sourceTg)
    const target = await addBot(targetTg)
    const bystander = await addBot(bystanderTg, { manage_enabled: true })
    await fake.waitForPoll(bystanderTg.id)
    const running = async (id: number) => (await server.call("/api/bots")).json.find((b: any) => b.id === id).running
    assert.isFalse(await running(source.id))
    assert.isFalse(await running(target.id))
    const polls = () => fake.calls.filter((c) => c.botId === bystanderTg.id && c.method === "getUpdates").length

    const before = polls()
    const route = await addRoute({ source_bot_id: source.id, target_bot_id: target.id, action: "copy", target_chat_id: -1 })
    await eventually(async () => (await running(source.id)) && (await running(target.id)) ? true : undefined)
    const other = await addRoute({ source_bot_id: source.id, target_bot_id: source.id, action: "drop", enabled: false })
    assert.strictEqual(
      (await server.call("/api/routes/update", { body: { ...route, enabled: false } })).status,
      200
    )
    await eventually(async () => !(await running(source.id)) && !(await running(target.id)) ? true : undefined)
    assert.strictEqual((await server.call(`/api/routes/delete?id=${other.id}`, { method: "POST" })).status, 200)
    assert.strictEqual((await server.call(`/api/routes/delete?id=${route.id}`, { method: "POST" })).status, 200)
    assert.isTrue(await running(bystander.id))
    assert.isAtMost(polls() - before, 1, "the bystander's poll was not restarted by route changes")
  })

  it("a disabled route never fires, and editing a route takes effect without a restart", async () => {
    const d = await desk({ enabled: false, condition_type: "keyword", condition_value: "alpha" })
    const user = fake.addUser({ first_name: "Ida" })
    fake.userSends(d.supportTg.id, { user, text: "alpha" })
    await processed(d.support.id, user.id, 1)
    const update = await server.call("/api/routes/update", {
      body: {
        ...d.route,
        enabled: true,
        condition_value: "beta"
      }
    })
    assert.strictEqual(update.status, 200, update.text)
    fake.userSends(d.supportTg.id, { user, text: "alpha again" })
    fake.userSends(d.supportTg.id, { user, text: "beta" })
    await processed(d.support.id, user.id, 3)
    const done = await settled(d.operator.id)
    assert.deepStrictEqual(done.map((s) => JSON.parse(s.payload).message.text), ["beta"])
  })

  it("a route whose target bot is disabled does not send, and says so in the log", async () => {
    const d = await desk()
    const toggled = await server.call(`/api/bots/toggle-disabled?id=${d.operator.id}`, { method: "POST" })
    assert.strictEqual(toggled.status, 200, toggled.text)
    const user = fake.addUser({ first_name: "Pia" })
    fake.userSends(d.supportTg.id, { user, text: "anyone?" })
    await processed(d.support.id, user.id, 1)
    assert.deepStrictEqual(await sends(d.operator.id), [])
    const warned = (line: string) => line.includes("the route does not send") && line.includes(`${d.route.id}`)
    assert.isTrue(server.logs.some(warned))
  })

  it("the reverse path ignores messages that are not replies, and replies to messages nobody routed", async () => {
    const d = await desk()
    const jo = fake.addUser({ first_name: "Jo" })
    fake.userSends(d.supportTg.id, { user: jo, text: "question" })
    await fake.waitForSent((s) => s.botId === d.operatorTg.id)
    const own = fake.userSends(d.operatorTg.id, { chat: d.group.id, user: d.operatorUser, text: "note to self" })
    fake.userSends(d.operatorTg.id, { chat: d.group.id, user: d.operatorUser, text: "not a reply" })
    fake.userSends(d.operatorTg.id, {
      chat: d.group.id,
      user: d.operatorUser,
      text: "reply to a colleague",
      reply_to_message_id: own.message_id
    })
    await processed(d.operator.id, d.group.id, 3)
    assert.deepStrictEqual(await sends(d.support.id), [])
    assert.deepStrictEqual(sentBy(d.supportTg), [])
  })

  it("a routed message that starts a loop between two routes is sent once", async () => {
    const n = ++counter
    const aTg = fake.addBot({ username: `loop_a${n}_bot` })
    const bTg = fake.addBot({ username: `loop_b${n}_bot` })
    const channel = fake.addGroup({ type: "channel", title: "loop", members: [aTg.id, bTg.id] })
    const a = await addBot(aTg, { manage_enabled: true })
    const b = await addBot(bTg, { manage_enabled: true })
    await addRoute({ source_bot_id: a.id, target_bot_id: b.id, action: "copy" })
    await addRoute({ source_bot_id: b.id, target_bot_id: a.id, action: "copy" })
    fake.channelPost(aTg.id, channel.id, "echo")
    await eventually(() => sentBy(aTg).length + sentBy(bTg).length >= 2 || undefined)
    await processed(a.id, channel.id, 2)
    await processed(b.id, channel.id, 2)
    await settled(a.id)
    await settled(b.id)
    assert.strictEqual(sentBy(aTg).length, 1)
    assert.strictEqual(sentBy(bTg).length, 1)
    const a2 = await messages(a.id, channel.id)
    assert.strictEqual(a2.filter((m) => m.direction === "in").length, 2)
  })
})

/** A port nothing listens on right now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createNetServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as AddressInfo).port
      probe.close(() => resolve(port))
    })
  })

describe("redelivery", () => {
  it("an update Telegram delivers twice is routed once", async () => {
    const port = await freePort()
    const hooked = await startServer({ telegramApi: fake.apiRoot, port, publicUrl: `http://127.0.0.1:${port}` })
    try {
      const d = await desk({}, hooked)
      const update = await hooked.call("/api/bots/update", { body: { id: d.support.id, webhook_mode: true } })
      assert.strictEqual(update.status, 200, update.text)
      const registered = await fake.waitForCall((c) => c.botId === d.supportTg.id && c.method === "setWebhook")
      const user = fake.addUser({ first_name: "Nia" })
      const body = JSON.stringify({
        update_id: 777001,
        message: { message_id: 41, date: 1, from: user, chat: { id: user.id, type: "private" }, text: "twice" }
      })
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`${hooked.baseUrl}/telegram/webhook/${d.support.id}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-telegram-bot-api-secret-token": registered.params.secret_token as string
          },
          body
        })
        assert.strictEqual(response.status, 200)
      }
      await processed(d.support.id, user.id, 1, hooked)
      const done = await settled(d.operator.id, hooked)
      assert.strictEqual(done.length, 1)
      assert.deepStrictEqual(sentBy(d.operatorTg).map((s) => s.message.text), [`${header(user)}\ntwice`])
    } finally {
      await hooked.close()
    }
  })
})

describe("restarts", () => {
  it("a pending send survives a restart and is made once; updates queued while down are routed once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "botrelay-routing-"))
    let first: TestServer | undefined = await startServer({ telegramApi: fake.apiRoot, dir })
    let second: TestServer | undefined
    try {
      const d = await desk({}, first)
      const user = fake.addUser({ first_name: "Quinn" })
      fake.userSends(d.supportTg.id, { user, text: "before" })
      await eventually(() => sentBy(d.operatorTg).length === 1 || undefined)
      const failure = { error_code: 500, description: "Internal Server Error" }
      fake.failAlways("sendMessage", failure, { botId: d.operatorTg.id })
      fake.userSends(d.supportTg.id, { user, text: "during" })
      const on = first
      await eventually(async () => (await sends(d.operator.id, on)).some((s) => s.last_error !== "") || undefined)
      await first.close()
      first = undefined
      const calls = fake.calls.length
      // A window in which a closed server must make no call: nothing to wait for but time.
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const late = fake.calls.slice(calls).filter((c) => c.method !== "getUpdates")
      assert.deepStrictEqual(late.map((c) => c.method), [], "a closed server made calls")
      fake.clearFailures()
      fake.userSends(d.supportTg.id, { user, text: "while down" })
      second = await startServer({ telegramApi: fake.apiRoot, dir })
      await eventually(() => sentBy(d.operatorTg).length === 3 || undefined, 10_000)
      fake.userSends(d.supportTg.id, { user, text: "after" })
      await processed(d.support.id, user.id, 4, second)
      const done = await settled(d.operator.id, second)
      assert.deepStrictEqual(done.map((s) => s.status), ["sent", "sent", "sent", "sent"])
      assert.deepStrictEqual(
        sentBy(d.operatorTg).map((s) => s.message.text!.split("\n")[1]),
        ["before", "during", "while down", "after"]
      )
    } finally {
      await first?.close()
      await second?.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the reverse path with a short mapping lifetime", () => {
  it("BOTRELAY_ROUTE_MAPPING_TTL takes seconds or a unit, 30 days by default", () => {
    assert.strictEqual(Config.fromValues({}, {}).routeMappingTtl, 30 * 86_400)
    assert.strictEqual(Config.fromValues({}, { BOTRELAY_ROUTE_MAPPING_TTL: "7d" }).routeMappingTtl, 7 * 86_400)
    assert.strictEqual(Config.fromValues({ "route-mapping-ttl": "90" }, {}).routeMappingTtl, 90)
    assert.throws(() => Config.fromValues({ "route-mapping-ttl": "soon" }, {}), Config.ConfigError, /ROUTE_MAPPING_TTL/)
  })

  it("replies after the mapping expired do not travel back", async () => {
    const short = await startServer({ telegramApi: fake.apiRoot, flags: { "route-mapping-ttl": "1" } })
    try {
      const d = await desk({}, short)
      const kim = fake.addUser({ first_name: "Kim" })
      fake.userSends(d.supportTg.id, { user: kim, text: "hi" })
      const relayed = await fake.waitForSent((s) => s.botId === d.operatorTg.id)
      // Lets the 1 s mapping lifetime pass on the real clock (Expiry.test.ts in core covers it on a TestClock).
      await new Promise((resolve) => setTimeout(resolve, 1500))
      fake.userSends(d.operatorTg.id, {
        chat: d.group.id,
        user: d.operatorUser,
        text: "too late",
        reply_to_message_id: relayed.message.message_id
      })
      await processed(d.operator.id, d.group.id, 1, short)
      assert.deepStrictEqual(await sends(d.support.id, short), [])
      assert.deepStrictEqual(sentBy(d.supportTg), [])
    } finally {
      await short.close()
    }
  })
})

describe("the LLM router", () => {
  beforeAll(async () => {
    const reply = await server.call("/api/llm", {
      body: { base_url: llm.baseUrl, api_key: "sk-test-routing-key", model: "fake", timeout_ms: 500 }
    })
    assert.strictEqual(reply.status, 200, reply.text)
  })

  const llmDesk = async () => {
    const d = await desk({
      condition_type: "llm",
      condition_value: "billing questions",
      description: "Questions about invoices and payments"
    })
    const other = await addRoute({
      source_bot_id: d.support.id,
      target_bot_id: d.operator.id,
      action: "copy",
      target_chat_id: d.group.id,
      condition_type: "llm",
      description: "Bug reports"
    })
    return { ...d, other }
  }

  it("fires the route the model chooses, given the message and the candidates", async () => {
    const d = await llmDesk()
    const user = fake.addUser({ first_name: "Lea" })
    const before = llm.requests.length
    llm.choose(d.route.id)
    fake.userSends(d.supportTg.id, { user, text: "where is my invoice?" })
    await processed(d.support.id, user.id, 1)
    const done = await settled(d.operator.id)
    assert.deepStrictEqual(done.map((s) => s.route_id), [d.route.id])
    const request = llm.requests[before]!
    const asked = JSON.parse(request.json.messages[1].content)
    assert.strictEqual(asked.message, "where is my invoice?")
    assert.deepStrictEqual(asked.routes.map((r: any) => r.route_id), [d.route.id, d.other.id])
    assert.strictEqual(asked.routes[0].description, "Questions about invoices and payments")
  })

  it("fires nothing when the model chooses none, times out or answers garbage; rule routes still fire", async () => {
    const d = await llmDesk()
    const rule = await addRoute({
      source_bot_id: d.support.id,
      target_bot_id: d.operator.id,
      action: "copy",
      target_chat_id: d.group.id,
      condition_type: "keyword",
      condition_value: "urgent"
    })
    const user = fake.addUser({ first_name: "Max" })
    llm.chooseNone()
    fake.userSends(d.supportTg.id, { user, text: "urgent: nothing for the model" })
    await processed(d.support.id, user.id, 1)
    llm.answerAfter(2000)
    fake.userSends(d.supportTg.id, { user, text: "urgent: the model is slow" })
    await processed(d.support.id, user.id, 2)
    llm.answerContent("I think route 1 fits best")
    fake.userSends(d.supportTg.id, { user, text: "urgent: the model rambles" })
    await processed(d.support.id, user.id, 3)
    llm.choose(9_999_999)
    fake.userSends(d.supportTg.id, { user, text: "urgent: the model invents a route" })
    await processed(d.support.id, user.id, 4)
    const done = await settled(d.operator.id)
    assert.deepStrictEqual(done.map((s) => s.route_id), [rule.id, rule.id, rule.id, rule.id])
    assert.isTrue(server.logs.some((line) => line.includes("LLM router: no llm route fires")))
    assert.isFalse(server.logs.some((line) => line.includes("sk-test-routing-key")))
  })
})
