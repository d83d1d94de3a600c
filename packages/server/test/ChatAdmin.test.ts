import { afterAll, assert, beforeAll, beforeEach, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import { assertError, eventually, startServer, type TestServer } from "./Harness.js"

let fake: FakeTelegram.FakeTelegram
let server: TestServer
let tg: FakeTelegram.FakeBot
let botId: number
let other: FakeTelegram.FakeBot
let otherId: number
let operator: string

beforeAll(async () => {
  fake = await FakeTelegram.start()
  server = await startServer({ telegramApi: fake.apiRoot })
  tg = fake.addBot({ username: "mod_bot", first_name: "Mod" })
  other = fake.addBot({ username: "other_bot" })
  botId = (await server.call("/api/bots/add", { body: { token: tg.token, manage_enabled: true } })).json.id
  otherId = (await server.call("/api/bots/add", { body: { token: other.token } })).json.id
  operator = (await server.call("/api/auth/api-keys", { body: { name: "op", role: "operator", bot_ids: [otherId] } }))
    .json.key
})
afterAll(async () => {
  if (server !== undefined) assert.notInclude(server.logs.join("\n"), tg.token.split(":")[1]!, "a log line holds the token")
  await server?.close()
  await fake?.close()
})

/** A fresh supergroup (or group) with an owner, a member and the bots; `rights` make our bot an administrator. */
let room: {
  readonly chat: { readonly id: number }
  readonly owner: { readonly id: number }
  readonly member: { readonly id: number; readonly first_name: string }
}
const newRoom = (rights?: Record<string, boolean>, type: "supergroup" | "group" = "supergroup") => {
  const owner = fake.addUser({ first_name: "Olga", username: "olga" })
  const member = fake.addUser({ first_name: "Max", last_name: "Mustermann", username: "max" })
  const chat = fake.addGroup({ type, title: "Moderated", creator: owner.id })
  fake.addMember(chat.id, member.id)
  if (rights !== undefined) fake.setRights(chat.id, tg.id, rights)
  room = { chat, owner, member }
  return room
}
beforeEach(() => void newRoom())

const post = (path: string, body: Record<string, unknown>, key?: string) =>
  server.call(path, { body: { bot_id: botId, chat_id: room.chat.id, ...body }, ...(key === undefined ? {} : { key }) })

const status = (userId: number) => fake.chatMember(room.chat.id, userId, tg.id)

/** How many calls of these methods Telegram got so far. */
const callsOf = (...methods: ReadonlyArray<string>) => fake.calls.filter((c) => methods.includes(c.method)).length

const history = async (chatId: number) =>
  (await server.call(`/api/messages?bot_id=${botId}&chat_id=${chatId}`)).json as Array<any>

describe("GET /api/chats/admins", () => {
  it("lists the creator and the administrators with Telegram's rights names", async () => {
    newRoom({ can_restrict_members: true, can_pin_messages: true })
    const admin = fake.addUser({ first_name: "Ada" })
    fake.addMember(room.chat.id, admin.id, { status: "administrator", rights: { can_delete_messages: true }, custom_title: "helper" })
    const reply = await server.call(`/api/chats/admins?bot_id=${botId}&chat_id=${room.chat.id}`)
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json.map((a: any) => [a.user_id, a.status, a.is_bot, a.custom_title]), [
      [room.owner.id, "creator", false, ""],
      [tg.id, "administrator", true, ""],
      [admin.id, "administrator", false, "helper"]
    ])
    const [creator, bot, helper] = reply.json
    assert.deepStrictEqual(creator, {
      user_id: room.owner.id,
      username: "olga",
      first_name: "Olga",
      last_name: "",
      is_bot: false,
      status: "creator",
      custom_title: "",
      rights: {
        is_anonymous: false,
        can_manage_chat: true,
        can_delete_messages: true,
        can_manage_video_chats: true,
        can_restrict_members: true,
        can_promote_members: true,
        can_change_info: true,
        can_invite_users: true,
        can_post_stories: true,
        can_edit_stories: true,
        can_delete_stories: true,
        can_post_messages: true,
        can_edit_messages: true,
        can_pin_messages: true,
        can_manage_topics: true,
        can_manage_direct_messages: true
      }
    })
    assert.strictEqual(bot.username, "mod_bot")
    assert.isTrue(bot.rights.can_restrict_members)
    assert.isTrue(bot.rights.can_pin_messages)
    assert.isFalse(bot.rights.can_promote_members)
    assert.isFalse(bot.rights.can_post_messages)
    assert.isTrue(helper.rights.can_delete_messages)
    assert.isFalse(helper.rights.can_restrict_members)
  })

  it("400 for bad query values, 403 outside scope, 404 unknown bot, 502 for a private chat", async () => {
    for (const query of [`bot_id=${botId}`, `chat_id=1`, `bot_id=x&chat_id=1`, `bot_id=${botId}&chat_id=1.5`]) {
      assertError(await server.call(`/api/chats/admins?${query}`), 400, "invalid_request")
    }
    assertError(await server.call(`/api/chats/admins?bot_id=${botId}&chat_id=${room.chat.id}`, { key: operator }), 403, "forbidden")
    assertError(await server.call(`/api/chats/admins?bot_id=999999&chat_id=${room.chat.id}`), 404, "bot_not_found")
    const reply = await server.call(`/api/chats/admins?bot_id=${botId}&chat_id=${room.member.id}`)
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "there are no administrators in the private chat")
  })
})

