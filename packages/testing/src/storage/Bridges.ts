import { BotStore, type Bridge, BridgeStore, EventStore, type LiveEvent } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option, Redacted } from "effect"
import { botInput, type Runner, t0, t1, t2 } from "./Fixtures.js"

const bridgeInput = (overrides: Partial<Bridge.BridgeRecordInput> = {}): Bridge.BridgeRecordInput => ({
  name: "ops",
  url: "https://hooks.example/bridge",
  format: "json",
  events: ["message"],
  bot_ids: [],
  enabled: true,
  signing_secret: Redacted.make(""),
  created_at: t0,
  ...overrides
})

const entry = (botId: number, type: LiveEvent.EventName, n: number): LiveEvent.NewLogEntry => ({
  bot_id: botId,
  chat_id: 10,
  type,
  data: JSON.stringify({ type, bot_id: botId, chat_id: 10, n }),
  created_at: t1
})

const some = <A>(option: Option.Option<A>): A => Option.getOrThrow(option)

/** The conformance tests for bridges and their outbox. */
export const bridges = (run: Runner): void => {
  const test = run(BridgeStore.BridgeStore, BotStore.BotStore, EventStore.EventStore)
  describe("bridges", () => {
    test("insert, find, list, update partially and delete; the signing secret round-trips Redacted", (storage) =>
      Effect.gen(function*() {
        const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        const bridge = yield* storage.insertBridge(bridgeInput({
          events: ["message", "chat"],
          bot_ids: [2, 1],
          signing_secret: Redacted.make(secret)
        }))
        assert.strictEqual(bridge.id, 1)
        assert.deepStrictEqual({ ...bridge, signing_secret: Redacted.value(bridge.signing_secret) }, {
          id: 1,
          name: "ops",
          url: "https://hooks.example/bridge",
          format: "json",
          events: ["message", "chat"],
          bot_ids: [2, 1],
          enabled: true,
          signing_secret: secret,
          last_error: "",
          created_at: t0,
          updated_at: t0
        })
        assert.notInclude(JSON.stringify(bridge), secret)
        const found = some(yield* storage.findBridge(1))
        assert.strictEqual(Redacted.value(found.signing_secret), secret)
        assert.isTrue(Option.isNone(yield* storage.findBridge(2)))
        const changed = some(yield* storage.updateBridge(1, {
          format: "slack",
          enabled: false,
          signing_secret: Redacted.make(""),
          updated_at: t2
        }))
        assert.deepInclude(changed, { format: "slack", enabled: false, name: "ops", events: ["message", "chat"], updated_at: t2 })
        assert.strictEqual(Redacted.value(changed.signing_secret), "")
        assert.isTrue(Option.isNone(yield* storage.updateBridge(9, { name: "x" })))
        yield* storage.insertBridge(bridgeInput({ name: "second" }))
        assert.deepStrictEqual((yield* storage.listBridges).map((b) => b.name), ["ops", "second"])
        assert.strictEqual(some(yield* storage.deleteBridge(1)).id, 1)
        assert.isTrue(Option.isNone(yield* storage.deleteBridge(1)))
        assert.deepStrictEqual((yield* storage.listBridges).map((b) => b.id), [2])
      }))

    test("appending events queues one delivery per event per enabled bridge that takes it, in order", (storage) =>
      Effect.gen(function*() {
        const one = yield* storage.insertBot(botInput(1))
        const two = yield* storage.insertBot(botInput(2))
        const all = yield* storage.insertBridge(bridgeInput({ events: ["message", "chat"] }))
        const onlyTwo = yield* storage.insertBridge(bridgeInput({ bot_ids: [two.id] }))
        yield* storage.insertBridge(bridgeInput({ enabled: false }))
        const ids = yield* storage.appendEvents([
          entry(one.id, "message", 1),
          entry(two.id, "message", 2),
          entry(two.id, "bot", 3),
          entry(one.id, "chat", 4),
          entry(99, "message", 5),
          { bot_id: 0, chat_id: 0, type: "reset", data: "{\"type\":\"reset\"}", created_at: t1 }
        ])
        const ofOne = yield* storage.nextBridgeDeliveries(one.id, 10)
        assert.deepStrictEqual(ofOne.map((d) => [d.bridge_id, d.event_id, d.type]), [
          [all.id, ids[0], "message"],
          [all.id, ids[3], "chat"]
        ])
        assert.deepInclude(ofOne[0]!, {
          bot_id: one.id,
          data: entry(one.id, "message", 1).data,
          status: "pending",
          attempts: 0,
          next_attempt_at: t1,
          last_error: "",
          created_at: t1
        })
        const ofTwo = yield* storage.nextBridgeDeliveries(two.id, 10)
        assert.deepStrictEqual(ofTwo.map((d) => [d.bridge_id, d.event_id]), [[all.id, ids[1]], [onlyTwo.id, ids[1]]])
        assert.strictEqual((yield* storage.nextBridgeDeliveries(two.id, 1)).length, 1)
      }))

    test("records attempts: delivered, pending again, dead; a failure is the bridge's last_error", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const bridge = yield* storage.insertBridge(bridgeInput())
        yield* storage.appendEvents([entry(bot.id, "message", 1), entry(bot.id, "message", 2), entry(bot.id, "message", 3)])
        const [a, b, c] = yield* storage.nextBridgeDeliveries(bot.id, 10)
        yield* storage.recordBridgeAttempts([
          [a!, { status: "delivered", at: t2 }],
          [b!, { status: "pending", at: t2, next_attempt_at: t2, last_error: "HTTP 500" }],
          [c!, { status: "dead", at: t2, last_error: "HTTP 404" }]
        ])
        const pending = yield* storage.nextBridgeDeliveries(bot.id, 10)
        assert.deepStrictEqual(pending.map((d) => [d.id, d.attempts, d.next_attempt_at, d.last_error]), [
          [b!.id, 1, t2, "HTTP 500"]
        ])
        assert.strictEqual(some(yield* storage.findBridge(bridge.id)).last_error, "HTTP 404")
        const listed = yield* storage.listBridgeDeliveries({ bridge_id: bridge.id, limit: 10 })
        assert.deepStrictEqual(listed.map((d) => d.status), ["dead", "pending", "delivered"])
        assert.deepStrictEqual(
          (yield* storage.listBridgeDeliveries({ status: "dead", limit: 10 })).map((d) => d.id),
          [c!.id]
        )
      }))

    test("prunes delivered bridge deliveries last updated before a time, never pending or dead ones", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* storage.insertBridge(bridgeInput())
        yield* storage.appendEvents([entry(bot.id, "message", 1), entry(bot.id, "message", 2), entry(bot.id, "message", 3)])
        const [a, b] = yield* storage.nextBridgeDeliveries(bot.id, 10)
        yield* storage.recordBridgeAttempts([
          [a!, { status: "delivered", at: t1 }],
          [b!, { status: "dead", at: t1, last_error: "HTTP 500" }]
        ])
        assert.strictEqual(yield* storage.pruneBridgeDeliveries(t1, 10), 0)
        assert.strictEqual(yield* storage.pruneBridgeDeliveries(t2, 10), 1)
        assert.deepStrictEqual(
          (yield* storage.listBridgeDeliveries({ limit: 10 })).map((d) => d.status),
          ["pending", "dead"]
        )
      }))

    test("deleting a bridge or a bot removes their deliveries", (storage) =>
      Effect.gen(function*() {
        const one = yield* storage.insertBot(botInput(1))
        const two = yield* storage.insertBot(botInput(2))
        const first = yield* storage.insertBridge(bridgeInput())
        const second = yield* storage.insertBridge(bridgeInput())
        yield* storage.appendEvents([entry(one.id, "message", 1), entry(two.id, "message", 2)])
        yield* storage.deleteBridge(first.id)
        assert.deepStrictEqual((yield* storage.nextBridgeDeliveries(one.id, 10)).map((d) => d.bridge_id), [second.id])
        yield* storage.deleteBot(one.id)
        assert.deepStrictEqual(yield* storage.nextBridgeDeliveries(one.id, 10), [])
        assert.deepStrictEqual((yield* storage.listBridgeDeliveries({ limit: 10 })).map((d) => d.bot_id), [two.id])
      }))
  })
}
