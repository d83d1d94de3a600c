import { BotStore, type Chat, ChatStore, InboxStore, MessageStore, PeopleStore, type Sighting, TagStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { botInput, completion, message, type Runner, some, tagInput, update } from "./Fixtures.js"

/** A sighting of a bot with only what `parts` says. */
export const sighting = (botId: number, parts: Partial<Omit<Sighting.Sighting, "bot_id">>): Sighting.Sighting => ({
  bot_id: botId,
  chats: [],
  people: [],
  left: [],
  states: [],
  migrations: [],
  reads: [],
  ...parts
})

/** A chat as a sighting shows it. */
export const chatSeen = (chatId: number, overrides: Partial<Sighting.ChatSeen> = {}): Sighting.ChatSeen => ({
  chat_id: chatId,
  type: chatId > 0 ? "private" : chatId <= -1_000_000_000_000 ? "supergroup" : "group",
  title: "",
  username: "",
  first_name: "",
  last_name: "",
  date: 1_700_000_000,
  ...overrides
})

/** A user as a sighting shows them. */
export const personSeen = (userId: number, chatId: number, overrides: Partial<Sighting.PersonSeen> = {}): Sighting.PersonSeen => ({
  user_id: userId,
  username: `user${userId}`,
  first_name: `User ${userId}`,
  last_name: "",
  language_code: "",
  is_bot: false,
  chat_id: chatId,
  date: 1_700_000_000,
  ...overrides
})

const query = (botIds: ReadonlyArray<number>, overrides: Partial<Chat.ChatQuery> = {}): Chat.ChatQuery => ({
  bot_ids: botIds,
  limit: 50,
  ...overrides
})

const keys = (chats: ReadonlyArray<Chat.Chat>) => chats.map((c) => [c.bot_id, c.chat_id])

/** Moved message ids: `id - 2^53`. */
const moved = (id: number) => id - 2 ** 53

/** The conformance tests for chats. */
export const chats = (run: Runner): void => {
  const test = run(
    BotStore.BotStore,
    MessageStore.MessageStore,
    ChatStore.ChatStore,
    PeopleStore.PeopleStore,
    TagStore.TagStore,
    InboxStore.InboxStore
  )
  describe("chats", () => {
    test("a message creates its chat, whose counters and last message follow the history", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        assert.isTrue(Option.isNone(yield* storage.findChat(bot.id, 10)))
        const first = message(bot.id, 10, 1, { date: 1_700_000_100 })
        const reply = message(bot.id, 10, 2, { date: 1_700_000_200, direction: "out", reply_to_message_id: 1 })
        const last = message(bot.id, 10, 3, { date: 1_700_000_300 })
        yield* storage.saveMessages([first, reply, last])
        assert.deepStrictEqual(some(yield* storage.findChat(bot.id, 10)), {
          bot_id: bot.id,
          chat_id: 10,
          type: "private",
          title: "",
          username: "",
          first_name: "",
          last_name: "",
          last_message: last,
          last_message_at: 1_700_000_300,
          unread_count: 2,
          message_count: 3,
          member_count: 0,
          tags: [],
          state: "member",
          status: "open",
          priority: "none",
          assignee_id: 0,
          assignee_name: "",
          snoozed_until: 0,
          reachable: true,
          unreachable_since: 0,
          unreachable_reason: ""
        })
        yield* storage.saveMessage(message(bot.id, -20, 1))
        yield* storage.saveMessage(message(bot.id, -1_001_234_567_890, 1))
        assert.strictEqual(some(yield* storage.findChat(bot.id, -20)).type, "group")
        assert.strictEqual(some(yield* storage.findChat(bot.id, -1_001_234_567_890)).type, "supergroup")
      }))

    test("an edit counts nothing again; a deletion uncounts the message and its unread mark", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessages([message(bot.id, 10, 1), message(bot.id, 10, 2), message(bot.id, 10, 3, { direction: "out" })])
        const edited = message(bot.id, 10, 2, { text: "edited", edit_date: 1_700_000_900 })
        yield* storage.saveMessage(edited)
        yield* storage.saveMessages([edited, edited])
        let chat = some(yield* storage.findChat(bot.id, 10))
        assert.deepStrictEqual([chat.message_count, chat.unread_count], [3, 2])
        yield* storage.markMessagesDeleted(bot.id, 10, [2, 3])
        yield* storage.markMessagesDeleted(bot.id, 10, [2])
        chat = some(yield* storage.findChat(bot.id, 10))
        assert.deepStrictEqual([chat.message_count, chat.unread_count], [1, 1])
        assert.deepStrictEqual(chat.last_message, { ...message(bot.id, 10, 3, { direction: "out" }), deleted: true })
      }))

    test("a message older than the last one leaves the last message as it is", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessage(message(bot.id, 10, 5, { date: 1_700_000_500 }))
        yield* storage.saveMessage(message(bot.id, 10, 4, { date: 1_700_000_400 }))
        const chat = some(yield* storage.findChat(bot.id, 10))
        assert.deepStrictEqual([chat.last_message?.id, chat.last_message_at, chat.message_count], [5, 1_700_000_500, 2])
      }))

    test("sightings give chats their kind and names; the same sighting again changes nothing", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessage(message(bot.id, -1_001_000_000_001, 1))
        const channel = chatSeen(-1_001_000_000_001, { type: "channel", title: "News", username: "news" })
        yield* storage.recordSightings([sighting(bot.id, { chats: [channel] })])
        yield* storage.recordSightings([sighting(bot.id, { chats: [channel] })])
        yield* storage.recordSightings([sighting(bot.id, { chats: [chatSeen(10, { first_name: "Ann", last_name: "Lee", username: "ann" })] })])
        const news = some(yield* storage.findChat(bot.id, -1_001_000_000_001))
        assert.deepStrictEqual([news.type, news.title, news.username, news.message_count], ["channel", "News", "news", 1])
        const ann = some(yield* storage.findChat(bot.id, 10))
        assert.deepStrictEqual([ann.type, ann.first_name, ann.last_name, ann.last_message, ann.last_message_at], [
          "private",
          "Ann",
          "Lee",
          null,
          0
        ])
        yield* storage.recordSightings([sighting(bot.id, { chats: [{ ...channel, title: "Renamed", date: channel.date + 5 }] })])
        assert.strictEqual(some(yield* storage.findChat(bot.id, -1_001_000_000_001)).title, "Renamed")
      }))

    test("a batch of sightings keeps the latest of each chat", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.recordSightings([
          sighting(bot.id, { chats: [chatSeen(-5, { title: "Later", date: 200 })] }),
          sighting(bot.id, { chats: [chatSeen(-5, { title: "Earlier", date: 100 })] }),
          sighting(bot.id, { chats: [chatSeen(-6, { title: "First", date: 100 })] }),
          sighting(bot.id, { chats: [chatSeen(-6, { title: "Second", date: 100 })] })
        ])
        assert.strictEqual(some(yield* storage.findChat(bot.id, -5)).title, "Later")
        assert.strictEqual(some(yield* storage.findChat(bot.id, -6)).title, "Second")
      }))

    test("listChats: newest activity first, then bot and chat descending, of the given bots only", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        const c = yield* storage.insertBot(botInput(3, { manage_enabled: true }))
        yield* storage.saveMessages([
          message(a.id, 10, 1, { date: 300 }),
          message(a.id, 11, 1, { date: 100 }),
          message(b.id, 10, 1, { date: 300 }),
          message(b.id, 12, 1, { date: 300 }),
          message(c.id, 13, 1, { date: 999 })
        ])
        yield* storage.recordSightings([sighting(a.id, { chats: [chatSeen(-9, { title: "Quiet" })] })])
        const all = yield* storage.listChats(query([a.id, b.id]))
        assert.deepStrictEqual(keys(all), [[b.id, 12], [b.id, 10], [a.id, 10], [a.id, 11], [a.id, -9]])
        assert.deepStrictEqual(keys(yield* storage.listChats(query([a.id]))), [[a.id, 10], [a.id, 11], [a.id, -9]])
        assert.deepStrictEqual(yield* storage.listChats(query([])), [])
        const page = yield* storage.listChats(query([a.id, b.id], { limit: 2 }))
        assert.deepStrictEqual(keys(page), [[b.id, 12], [b.id, 10]])
        const rest = yield* storage.listChats(query([a.id, b.id], { after: { last_message_at: 300, bot_id: b.id, chat_id: 10 } }))
        assert.deepStrictEqual(keys(rest), [[a.id, 10], [a.id, 11], [a.id, -9]])
        const one = yield* storage.listChats(query([a.id], { after: { last_message_at: 300, bot_id: a.id, chat_id: 10 } }))
        assert.deepStrictEqual(keys(one), [[a.id, 11], [a.id, -9]])
      }))

    test("listChats filters by text in any case (a literal % or _ too), by type and by unread", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessages([
          message(bot.id, 10, 1, { date: 100 }),
          message(bot.id, 11, 1, { date: 200, direction: "out" }),
          message(bot.id, -12, 1, { date: 300 }),
          message(bot.id, -13, 1, { date: 400 })
        ])
        yield* storage.recordSightings([sighting(bot.id, {
          chats: [
            chatSeen(10, { first_name: "Анна", last_name: "Петрова", username: "anna_p" }),
            chatSeen(11, { first_name: "Bob", username: "bob" }),
            chatSeen(-12, { title: "Sales 100% team" }),
            chatSeen(-13, { title: "ПРОДАЖИ" })
          ]
        })])
        const found = (overrides: Partial<Chat.ChatQuery>) =>
          Effect.map(storage.listChats(query([bot.id], overrides)), (list) => list.map((c) => c.chat_id))
        assert.deepStrictEqual(yield* found({ q: "аННа" }), [10])
        assert.deepStrictEqual(yield* found({ q: "петров" }), [10])
        assert.deepStrictEqual(yield* found({ q: "продажи" }), [-13])
        assert.deepStrictEqual(yield* found({ q: "A_P" }), [10])
        assert.deepStrictEqual(yield* found({ q: "a_" }), [10])
        assert.deepStrictEqual(yield* found({ q: "100%" }), [-12])
        assert.deepStrictEqual(yield* found({ q: "1%0" }), [])
        assert.deepStrictEqual(yield* found({ q: "BOB" }), [11])
        assert.deepStrictEqual(yield* found({ type: "private" }), [11, 10])
        assert.deepStrictEqual(yield* found({ type: "group" }), [-13, -12])
        assert.deepStrictEqual(yield* found({ unread: true }), [-13, -12, 10])
        assert.deepStrictEqual(yield* found({ unread: true, type: "private", q: "ann" }), [10])
      }))

    test("markRead: only incoming messages after the mark stay unread; later ones count again", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessages([message(bot.id, 10, 1, { date: 100 }), message(bot.id, 10, 2, { date: 200 })])
        assert.isTrue(yield* storage.markRead(bot.id, 10, 150))
        assert.strictEqual(some(yield* storage.findChat(bot.id, 10)).unread_count, 1)
        assert.isTrue(yield* storage.markRead(bot.id, 10, 250))
        assert.strictEqual(some(yield* storage.findChat(bot.id, 10)).unread_count, 0)
        yield* storage.saveMessage(message(bot.id, 10, 3, { date: 240 }))
        yield* storage.saveMessage(message(bot.id, 10, 4, { date: 260 }))
        yield* storage.saveMessage(message(bot.id, 10, 5, { date: 270, direction: "out" }))
        assert.strictEqual(some(yield* storage.findChat(bot.id, 10)).unread_count, 1)
        assert.isFalse(yield* storage.markRead(bot.id, 99, 250))
        yield* storage.recordSightings([sighting(bot.id, { reads: [{ chat_id: 10, at: 300 }] })])
        assert.strictEqual(some(yield* storage.findChat(bot.id, 10)).unread_count, 0)
      }))

    test("messages stored in one write count as stored one by one: read mark, repeats, deletions, last message", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessage(message(bot.id, 10, 1, { date: 100 }))
        assert.isTrue(yield* storage.markRead(bot.id, 10, 250))
        yield* storage.saveMessages([
          message(bot.id, 10, 2, { date: 200 }),
          message(bot.id, 10, 3, { date: 300 }),
          message(bot.id, 10, 4, { date: 260, direction: "out" }),
          message(bot.id, 10, 3, { date: 300, text: "edited", edit_date: 301 }),
          message(bot.id, 10, 5, { date: 310, deleted: true }),
          message(bot.id, 10, 6, { date: 300 }),
          message(bot.id, 11, 1, { date: 50 }),
          message(bot.id, 11, 2, { date: 40 })
        ])
        const ten = some(yield* storage.findChat(bot.id, 10))
        assert.strictEqual(ten.message_count, 5)
        assert.strictEqual(ten.unread_count, 2)
        assert.strictEqual(ten.last_message_at, 310)
        assert.strictEqual(ten.last_message?.id, 5)
        const eleven = some(yield* storage.findChat(bot.id, 11))
        assert.deepStrictEqual([eleven.message_count, eleven.unread_count, eleven.last_message?.id], [2, 2, 1])
        yield* storage.saveMessages([message(bot.id, 11, 3, { date: 45 }), message(bot.id, 11, 2, { date: 40 })])
        const again = some(yield* storage.findChat(bot.id, 11))
        assert.deepStrictEqual([again.message_count, again.unread_count, again.last_message?.id], [3, 3, 1])
      }))

    test("the bot's state follows its membership", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const group = chatSeen(-30, { title: "Team" })
        yield* storage.recordSightings([sighting(bot.id, { chats: [group], states: [{ chat_id: -30, state: "member", date: 1 }] })])
        assert.strictEqual(some(yield* storage.findChat(bot.id, -30)).state, "member")
        yield* storage.recordSightings([sighting(bot.id, { chats: [group], states: [{ chat_id: -30, state: "kicked", date: 2 }] })])
        assert.strictEqual(some(yield* storage.findChat(bot.id, -30)).state, "kicked")
        yield* storage.recordSightings([
          sighting(bot.id, { states: [{ chat_id: -30, state: "member", date: 4 }] }),
          sighting(bot.id, { states: [{ chat_id: -30, state: "left", date: 3 }] })
        ])
        assert.strictEqual(some(yield* storage.findChat(bot.id, -30)).state, "member")
        yield* storage.recordSightings([sighting(bot.id, { states: [{ chat_id: -30, state: "left", date: 5 }] })])
        assert.strictEqual(some(yield* storage.findChat(bot.id, -30)).state, "left")
      }))

    test("private chats carry the tags of their user; groups none", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const other = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        yield* storage.saveMessages([message(bot.id, 42, 1), message(bot.id, -5, 1), message(other.id, 42, 1)])
        const vip = yield* storage.upsertTag(tagInput(42, 42, "vip", { bot_id: bot.id }))
        yield* storage.upsertTag(tagInput(42, 7, "not the user", { bot_id: bot.id }))
        yield* storage.upsertTag(tagInput(-5, 42, "in a group", { bot_id: bot.id }))
        yield* storage.upsertTag(tagInput(42, 42, "other bot", { bot_id: other.id }))
        assert.deepStrictEqual(some(yield* storage.findChat(bot.id, 42)).tags, [vip])
        assert.deepStrictEqual(some(yield* storage.findChat(bot.id, -5)).tags, [])
        const listed = yield* storage.listChats(query([bot.id, other.id]))
        assert.deepStrictEqual(listed.map((c) => [c.bot_id, c.chat_id, c.tags.map((t) => t.tag)]), [
          [other.id, 42, ["other bot"]],
          [bot.id, 42, ["vip"]],
          [bot.id, -5, []]
        ])
      }))

    test("a migration moves history, members, tags, read mark and counts to the supergroup", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const other = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        const group = -500
        const supergroup = -1_000_000_000_500
        yield* storage.saveMessages([
          message(bot.id, group, 1, { date: 1_000 }),
          message(bot.id, group, 2, { date: 2_000, direction: "out", reply_to_message_id: 1 }),
          message(bot.id, group, -77, { date: 2_500, media_type: "callback", text: "data", reply_to_message_id: 2 }),
          message(bot.id, group, 3, { date: 3_000 }),
          message(other.id, group, 1, { date: 1_000 })
        ])
        yield* storage.recordSightings([sighting(bot.id, {
          chats: [chatSeen(group, { title: "Old team" })],
          people: [personSeen(42, group)],
          reads: [{ chat_id: group, at: 2_000 }]
        })])
        const tag = yield* storage.upsertTag(tagInput(group, 42, "lead", { bot_id: bot.id }))
        yield* storage.upsertTag(tagInput(group, 43, "dup", { bot_id: bot.id }))
        const dup = yield* storage.upsertTag(tagInput(supergroup, 43, "dup", { bot_id: bot.id }))
        yield* storage.saveMessage(message(bot.id, supergroup, 1, { date: 4_000, text: "the supergroup's own first" }))

        const migration = sighting(bot.id, { migrations: [{ from_chat_id: group, to_chat_id: supergroup }] })
        yield* storage.recordSightings([migration])

        assert.isTrue(Option.isNone(yield* storage.findChat(bot.id, group)))
        const chat = some(yield* storage.findChat(bot.id, supergroup))
        assert.deepStrictEqual(
          [chat.type, chat.title, chat.message_count, chat.unread_count, chat.last_message?.id],
          ["supergroup", "Old team", 5, 3, 1]
        )
        const history = yield* storage.listMessages({ bot_id: bot.id, chat_id: supergroup, limit: 50, offset: 0 })
        assert.deepStrictEqual(history.map((m) => [m.id, m.reply_to_message_id]), [
          [1, undefined],
          [moved(3), undefined],
          [-77, moved(2)],
          [moved(2), moved(1)],
          [moved(1), undefined]
        ])
        assert.deepStrictEqual(yield* storage.listMessages({ bot_id: bot.id, chat_id: group, limit: 50, offset: 0 }), [])
        assert.deepStrictEqual(keys(yield* storage.listChats(query([bot.id]))), [[bot.id, supergroup]])
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: supergroup, bot_id: bot.id }), [
          { ...tag, chat_id: supergroup },
          dup
        ])
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: group, bot_id: bot.id }), [])
        const person = some(yield* storage.findPerson(42, { bot_ids: [bot.id], chats: [] }))
        assert.deepStrictEqual(person.chats, [{ bot_id: bot.id, chat_id: supergroup, title: "Old team", reachable: true, unreachable_since: 0, unreachable_reason: "" }])
        assert.strictEqual(some(yield* storage.findChat(other.id, group)).message_count, 1)

        yield* storage.recordSightings([migration, migration])
        const again = some(yield* storage.findChat(bot.id, supergroup))
        assert.deepStrictEqual(again, chat)
        assert.strictEqual((yield* storage.listMessages({ bot_id: bot.id, chat_id: supergroup, limit: 50, offset: 0 })).length, 5)
      }))

    test("a migration known from the supergroup first moves what the old group gets later", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const group = -600
        const supergroup = -1_000_000_000_600
        yield* storage.saveMessage(message(bot.id, supergroup, 1, { date: 5_000 }))
        yield* storage.recordSightings([sighting(bot.id, {
          chats: [chatSeen(supergroup, { title: "New team" })],
          migrations: [{ from_chat_id: group, to_chat_id: supergroup }]
        })])
        assert.isTrue(Option.isNone(yield* storage.findChat(bot.id, group)))
        yield* storage.saveMessage(message(bot.id, group, 9, { date: 4_999, text: "migrated to a supergroup" }))
        yield* storage.recordSightings([sighting(bot.id, {
          chats: [chatSeen(group, { title: "Old team" })],
          migrations: [{ from_chat_id: group, to_chat_id: supergroup }]
        })])
        const chat = some(yield* storage.findChat(bot.id, supergroup))
        assert.deepStrictEqual([chat.title, chat.message_count, chat.last_message?.id], ["New team", 2, 1])
        assert.deepStrictEqual(
          (yield* storage.listMessages({ bot_id: bot.id, chat_id: supergroup, limit: 50, offset: 0 })).map((m) => m.id),
          [1, moved(9)]
        )
        assert.deepStrictEqual(keys(yield* storage.listChats(query([bot.id]))), [[bot.id, supergroup]])
        yield* storage.saveMessage(message(bot.id, group, 9, { date: 4_999, text: "the same message again" }))
        yield* storage.recordSightings([sighting(bot.id, { migrations: [{ from_chat_id: group, to_chat_id: supergroup }] })])
        assert.deepStrictEqual(
          (yield* storage.listMessages({ bot_id: bot.id, chat_id: supergroup, limit: 50, offset: 0 })).map((m) => m.text),
          ["message 1", "the same message again"]
        )
        assert.strictEqual(some(yield* storage.findChat(bot.id, supergroup)).message_count, 2)
      }))

    test("updateChat replaces names and member count of a known chat", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessage(message(bot.id, -7, 1))
        const info = { title: "Fresh", username: "fresh", first_name: "", last_name: "", member_count: 12 }
        assert.isTrue(yield* storage.updateChat(bot.id, -7, info))
        assert.isFalse(yield* storage.updateChat(bot.id, -8, info))
        const chat = some(yield* storage.findChat(bot.id, -7))
        assert.deepStrictEqual([chat.title, chat.username, chat.member_count], ["Fresh", "fresh", 12])
        assert.deepStrictEqual(keys(yield* storage.listChats(query([bot.id], { q: "fres" }))), [[bot.id, -7]])
      }))

    test("historyBotIds are the bots with manage_enabled; deleting a bot removes its chats", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.insertBot(botInput(2))
        const c = yield* storage.insertBot(botInput(3, { manage_enabled: true }))
        assert.deepStrictEqual(yield* storage.historyBotIds, [a.id, c.id])
        yield* storage.saveMessage(message(a.id, 10, 1))
        yield* storage.recordSightings([sighting(a.id, { people: [personSeen(42, 10)] })])
        assert.isTrue(yield* storage.deleteBot(a.id))
        assert.isTrue(Option.isNone(yield* storage.findChat(a.id, 10)))
        assert.isTrue(Option.isNone(yield* storage.findPerson(42, { bot_ids: [a.id], chats: [] })))
        assert.deepStrictEqual(yield* storage.historyBotIds, [c.id])
      }))

    test("completeUpdates records sightings with the messages, once per update", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.commitUpdates(bot.id, [update(1), update(2)], 3)
        const done = completion(bot.id, 1, {
          messages: [message(bot.id, -40, 1)],
          sighting: sighting(bot.id, { chats: [chatSeen(-40, { title: "Team" })], people: [personSeen(42, -40)] })
        })
        yield* storage.completeUpdates([done])
        yield* storage.completeUpdates([done])
        const chat = some(yield* storage.findChat(bot.id, -40))
        assert.deepStrictEqual([chat.title, chat.message_count], ["Team", 1])
        assert.strictEqual(some(yield* storage.findPerson(42, { bot_ids: [bot.id], chats: [] })).first_name, "User 42")
      }))
  })
}