describe("POST /api/chats/ban, /unban, /restrict", () => {
  it("ban, unban and restrict change the member's standing at Telegram", async () => {
    newRoom({ can_restrict_members: true })
    const banned = await post("/api/chats/ban", { user_id: room.member.id, until_date: 1_900_000_000, revoke_messages: true })
    assert.strictEqual(banned.status, 200, banned.text)
    assert.deepStrictEqual(banned.json, { ok: true })
    assert.deepStrictEqual(status(room.member.id), { status: "kicked", user: fake.chatMember(room.chat.id, room.member.id, tg.id)["user"], until_date: 1_900_000_000 })
    const call = fake.calls.filter((c) => c.method === "banChatMember").at(-1)!
    assert.strictEqual(call.params.revoke_messages, true)

    assert.deepStrictEqual((await post("/api/chats/unban", { user_id: room.member.id, only_if_banned: true })).json, { ok: true })
    assert.strictEqual(status(room.member.id)["status"], "left")

    fake.addMember(room.chat.id, room.member.id)
    const restricted = await post("/api/chats/restrict", {
      user_id: room.member.id,
      permissions: { can_send_messages: true, can_send_photos: false },
      until_date: 0
    })
    assert.strictEqual(restricted.status, 200, restricted.text)
    const now = status(room.member.id)
    assert.strictEqual(now["status"], "restricted")
    assert.strictEqual(now["can_send_messages"], true)
    assert.strictEqual(now["can_send_photos"], false)
    assert.strictEqual(now["can_send_polls"], false)
    const restrictCall = fake.calls.filter((c) => c.method === "restrictChatMember").at(-1)!
    assert.strictEqual(restrictCall.params.use_independent_chat_permissions, true)
  })

  it("502 with Telegram's description when it refuses; nothing changes", async () => {
    const before = status(room.member.id)
    let reply = await post("/api/chats/ban", { user_id: room.member.id })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "not enough rights to restrict/unrestrict chat member")
    assert.deepStrictEqual(status(room.member.id), before)

    fake.setRights(room.chat.id, tg.id, { can_restrict_members: true })
    reply = await post("/api/chats/ban", { user_id: room.owner.id })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "can't remove chat owner")
    assert.strictEqual(status(room.owner.id)["status"], "creator")

    const admin = fake.addUser()
    fake.addMember(room.chat.id, admin.id, { status: "administrator" })
    reply = await post("/api/chats/restrict", { user_id: admin.id, permissions: { can_send_messages: false } })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "user is an administrator of the chat")
    assert.strictEqual(status(admin.id)["status"], "administrator")
    assert.notInclude(reply.text, tg.token)

    newRoom({ can_restrict_members: true }, "group")
    reply = await post("/api/chats/restrict", { user_id: room.member.id, permissions: {} })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "method is available only for supergroups")
  })

  it("400 for bad input, and Telegram is not called", async () => {
    newRoom({ can_restrict_members: true })
    const calls = callsOf("banChatMember", "unbanChatMember", "restrictChatMember")
    for (const [path, body] of [
      ["/api/chats/ban", {}],
      ["/api/chats/ban", { user_id: 0 }],
      ["/api/chats/ban", { user_id: "x" }],
      ["/api/chats/ban", { user_id: room.member.id, until_date: -1 }],
      ["/api/chats/ban", { user_id: room.member.id, revoke_messages: "yes" }],
      ["/api/chats/ban", { user_id: room.member.id, chat_id: "@group" }],
      ["/api/chats/unban", { user_id: room.member.id, only_if_banned: 1 }],
      ["/api/chats/restrict", { user_id: room.member.id }],
      ["/api/chats/restrict", { user_id: room.member.id, permissions: "none" }],
      ["/api/chats/restrict", { user_id: room.member.id, permissions: { can_send_messages: "no" } }]
    ] as const) {
      assertError(await post(path, body), 400, "invalid_request")
    }
    assert.strictEqual(callsOf("banChatMember", "unbanChatMember", "restrictChatMember"), calls)
    assert.strictEqual(status(room.member.id)["status"], "member")
  })
})

