import { AccountStore, AuditStore, BotStore, Chat, ChatStore, MessageStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { accountInput } from "./Accounts.js"
import { chatSeen, sighting } from "./Chats.js"
import { botInput, message, type Runner } from "./Fixtures.js"

const some = <A>(option: Option.Option<A>): A => Option.getOrThrow(option)

const conversation = (overrides: Partial<Chat.Conversation>): Chat.Conversation => ({
  ...Chat.openConversation,
  ...overrides
})

/** The counts of `GET /api/chats/counts` made by counting the listed chats, as the kept ones must be. */
const fresh = (chats: ReadonlyArray<Chat.Chat>, me: number) =>
  Chat.countsOf(
    chats.map((c) => ({ bot_id: c.bot_id, status: c.status, assignee_id: c.assignee_id, chats: 1 })),
    me
  )

/** The conformance tests for chats' conversation state: status, priority, assignee, snooze, and the kept counts. */
export const conversations = (run: Runner): void => {
  const test = run(
    BotStore.BotStore,
    MessageStore.MessageStore,
    ChatStore.ChatStore,
    AccountStore.AccountStore,
    AuditStore.AuditStore
  )
  describe("conversation state", () => {
    test("a new chat is open; replaceConversation changes it only while it is as read", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const ann = yield* storage.insertAccount(accountInput("ann", { display_name: "Ann Lee", bot_ids: [bot.id] }))
        const bob = yield* storage.insertAccount(accountInput("bob", { bot_ids: [bot.id] }))
        yield* storage.saveMessage(message(bot.id, 10, 1))
        const chat = some(yield* storage.findChat(bot.id, 10))
        assert.deepInclude(chat, { status: "open", priority: "none", assignee_id: 0, assignee_name: "", snoozed_until: 0 })

        const after = conversation({ status: "snoozed", priority: "high", assignee_id: ann.id, snoozed_until: 2_000_000_000 })
        assert.isTrue(yield* storage.replaceConversation(bot.id, 10, Chat.openConversation, after))
        assert.deepInclude(some(yield* storage.findChat(bot.id, 10)), { ...after, assignee_name: "Ann Lee" })
        assert.isFalse(yield* storage.replaceConversation(bot.id, 10, Chat.openConversation, Chat.openConversation))
        assert.isFalse(yield* storage.replaceConversation(bot.id, 99, Chat.openConversation, after))

        assert.isTrue(yield* storage.replaceConversation(bot.id, 10, after, conversation({ assignee_id: bob.id })))
        assert.strictEqual(some(yield* storage.findChat(bot.id, 10)).assignee_name, "bob")
      }))

    test("listChats filters by status, priority and assignee", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        for (const id of [1, 2, 3]) yield* storage.saveMessage(message(bot.id, id, 1, { date: 1_000 + id }))
        yield* storage.replaceConversation(bot.id, 1, Chat.openConversation, conversation({ status: "resolved", priority: "low" }))
        yield* storage.replaceConversation(bot.id, 2, Chat.openConversation, conversation({ status: "pending", assignee_id: 7 }))
        const ids = (query: Partial<Chat.ChatQuery>) =>
          storage.listChats({ bot_ids: [bot.id], limit: 50, ...query }).pipe(Effect.map((chats) => chats.map((c) => c.chat_id)))
        assert.deepStrictEqual(yield* ids({ statuses: ["open", "pending"] }), [3, 2])
        assert.deepStrictEqual(yield* ids({ statuses: ["resolved"] }), [1])
        assert.deepStrictEqual(yield* ids({ priorities: ["low", "urgent"] }), [1])
        assert.deepStrictEqual(yield* ids({ assignees: [0] }), [3, 1])
        assert.deepStrictEqual(yield* ids({ assignees: [7], statuses: ["pending"] }), [2])
      }))

    test("the kept counts (and those of single chats) follow creation, changes, migrations and deletion as a fresh count does", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        const check = Effect.gen(function*() {
          const listed = yield* storage.listChats({ bot_ids: [a.id, b.id], limit: 200 })
          const kept = yield* storage.chatCounts({ bot_ids: [a.id, b.id], chats: [] })
          assert.deepStrictEqual(Chat.countsOf(kept, 5), fresh(listed, 5))
          const single = yield* storage.chatCounts({ bot_ids: [], chats: listed.map((c) => ({ bot_id: c.bot_id, chat_id: c.chat_id })) })
          assert.deepStrictEqual(Chat.countsOf(single, 5), fresh(listed, 5))
          return Chat.countsOf(kept, 5)
        })
        yield* storage.saveMessages([message(a.id, 1, 1), message(a.id, 2, 1), message(b.id, 3, 1), message(a.id, -500, 1)])
        yield* storage.recordSightings([sighting(a.id, { chats: [chatSeen(4)] })])
        assert.deepStrictEqual((yield* check).status, { open: 5, pending: 0, resolved: 0, snoozed: 0 })
        yield* storage.replaceConversation(a.id, 1, Chat.openConversation, conversation({ status: "resolved", assignee_id: 5 }))
        yield* storage.replaceConversation(a.id, 2, Chat.openConversation, conversation({ assignee_id: 5 }))
        yield* storage.replaceConversation(b.id, 3, Chat.openConversation, conversation({ status: "pending", assignee_id: 6 }))
        yield* storage.replaceConversation(a.id, -500, Chat.openConversation, conversation({ status: "pending", priority: "urgent" }))
        const counted = yield* check
        assert.deepStrictEqual(counted, {
          status: { open: 2, pending: 2, resolved: 1, snoozed: 0 },
          assignee: { "5": 1, "6": 1, me: 1, none: 2 }
        })
        yield* storage.recordSightings([sighting(a.id, { migrations: [{ from_chat_id: -500, to_chat_id: -1_000_000_000_500 }] })])
        assert.deepInclude(some(yield* storage.findChat(a.id, -1_000_000_000_500)), { status: "pending", priority: "urgent" })
        assert.deepStrictEqual(yield* check, counted)
        yield* storage.deleteBot(b.id)
        assert.deepStrictEqual((yield* check).status, { open: 2, pending: 1, resolved: 1, snoozed: 0 })
        assert.deepStrictEqual(yield* storage.chatCounts({ bot_ids: [b.id], chats: [] }), [])
      }))

    test("a reopening sighting reopens a chat not open, audited by system, once", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessages([message(bot.id, 1, 1), message(bot.id, 2, 1), message(bot.id, 3, 1)])
        yield* storage.replaceConversation(bot.id, 1, Chat.openConversation, conversation({ status: "resolved", priority: "high" }))
        const snoozed = conversation({ status: "snoozed", snoozed_until: 2_000_000_000 })
        yield* storage.replaceConversation(bot.id, 2, Chat.openConversation, snoozed)
        const reopens = sighting(bot.id, { reopens: [{ chat_id: 1, at: 1_700_000_000 }, { chat_id: 2, at: 1_700_000_000 }, { chat_id: 3, at: 1_700_000_000 }] })
        yield* storage.recordSightings([reopens])
        assert.deepInclude(some(yield* storage.findChat(bot.id, 1)), { status: "open", priority: "high", snoozed_until: 0 })
        assert.deepInclude(some(yield* storage.findChat(bot.id, 2)), { status: "open", snoozed_until: 0 })
        yield* storage.recordSightings([reopens])
        const entries = yield* storage.listAudit({ action: "chats.reopen", limit: 10 })
        assert.deepStrictEqual(
          entries.map((e) => [e.actor_type, e.actor_name, e.bot_id, e.chat_id, e.target_type, e.target_id, e.details])
            .sort((x, y) => Number(x[3]) - Number(y[3])),
          [
            ["system", "system", bot.id, 1, "chat", "1", { status: ["resolved", "open"], reason: "incoming" }],
            ["system", "system", bot.id, 2, "chat", "2", {
              status: ["snoozed", "open"],
              snoozed_until: [2_000_000_000, 0],
              reason: "incoming"
            }]
          ]
        )
        assert.strictEqual(entries[0]!.at, new Date(1_700_000_000_000).toISOString())
        const counts = Chat.countsOf(yield* storage.chatCounts({ bot_ids: [bot.id], chats: [] }), 0)
        assert.deepStrictEqual(counts.status, { open: 3, pending: 0, resolved: 0, snoozed: 0 })
      }))

    test("wakeSnoozed reopens the snoozed chats that are due, each once", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessages([message(bot.id, 1, 1), message(bot.id, 2, 1), message(bot.id, 3, 1)])
        yield* storage.replaceConversation(bot.id, 1, Chat.openConversation, conversation({ status: "snoozed", snoozed_until: 1_000 }))
        yield* storage.replaceConversation(bot.id, 2, Chat.openConversation, conversation({ status: "snoozed", snoozed_until: 2_000 }))
        yield* storage.replaceConversation(bot.id, 3, Chat.openConversation, conversation({ status: "pending" }))
        assert.deepStrictEqual(yield* storage.wakeSnoozed(999, 10), [])
        assert.deepStrictEqual(yield* storage.wakeSnoozed(1_500, 10), [{ bot_id: bot.id, chat_id: 1 }])
        assert.deepStrictEqual(yield* storage.wakeSnoozed(1_500, 10), [])
        assert.deepInclude(some(yield* storage.findChat(bot.id, 1)), { status: "open", snoozed_until: 0 })
        assert.deepInclude(some(yield* storage.findChat(bot.id, 2)), { status: "snoozed", snoozed_until: 2_000 })
        assert.deepStrictEqual(yield* storage.wakeSnoozed(5_000, 10), [{ bot_id: bot.id, chat_id: 2 }])
        assert.strictEqual(some(yield* storage.findChat(bot.id, 3)).status, "pending")
        const entries = yield* storage.listAudit({ action: "chats.reopen", limit: 10 })
        assert.deepStrictEqual(entries.map((e) => [e.chat_id, e.actor_type, e.details]).sort((x, y) => Number(x[0]) - Number(y[0])), [
          [1, "system", { status: ["snoozed", "open"], snoozed_until: [1_000, 0], reason: "snooze_expired" }],
          [2, "system", { status: ["snoozed", "open"], snoozed_until: [2_000, 0], reason: "snooze_expired" }]
        ])
      }))

    test("sweeps running at once reopen each due chat once, with one audit entry each", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const ids = Array.from({ length: 20 }, (_, i) => i + 1)
        yield* storage.saveMessages(ids.map((id) => message(bot.id, id, 1)))
        for (const id of ids) {
          yield* storage.replaceConversation(bot.id, id, Chat.openConversation, conversation({ status: "snoozed", snoozed_until: 100 + id }))
        }
        const rounds = yield* Effect.all(
          [storage.wakeSnoozed(500, 7), storage.wakeSnoozed(500, 50), storage.wakeSnoozed(500, 50)],
          { concurrency: "unbounded" }
        )
        const woken = rounds.flat().map((c) => c.chat_id).sort((x, y) => x - y)
        assert.deepStrictEqual(woken, ids)
        assert.strictEqual((yield* storage.listAudit({ action: "chats.reopen", limit: 100 })).length, ids.length)
        assert.deepStrictEqual(Chat.countsOf(yield* storage.chatCounts({ bot_ids: [bot.id], chats: [] }), 0).status, {
          open: 20,
          pending: 0,
          resolved: 0,
          snoozed: 0
        })
      }))
  })
}
