import {
  AccountStore,
  BotStore,
  ChatStore,
  KeyStore,
  MessageStore,
  PeopleStore,
  SearchQuery,
  SearchStore,
  StatsStore
} from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Either, Option } from "effect"
import { accountInput } from "./Accounts.js"
import { personSeen, sighting } from "./Chats.js"
import { botInput, keyInput, message, type Runner, some } from "./Fixtures.js"

const terms = (q: string): SearchQuery.Terms =>
  Either.getOrElse(SearchQuery.parse(q), (problem) => assert.fail(`${q}: ${problem}`))

/** The conformance tests for chat-level scopes: stored with keys and accounts, and filtering the reads. */
export const scopes = (run: Runner): void => {
  const test = run(
    BotStore.BotStore,
    KeyStore.KeyStore,
    AccountStore.AccountStore,
    MessageStore.MessageStore,
    ChatStore.ChatStore,
    PeopleStore.PeopleStore,
    SearchStore.SearchStore,
    StatsStore.StatsStore
  )
  describe("chat-level scopes", () => {
    test("keys and accounts keep each bot's chats and abilities", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const entries = [
          { bot_id: b.id, chat_ids: [], abilities: ["configure"] as const },
          { bot_id: a.id, chat_ids: [-20, -10], abilities: ["read", "reply"] as const }
        ]
        const key = yield* storage.insertApiKey(keyInput(1, { scopes: entries }))
        const sorted = [entries[1]!, entries[0]!]
        assert.deepStrictEqual(key.scopes, sorted)
        assert.deepStrictEqual(key.bot_ids, [a.id, b.id])
        assert.deepStrictEqual(some(yield* storage.findApiKey(key.id)).scopes, sorted)
        assert.deepStrictEqual(some(yield* storage.findApiKeyByHash("hash-1")).scopes, sorted)
        assert.deepStrictEqual((yield* storage.listApiKeys)[0]!.scopes, sorted)
        const only = [{ bot_id: b.id, chat_ids: [-30], abilities: ["read"] as const }]
        assert.deepStrictEqual(some(yield* storage.setApiKeyScopes(key.id, only)), { ...key, bot_ids: [b.id], scopes: only })
        assert.deepStrictEqual(some(yield* storage.findApiKey(key.id)).scopes, only)
        assert.isTrue(Option.isNone(yield* storage.setApiKeyScopes(999, only)))

        const account = yield* storage.insertAccount(accountInput("desk", { scopes: entries }))
        assert.deepStrictEqual(account.scopes, sorted)
        const narrowed = [{ bot_id: a.id, chat_ids: [-10], abilities: ["read"] as const }]
        assert.deepStrictEqual(some(yield* storage.updateAccount(account.id, { scopes: narrowed })).scopes, narrowed)
        assert.deepStrictEqual(some(yield* storage.findAccount(account.id)).bot_ids, [a.id])
        assert.deepStrictEqual((yield* storage.listAccounts).find((x) => x.id === account.id)!.scopes, narrowed)
      }))

    test("lists, people, search and stats take single chats beside whole bots", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        yield* storage.saveMessages([
          message(a.id, -10, 1, { date: 3_600, user_id: 41, text: "apple pie" }),
          message(a.id, -20, 1, { date: 7_200, user_id: 42, text: "apple tart" }),
          message(b.id, -30, 1, { date: 7_300, user_id: 43, text: "apple cake" })
        ])
        yield* storage.recordSightings([
          sighting(a.id, { people: [personSeen(41, -10), personSeen(42, -20)] }),
          sighting(b.id, { people: [personSeen(43, -30)] })
        ])
        const chats = [{ bot_id: a.id, chat_id: -10 }]
        const listed = yield* storage.listChats({ bot_ids: [b.id], chats, limit: 50 })
        assert.deepStrictEqual(listed.map((c) => [c.bot_id, c.chat_id]), [[b.id, -30], [a.id, -10]])
        const onlyOne = yield* storage.listChats({ bot_ids: [], chats, limit: 50 })
        assert.deepStrictEqual(onlyOne.map((c) => c.chat_id), [-10])

        const people = yield* storage.listPeople({ bot_ids: [], chats, limit: 50 })
        assert.deepStrictEqual(people.map((p) => p.user_id), [41])
        assert.deepStrictEqual(people[0]!.chats.map((c) => c.chat_id), [-10])
        assert.isTrue(Option.isNone(yield* storage.findPerson(42, { bot_ids: [], chats })))
        assert.strictEqual(some(yield* storage.findPerson(41, { bot_ids: [], chats })).user_id, 41)

        yield* storage.indexPending
        const found = yield* storage.searchMessages({ terms: terms("apple"), bot_ids: [b.id], chats, limit: 50 })
        assert.sameMembers(found.map((f) => f.message.text), ["apple pie", "apple cake"])
        const none = yield* storage.searchMessages({ terms: terms("tart"), bot_ids: [], chats, limit: 50 })
        assert.deepStrictEqual(none, [])

        const hours = yield* storage.chatHourCounts(chats, 0, 10)
        assert.deepStrictEqual(hours, [{ hour: 1, in: 1, out: 0 }])
        assert.deepStrictEqual((yield* storage.topChats([], 0, 10, 10, chats)).map((c) => c.chat_id), [-10])
        assert.strictEqual(yield* storage.activeChats([], 0, 10, chats), 1)
        assert.deepStrictEqual(yield* storage.totals([], chats), { chats: 1, people: 1 })
        assert.deepStrictEqual(yield* storage.totals([b.id], chats), { chats: 2, people: 2 })
      }))

    test("a migration to a supergroup adds the new chat id to the scopes naming the old one", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const other = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        const group = -500
        const supergroup = -1_000_000_000_500
        yield* storage.saveMessage(message(bot.id, group, 1, { date: 1_000 }))
        const named = { bot_id: bot.id, chat_ids: [-5000, group], abilities: ["read"] as const }
        const elsewhere = { bot_id: other.id, chat_ids: [group], abilities: ["read"] as const }
        const key = yield* storage.insertApiKey(keyInput(1, { scopes: [named, elsewhere] }))
        const account = yield* storage.insertAccount(accountInput("desk", { scopes: [named] }))
        const wide = yield* storage.insertApiKey(keyInput(2, { bot_ids: [bot.id] }))

        yield* storage.recordSightings([sighting(bot.id, { migrations: [{ from_chat_id: group, to_chat_id: supergroup }] })])

        const moved = [{ ...named, chat_ids: [supergroup, -5000, group] }, elsewhere]
        assert.deepStrictEqual(some(yield* storage.findApiKey(key.id)).scopes, moved)
        assert.deepStrictEqual(some(yield* storage.findAccount(account.id)).scopes, moved.slice(0, 1))
        assert.deepStrictEqual(some(yield* storage.findApiKey(wide.id)).scopes, wide.scopes)
      }))
  })
}