describe("POST /api/chats/promote, /demote, /admin-title", () => {
  it("promotes with the rights given, titles, and demotes", async () => {
    newRoom({ can_promote_members: true, can_pin_messages: true, can_delete_messages: true })
    const promoted = await post("/api/chats/promote", {
      user_id: room.member.id,
      rights: { can_pin_messages: true, can_delete_messages: true }
    })
    assert.strictEqual(promoted.status, 200, promoted.text)
    let now = status(room.member.id)
    assert.strictEqual(now["status"], "administrator")
    assert.strictEqual(now["can_pin_messages"], true)
    assert.strictEqual(now["can_delete_messages"], true)
    assert.strictEqual(now["can_change_info"], false)
    assert.deepStrictEqual((await post("/api/chats/admin-title", { user_id: room.member.id, title: "Moderator" })).json, {
      ok: true
    })
    assert.strictEqual(status(room.member.id)["custom_title"], "Moderator")
    const admins = (await server.call(`/api/chats/admins?bot_id=${botId}&chat_id=${room.chat.id}`)).json
    assert.strictEqual(admins.find((a: any) => a.user_id === room.member.id).custom_title, "Moderator")

    assert.deepStrictEqual((await post("/api/chats/demote", { user_id: room.member.id })).json, { ok: true })
    now = status(room.member.id)
    assert.strictEqual(now["status"], "member")
    const demote = fake.calls.filter((c) => c.method === "promoteChatMember").at(-1)!
    assert.strictEqual(demote.params.can_pin_messages, false)
    assert.strictEqual(demote.params.can_manage_chat, false)
  })

  it("502 with Telegram's description when it refuses: no right to promote, a right the bot lacks, others' admins", async () => {
    let reply = await post("/api/chats/promote", { user_id: room.member.id, rights: { can_pin_messages: true } })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "not enough rights")
    fake.setRights(room.chat.id, tg.id, { can_promote_members: true })
    reply = await post("/api/chats/promote", { user_id: room.member.id, rights: { can_change_info: true } })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "RIGHT_FORBIDDEN")
    assert.strictEqual(status(room.member.id)["status"], "member")
    const admin = fake.addUser()
    fake.addMember(room.chat.id, admin.id, { status: "administrator" })
    reply = await post("/api/chats/admin-title", { user_id: admin.id, title: "x" })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "not enough rights to change custom title of the user")
    reply = await post("/api/chats/demote", { user_id: room.owner.id })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "can't remove chat owner")
  })

  it("400 for a title over 16 characters or rights that are not booleans; Telegram is not called", async () => {
    const calls = callsOf("promoteChatMember", "setChatAdministratorCustomTitle")
    assertError(await post("/api/chats/admin-title", { user_id: room.member.id, title: "x".repeat(17) }), 400, "invalid_request")
    assertError(await post("/api/chats/admin-title", { user_id: room.member.id }), 400, "invalid_request")
    assertError(await post("/api/chats/promote", { user_id: room.member.id, rights: { can_pin_messages: "yes" } }), 400, "invalid_request")
    assertError(await post("/api/chats/promote", { user_id: room.member.id }), 400, "invalid_request")
    assert.strictEqual(callsOf("promoteChatMember", "setChatAdministratorCustomTitle"), calls)
  })
})

describe("POST /api/chats/leave", () => {
  it("the bot leaves the group; Telegram then answers that it is not a member", async () => {
    assert.isTrue(fake.isMember(room.chat.id, tg.id))
    assert.deepStrictEqual((await post("/api/chats/leave", {})).json, { ok: true })
    assert.isFalse(fake.isMember(room.chat.id, tg.id))
    const reply = await post("/api/chats/ban", { user_id: room.member.id })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "bot is not a member of the supergroup chat")

    const [ban, leave] = (await server.call("/api/audit?limit=2")).json.items
    assert.deepInclude(leave, {
      action: "chats.leave",
      actor_type: "key",
      outcome: "ok",
      target_type: "chat",
      bot_id: botId,
      chat_id: room.chat.id
    })
    assert.deepInclude(ban, {
      action: "chats.ban",
      outcome: "failed",
      target_type: "user",
      target_id: String(room.member.id),
      bot_id: botId,
      chat_id: room.chat.id
    })
    assert.strictEqual(ban.details.code, "telegram_error")
    assert.include(ban.details.error, "bot is not a member of the supergroup chat")
  })
})

