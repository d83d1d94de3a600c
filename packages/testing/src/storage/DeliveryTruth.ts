import { BotStore, ChatStore, IdempotencyStore, MessageStore, PeopleStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { botInput, message, type Runner } from "./Fixtures.js"

const some = <A>(o: Option.Option<A>): A => Option.getOrThrow(o)

/** The conformance tests for delivery truth: outgoing messages' states, unreachable chats, idempotency keys. */
export const deliveryTruth = (run: Runner): void => {
  const test = run(BotStore.BotStore, MessageStore.MessageStore, ChatStore.ChatStore, PeopleStore.PeopleStore)
  const keys = run(IdempotencyStore.IdempotencyStore)

  describe("delivery truth", () => {
    test("queueMessage numbers and counts an outgoing message; setDelivery gives it Telegram's id and date", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        yield* storage.saveMessage(message(bot.id, 10, 1, { date: 1_700_000_100 }))
        const draft = message(bot.id, 10, 0, { direction: "out", text: "hello", date: 1_700_000_150 })
        const queued = yield* storage.queueMessage(draft, `{"method":"sendMessage"}`)
        const second = yield* storage.queueMessage({ ...draft, text: "again" }, "")
        assert.isAbove(queued.local_id!, 0)
        assert.isAbove(second.local_id!, queued.local_id!)
        assert.deepStrictEqual(queued, {
          ...draft,
          id: 0,
          local_id: queued.local_id!,
          delivery: "queued",
          delivery_error: "",
          delivery_at: 1_700_000_150
        })
        assert.strictEqual(some(yield* storage.findChat(bot.id, 10)).message_count, 3)
        assert.deepStrictEqual(some(yield* storage.findOutgoing(queued.local_id!)), {
          message: queued,
          request: `{"method":"sendMessage"}`
        })

        const sent = some(
          yield* storage.setDelivery(queued.local_id!, {
            delivery: "sent",
            delivery_error: "",
            delivery_at: 1_700_000_160,
            message_id: 7,
            date: 1_700_000_200
          })
        )
        assert.deepStrictEqual(sent, { ...queued, id: 7, date: 1_700_000_200, delivery: "sent", delivery_at: 1_700_000_160 })
        const chat = some(yield* storage.findChat(bot.id, 10))
        assert.deepStrictEqual([chat.last_message?.id, chat.last_message_at, chat.message_count], [7, 1_700_000_200, 3])
        // Telegram's answer saved over it keeps the delivery.
        yield* storage.saveMessage(message(bot.id, 10, 7, { direction: "out", text: "hello!", date: 1_700_000_200 }))
        assert.deepInclude(some(yield* storage.findOutgoing(queued.local_id!)).message, { text: "hello!", delivery: "sent" })

        const failed = some(
          yield* storage.setDelivery(second.local_id!, {
            delivery: "failed",
            delivery_error: "Forbidden: bot was blocked by the user",
            delivery_at: 1_700_000_170,
            message_id: 0,
            date: 0
          })
        )
        assert.deepInclude(failed, { id: 0, delivery: "failed", delivery_error: "Forbidden: bot was blocked by the user" })
        const taken = some(
          yield* storage.setDelivery(second.local_id!, {
            delivery: "sent",
            delivery_error: "",
            delivery_at: 1_700_000_180,
            message_id: 7,
            date: 0
          })
        )
        assert.strictEqual(taken.id, 0, "an id the chat already holds is not taken")
        const page = yield* storage.listMessages({ bot_id: bot.id, chat_id: 10, limit: 10, offset: 0 })
        assert.deepStrictEqual(page.map((m) => [m.id, m.local_id ?? null]), [[7, queued.local_id!], [0, second.local_id!], [1, null]])
        const none = { delivery: "sent", delivery_error: "", delivery_at: 1, message_id: 0, date: 0 } as const
        assert.isTrue(Option.isNone(yield* storage.setDelivery(999_999, none)))
        assert.isTrue(Option.isNone(yield* storage.findOutgoing(999_999)))
      }))

    test("setReachable marks a chat unreachable once, and back; an incoming message clears it", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        yield* storage.saveMessage(message(a.id, 42, 1))
        yield* storage.saveMessage(message(b.id, 42, 1))
        yield* storage.recordSightings([
          { bot_id: a.id, chats: [], people: [personAt(42, 42)], left: [], states: [], migrations: [], reads: [] },
          { bot_id: b.id, chats: [], people: [personAt(42, 42)], left: [], states: [], migrations: [], reads: [] }
        ])
        const blocked = { since: 1_700_000_500, reason: "Forbidden: bot was blocked by the user" }
        assert.isTrue(yield* storage.setReachable(a.id, 42, blocked))
        assert.isFalse(yield* storage.setReachable(a.id, 42, { since: 1_700_000_600, reason: "other" }))
        assert.isFalse(yield* storage.setReachable(a.id, 99, blocked))
        assert.deepInclude(some(yield* storage.findChat(a.id, 42)), {
          reachable: false,
          unreachable_since: 1_700_000_500,
          unreachable_reason: "Forbidden: bot was blocked by the user"
        })
        const person = some(yield* storage.findPerson(42, { bot_ids: [a.id, b.id], chats: [] }))
        assert.deepStrictEqual(person.reachable_bot_ids, [b.id])
        assert.deepInclude(person.chats.find((c) => c.bot_id === a.id)!, { reachable: false, unreachable_since: 1_700_000_500 })

        yield* storage.saveMessage(message(a.id, 42, 2, { direction: "out" }))
        assert.isFalse(some(yield* storage.findChat(a.id, 42)).reachable, "the bot's own message does not clear it")
        yield* storage.saveMessage(message(a.id, 42, 3))
        assert.deepInclude(some(yield* storage.findChat(a.id, 42)), {
          reachable: true,
          unreachable_since: 0,
          unreachable_reason: ""
        })
        assert.isTrue(yield* storage.setReachable(b.id, 42, blocked))
        assert.isTrue(yield* storage.setReachable(b.id, 42, undefined))
        assert.isFalse(yield* storage.setReachable(b.id, 42, undefined))
      }))

    keys("idempotency keys: one claim per caller and key; answers kept; expired claims replaced; sweep", (store) =>
      Effect.gen(function*() {
        assert.isTrue(Option.isNone(yield* store.claim("key:1", "k", "body", 1000, 0)))
        assert.deepStrictEqual(some(yield* store.claim("key:1", "k", "other", 1001, 0)), {
          request: "body",
          status: 0,
          body: "",
          created_at: 1000
        })
        assert.isTrue(Option.isNone(yield* store.claim("account:1", "k", "body", 1001, 0)))
        yield* store.complete("key:1", "k", 200, `{"id":1}`)
        assert.deepStrictEqual(some(yield* store.claim("key:1", "k", "body", 1002, 0)), {
          request: "body",
          status: 200,
          body: `{"id":1}`,
          created_at: 1000
        })
        yield* store.release("account:1", "k")
        assert.isTrue(Option.isNone(yield* store.claim("account:1", "k", "again", 1003, 0)))
        assert.isTrue(Option.isNone(yield* store.claim("key:1", "k", "new", 2000, 1001)), "older than 1001: replaced")
        assert.deepInclude(some(yield* store.claim("key:1", "k", "new", 2001, 1001)), { request: "new", status: 0 })
        assert.strictEqual(yield* store.sweep(1500), 1)
        assert.strictEqual(yield* store.sweep(1500), 0)
        assert.strictEqual(yield* store.sweep(2001), 1)
      }))
  })
}

const personAt = (userId: number, chatId: number) => ({
  user_id: userId,
  username: "ann",
  first_name: "Ann",
  last_name: "",
  language_code: "",
  is_bot: false,
  chat_id: chatId,
  date: 1_700_000_000
})
