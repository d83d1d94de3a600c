import { BotStore, ChatStore, MessageStore, type Person, PeopleStore, TagStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { chatSeen, personSeen, sighting } from "./Chats.js"
import { botInput, message, type Runner, some, tagInput } from "./Fixtures.js"

const query = (botIds: ReadonlyArray<number>, overrides: Partial<Person.PeopleQuery> = {}): Person.PeopleQuery => ({
  bot_ids: botIds,
  limit: 50,
  ...overrides
})

const userIds = (people: ReadonlyArray<Person.Person>) => people.map((p) => p.user_id)

/** The conformance tests for people. */
export const people = (run: Runner): void => {
  const test = run(BotStore.BotStore, MessageStore.MessageStore, ChatStore.ChatStore, PeopleStore.PeopleStore, TagStore.TagStore)
  describe("people", () => {
    test("a user's names come from the latest sighting; first and last seen widen; language is kept", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const group = chatSeen(-5, { title: "Team" })
        yield* storage.recordSightings([sighting(bot.id, {
          chats: [group],
          people: [personSeen(42, -5, { first_name: "Ann", language_code: "de", date: 200 })]
        })])
        yield* storage.recordSightings([sighting(bot.id, {
          people: [personSeen(42, 0, { first_name: "Anna", username: "anna", date: 300 })]
        })])
        yield* storage.recordSightings([sighting(bot.id, {
          people: [personSeen(42, 0, { first_name: "Old name", language_code: "fr", date: 100 })]
        })])
        assert.deepStrictEqual(some(yield* storage.findPerson(42, { bot_ids: [bot.id], chats: [] })), {
          user_id: 42,
          username: "anna",
          first_name: "Anna",
          last_name: "",
          language_code: "de",
          is_bot: false,
          first_seen_at: 100,
          last_seen_at: 300,
          chats: [{ bot_id: bot.id, chat_id: -5, title: "Team", reachable: true, unreachable_since: 0, unreachable_reason: "" }],
          tags: [],
          reachable_bot_ids: []
        })
        yield* storage.recordSightings([sighting(bot.id, {
          people: [
            personSeen(42, 0, { first_name: "Ann B", language_code: "en", date: 400 }),
            personSeen(42, 0, { first_name: "Ann C", date: 400 })
          ]
        })])
        const person = some(yield* storage.findPerson(42, { bot_ids: [bot.id], chats: [] }))
        assert.deepStrictEqual([person.first_name, person.language_code, person.last_seen_at], ["Ann C", "en", 400])
        assert.isTrue(Option.isNone(yield* storage.findPerson(43, { bot_ids: [bot.id], chats: [] })))
        assert.isTrue(Option.isNone(yield* storage.findPerson(42, { bot_ids: [], chats: [] })))
      }))

    test("across bots: first seen the earliest, names from the latest, chats and tags of those bots only", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        const c = yield* storage.insertBot(botInput(3, { manage_enabled: true }))
        yield* storage.recordSightings([
          sighting(a.id, { chats: [chatSeen(42, { first_name: "Ann" })], people: [personSeen(42, 42, { first_name: "Ann", date: 100 })] }),
          sighting(b.id, { chats: [chatSeen(-9, { title: "Club" })], people: [personSeen(42, -9, { first_name: "Annie", date: 500 })] }),
          sighting(c.id, { chats: [chatSeen(-8, { title: "Secret" })], people: [personSeen(42, -8, { first_name: "Hidden", date: 900 })] })
        ])
        const tagA = yield* storage.upsertTag(tagInput(42, 42, "vip", { bot_id: a.id }))
        yield* storage.upsertTag(tagInput(-8, 42, "secret", { bot_id: c.id }))
        const person = some(yield* storage.findPerson(42, { bot_ids: [a.id, b.id], chats: [] }))
        assert.deepStrictEqual([person.first_name, person.first_seen_at, person.last_seen_at], ["Annie", 100, 500])
        assert.deepStrictEqual(person.chats, [
          { bot_id: b.id, chat_id: -9, title: "Club", reachable: true, unreachable_since: 0, unreachable_reason: "" },
          { bot_id: a.id, chat_id: 42, title: "Ann", reachable: true, unreachable_since: 0, unreachable_reason: "" }
        ])
        assert.deepStrictEqual(person.reachable_bot_ids, [a.id])
        assert.deepStrictEqual(person.tags, [tagA])
        const onlyA = some(yield* storage.findPerson(42, { bot_ids: [a.id], chats: [] }))
        assert.deepStrictEqual([onlyA.first_name, onlyA.chats.length], ["Ann", 1])
      }))

    test("listPeople: last seen first, then user id descending; cursor, text and chat filters", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        yield* storage.recordSightings([
          sighting(a.id, {
            chats: [chatSeen(-5, { title: "Team" })],
            people: [
              personSeen(1, -5, { first_name: "Ирина", date: 100 }),
              personSeen(2, -5, { first_name: "Bob", date: 300 }),
              personSeen(3, 0, { first_name: "Carl", username: "carl_x", date: 300 })
            ]
          }),
          sighting(b.id, { people: [personSeen(1, 0, { first_name: "Ирина", date: 400 }), personSeen(4, 0, { date: 50 })] })
        ])
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([a.id, b.id]))), [1, 3, 2, 4])
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([a.id]))), [3, 2, 1])
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([a.id, b.id], { limit: 2 }))), [1, 3])
        assert.deepStrictEqual(
          userIds(yield* storage.listPeople(query([a.id, b.id], { after: { last_seen_at: 300, user_id: 3 } }))),
          [2, 4]
        )
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([a.id, b.id], { q: "ИРИ" }))), [1])
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([a.id, b.id], { q: "X_" }))), [])
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([a.id, b.id], { q: "L_X" }))), [3])
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([a.id, b.id], { chat_id: -5 }))), [1, 2])
        assert.deepStrictEqual(userIds(yield* storage.listPeople(query([b.id], { chat_id: -5 }))), [])
        assert.deepStrictEqual(yield* storage.listPeople(query([])), [])
      }))

    test("a user who left a chat is no longer in it, unless seen there later", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.recordSightings([sighting(bot.id, {
          chats: [chatSeen(-5, { title: "A" }), chatSeen(-6, { title: "B" })],
          people: [personSeen(42, -5, { date: 100 }), personSeen(42, -6, { date: 100 })]
        })])
        yield* storage.recordSightings([sighting(bot.id, { left: [{ chat_id: -5, user_id: 42, date: 200 }] })])
        yield* storage.recordSightings([sighting(bot.id, { left: [{ chat_id: -6, user_id: 42, date: 50 }] })])
        assert.deepStrictEqual(some(yield* storage.findPerson(42, { bot_ids: [bot.id], chats: [] })).chats.map((c) => c.chat_id), [-6])
        yield* storage.recordSightings([sighting(bot.id, {
          people: [personSeen(42, -5, { date: 300 })],
          left: [{ chat_id: -5, user_id: 42, date: 250 }]
        })])
        assert.deepStrictEqual(some(yield* storage.findPerson(42, { bot_ids: [bot.id], chats: [] })).chats.map((c) => c.chat_id), [-5, -6])
      }))

    test("messages alone record no people", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessage(message(bot.id, 10, 1))
        assert.deepStrictEqual(yield* storage.listPeople(query([bot.id])), [])
      }))
  })
}