describe("scope and bots, for every action", () => {
  const actions: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["/api/chats/ban", { user_id: 5 }],
    ["/api/chats/unban", { user_id: 5 }],
    ["/api/chats/restrict", { user_id: 5, permissions: {} }],
    ["/api/chats/promote", { user_id: 5, rights: {} }],
    ["/api/chats/demote", { user_id: 5 }],
    ["/api/chats/admin-title", { user_id: 5, title: "t" }],
    ["/api/chats/leave", {}],
    ["/api/messages/delete", { message_id: 1 }],
    ["/api/messages/pin", { message_id: 1 }],
    ["/api/messages/unpin", { message_id: 1 }],
    ["/api/messages/edit", { message_id: 1, text: "x" }]
  ]

  it("403 outside the key's scope, 404 for an unknown bot, 409 for a disabled one; Telegram is not called", async () => {
    const calls = fake.calls.length
    for (const [path, body] of actions) {
      assertError(await post(path, body, operator), 403, "forbidden")
      assertError(await post(path, { ...body, bot_id: 999999 }), 404, "bot_not_found")
    }
    const actionCalls = () => fake.calls.slice(calls).filter((c) => c.botId === tg.id && c.method !== "getUpdates")
    assert.deepStrictEqual(actionCalls(), [])
    await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
    const disabledAt = fake.calls.length
    try {
      for (const [path, body] of actions) assertError(await post(path, body), 409, "bot_disabled")
      assert.deepStrictEqual(fake.calls.slice(disabledAt).filter((c) => c.botId === tg.id && c.method !== "getUpdates"), [])
    } finally {
      await server.call(`/api/bots/toggle-disabled?id=${botId}`, { method: "POST" })
    }
  })

  it("an operator acts on its own bot", async () => {
    const chat = fake.addGroup({ type: "supergroup" })
    fake.setRights(chat.id, other.id, { can_restrict_members: true })
    const member = fake.addUser()
    fake.addMember(chat.id, member.id)
    const reply = await server.call("/api/chats/ban", {
      key: operator,
      body: { bot_id: otherId, chat_id: chat.id, user_id: member.id }
    })
    assert.deepStrictEqual(reply.json, { ok: true })
    assert.strictEqual(fake.chatMember(chat.id, member.id, other.id)["status"], "kicked")
  })
})

describe("POST /api/messages/delete, /pin, /unpin", () => {
  it("delete removes the message at Telegram and marks it deleted in the history", async () => {
    const sent = (await post("/api/messages/send", { text: "oops" })).json
    const reply = await post("/api/messages/delete", { message_id: sent.id })
    assert.deepStrictEqual(reply.json, { ok: true })
    assert.isFalse(fake.hasMessage(tg.id, room.chat.id, sent.id))
    const stored = (await history(room.chat.id)).find((m) => m.id === sent.id)
    assert.strictEqual(stored.deleted, true)
    assert.strictEqual(stored.text, "oops")
    const again = await post("/api/messages/delete", { message_id: sent.id })
    assertError(again, 502, "telegram_error")
    assert.include(again.json.error, "message to delete not found")
  })

  it("deleting someone else's message needs can_delete_messages: 502 and the history unchanged", async () => {
    const theirs = fake.userSends(tg.id, { chat: room.chat.id, user: fake.addUser(), text: "spam" })
    await eventually(async () => (await history(room.chat.id)).some((m) => m.id === theirs.message_id) || undefined)
    const reply = await post("/api/messages/delete", { message_id: theirs.message_id })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "message can't be deleted")
    assert.isTrue(fake.hasMessage(tg.id, room.chat.id, theirs.message_id))
    assert.notProperty((await history(room.chat.id)).find((m) => m.id === theirs.message_id), "deleted")
    fake.setRights(room.chat.id, tg.id, { can_delete_messages: true })
    assert.deepStrictEqual((await post("/api/messages/delete", { message_id: theirs.message_id })).json, { ok: true })
    assert.strictEqual((await history(room.chat.id)).find((m) => m.id === theirs.message_id).deleted, true)
  })

  it("pin and unpin, with disable_notification passed on; Telegram's refusal without the right", async () => {
    const sent = (await post("/api/messages/send", { text: "rules" })).json
    const refused = await post("/api/messages/pin", { message_id: sent.id })
    assertError(refused, 502, "telegram_error")
    assert.include(refused.json.error, "not enough rights to manage pinned messages in the chat")
    assert.deepStrictEqual(fake.pinnedMessages(tg.id, room.chat.id), [])
    fake.setRights(room.chat.id, tg.id, { can_pin_messages: true })
    assert.deepStrictEqual((await post("/api/messages/pin", { message_id: sent.id, disable_notification: true })).json, {
      ok: true
    })
    assert.deepStrictEqual(fake.pinnedMessages(tg.id, room.chat.id), [sent.id])
    assert.strictEqual(fake.calls.filter((c) => c.method === "pinChatMessage").at(-1)!.params.disable_notification, true)
    assert.deepStrictEqual((await post("/api/messages/unpin", { message_id: sent.id })).json, { ok: true })
    assert.deepStrictEqual(fake.pinnedMessages(tg.id, room.chat.id), [])
  })

  it("400 for a missing or bad message_id; Telegram is not called", async () => {
    const calls = callsOf("deleteMessage", "pinChatMessage", "unpinChatMessage")
    for (const path of ["/api/messages/delete", "/api/messages/pin", "/api/messages/unpin"]) {
      assertError(await post(path, {}), 400, "invalid_request")
      assertError(await post(path, { message_id: -1 }), 400, "invalid_request")
      assertError(await post(path, { message_id: 1, chat_id: "x" }), 400, "invalid_request")
    }
    assertError(await post("/api/messages/pin", { message_id: 1, disable_notification: "no" }), 400, "invalid_request")
    assert.strictEqual(callsOf("deleteMessage", "pinChatMessage", "unpinChatMessage"), calls)
  })
})

