import { BotStore, ChatStore, type Delivery, InboxStore, MessageStore, OutboxStore, StatsStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { chatSeen, personSeen, sighting } from "./Chats.js"
import { botInput, completion, message, newDelivery, type Runner, update } from "./Fixtures.js"

const hour = 3600
const day = 86400
/** 2025-01-01T00:00:00Z. */
const t = 1_735_689_600

/** The conformance tests for the counters and figures of stats. */
export const stats = (run: Runner): void => {
  const test = run(
    BotStore.BotStore,
    MessageStore.MessageStore,
    ChatStore.ChatStore,
    StatsStore.StatsStore,
    InboxStore.InboxStore,
    OutboxStore.OutboxStore
  )
  describe("stats", () => {
    test("hourCounts: messages in and out per hour, summed over the bots; edits and deletions change nothing", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        yield* storage.saveMessages([
          message(a.id, 10, 1, { date: t + 10 }),
          message(a.id, 10, 2, { date: t + 20, direction: "out" }),
          message(a.id, 11, 1, { date: t + hour + 5 }),
          message(b.id, 10, 1, { date: t + hour }),
          message(b.id, 10, 2, { date: t + 3 * hour, direction: "out" }),
          message(a.id, 10, 3, { date: t - 1 })
        ])
        yield* storage.saveMessage(message(a.id, 10, 1, { date: t + 10, text: "edited", edit_date: t + 99 }))
        yield* storage.markMessagesDeleted(a.id, 10, [2])
        const h0 = t / hour
        assert.deepStrictEqual(yield* storage.hourCounts([a.id, b.id], h0, h0 + 3), [
          { hour: h0, in: 1, out: 1 },
          { hour: h0 + 1, in: 2, out: 0 },
          { hour: h0 + 3, in: 0, out: 1 }
        ])
        assert.deepStrictEqual(yield* storage.hourCounts([a.id], h0 - 1, h0), [
          { hour: h0 - 1, in: 1, out: 0 },
          { hour: h0, in: 1, out: 1 }
        ])
        assert.deepStrictEqual(yield* storage.hourCounts([], h0, h0 + 3), [])
      }))

    test("topChats: most messages over the days first, with titles; activeChats counts chats with messages", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        const d0 = t / day
        yield* storage.saveMessages([
          message(a.id, -5, 1, { date: t }),
          message(a.id, -5, 2, { date: t + day, direction: "out" }),
          message(a.id, -5, 3, { date: t + 2 * day }),
          message(a.id, 42, 1, { date: t + day }),
          message(a.id, 42, 2, { date: t + day + 5 }),
          message(b.id, -5, 1, { date: t + day }),
          message(b.id, 43, 1, { date: t + 5 * day })
        ])
        yield* storage.recordSightings([sighting(a.id, {
          chats: [chatSeen(-5, { title: "Team" }), chatSeen(42, { first_name: "Ann", last_name: "Lee" })]
        })])
        assert.deepStrictEqual(yield* storage.topChats([a.id, b.id], d0, d0 + 2, 10), [
          { bot_id: a.id, chat_id: -5, title: "Team", messages: 3 },
          { bot_id: a.id, chat_id: 42, title: "Ann Lee", messages: 2 },
          { bot_id: b.id, chat_id: -5, title: "", messages: 1 }
        ])
        assert.deepStrictEqual(yield* storage.topChats([a.id, b.id], d0 + 1, d0 + 1, 2), [
          { bot_id: a.id, chat_id: 42, title: "Ann Lee", messages: 2 },
          { bot_id: a.id, chat_id: -5, title: "Team", messages: 1 }
        ])
        assert.strictEqual(yield* storage.activeChats([a.id, b.id], d0, d0 + 6), 4)
        assert.strictEqual(yield* storage.activeChats([a.id, b.id], d0 + 2, d0 + 6), 2)
        assert.strictEqual(yield* storage.activeChats([a.id], d0 + 3, d0 + 6), 0)
      }))

    test("totals: chats (not migrated away) and distinct people of the bots", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { manage_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { manage_enabled: true }))
        yield* storage.saveMessages([message(a.id, -5, 1), message(a.id, 10, 1), message(b.id, 10, 1)])
        yield* storage.recordSightings([
          sighting(a.id, { people: [personSeen(1, 0), personSeen(2, 0)] }),
          sighting(b.id, { people: [personSeen(2, 0), personSeen(3, 0)] }),
          sighting(a.id, { migrations: [{ from_chat_id: -5, to_chat_id: -1_000_000_000_005 }] })
        ])
        assert.deepStrictEqual(yield* storage.totals([a.id, b.id]), { chats: 3, people: 3 })
        assert.deepStrictEqual(yield* storage.totals([a.id]), { chats: 2, people: 2 })
        assert.deepStrictEqual(yield* storage.totals([]), { chats: 0, people: 0 })
      }))

    test("deliveries: delivered, retrying (pending after a failure) and dead in the range; the median time", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1, { proxy_enabled: true }))
        const at = (s: number) => new Date((t + s) * 1000).toISOString()
        const inputs: Array<Delivery.NewDelivery> = [0, 1, 2, 3, 4, 5, 6].map((i) =>
          newDelivery(bot.id, i + 1, { created_at: at(i * 10) })
        )
        yield* storage.commitUpdates(bot.id, inputs.map((d) => update(d.update_id)), 100)
        yield* storage.completeUpdates(inputs.map((d) => completion(bot.id, d.update_id, { deliveries: [d] })))
        const later = at(10_000)
        yield* storage.recordAttempts([
          [1, { status: "delivered", at: new Date((t + 0) * 1000 + 100).toISOString() }],
          [2, { status: "delivered", at: new Date((t + 10) * 1000 + 300).toISOString() }],
          [3, { status: "delivered", at: new Date((t + 20) * 1000 + 200).toISOString() }],
          [4, { status: "pending", at: at(40), next_attempt_at: later, last_error: "HTTP 502" }],
          [5, { status: "dead", at: at(50), last_error: "HTTP 500" }]
        ])
        assert.deepStrictEqual(yield* storage.deliveries([bot.id], at(0), at(70)), {
          delivered: 3,
          retrying: 1,
          dead: 1,
          p50_ms: 200
        })
        assert.deepStrictEqual(yield* storage.deliveries([bot.id], at(10), at(30)), {
          delivered: 2,
          retrying: 0,
          dead: 0,
          p50_ms: 250
        })
        assert.deepStrictEqual(yield* storage.deliveries([], at(0), at(70)), { delivered: 0, retrying: 0, dead: 0, p50_ms: 0 })
      }))
  })
}