describe("POST /api/messages/edit", () => {
  it("edits a message the bot sent; the history holds the new text and edit_date", async () => {
    const sent = (await post("/api/messages/send", { text: "draft" })).json
    const reply = await post("/api/messages/edit", { message_id: sent.id, text: "final" })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.id, sent.id)
    assert.strictEqual(reply.json.text, "final")
    assert.strictEqual(reply.json.direction, "out")
    assert.isAbove(reply.json.edit_date, 0)
    assert.strictEqual(fake.calls.filter((c) => c.method === "editMessageText").at(-1)!.params.text, "final")
    const stored = (await history(room.chat.id)).find((m) => m.id === sent.id)
    assert.deepStrictEqual(stored, reply.json)
  })

  it("400 not_editable for a message the history shows as received; Telegram is not asked", async () => {
    const theirs = fake.userSends(tg.id, { chat: room.chat.id, user: fake.addUser(), text: "mine" })
    await eventually(async () => (await history(room.chat.id)).some((m) => m.id === theirs.message_id) || undefined)
    const calls = callsOf("editMessageText")
    assertError(await post("/api/messages/edit", { message_id: theirs.message_id, text: "hacked" }), 400, "not_editable")
    assert.strictEqual(callsOf("editMessageText"), calls)
    assert.strictEqual((await history(room.chat.id)).find((m) => m.id === theirs.message_id).text, "mine")
  })

  it("otherwise Telegram decides: its refusals are 502 with its description, the history unchanged", async () => {
    const sent = (await post("/api/messages/send", { text: "same" })).json
    let reply = await post("/api/messages/edit", { message_id: sent.id, text: "same" })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "message is not modified")
    const byOther = (await server.call("/api/messages/send", {
      body: { bot_id: otherId, chat_id: room.chat.id, text: "other's" }
    })).json
    reply = await post("/api/messages/edit", { message_id: byOther.id, text: "mine now" })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "message can't be edited")
    reply = await post("/api/messages/edit", { message_id: 987654, text: "x" })
    assertError(reply, 502, "telegram_error")
    assert.include(reply.json.error, "message to edit not found")
    assert.strictEqual((await history(room.chat.id)).find((m) => m.id === sent.id).text, "same")
  })

  it("409 history_disabled for a bot without manage_enabled; 400 for bad text", async () => {
    const sent = (await server.call("/api/messages/send", { body: { bot_id: otherId, chat_id: room.chat.id, text: "a" } })).json
    const calls = callsOf("editMessageText")
    assertError(
      await server.call("/api/messages/edit", { body: { bot_id: otherId, chat_id: room.chat.id, message_id: sent.id, text: "b" } }),
      409,
      "history_disabled"
    )
    assertError(await post("/api/messages/edit", { message_id: sent.id, text: "" }), 400, "invalid_request")
    assertError(await post("/api/messages/edit", { message_id: sent.id, text: "x".repeat(4097) }), 400, "invalid_request")
    assertError(await post("/api/messages/edit", { text: "x" }), 400, "invalid_request")
    assert.strictEqual(callsOf("editMessageText"), calls)
  })
})
