import { assert, describe, it } from "@effect/vitest"
import type { Bot, Inbox, RouteSend } from "@botrelay/core"
import { Events, Housekeeping, LongPoll, Pipeline, RouteMatcher, Routing } from "@botrelay/core"
import { Clock, Effect, Fiber, Layer, Logger, Option, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// What expires on the TestClock: route mappings (the reverse path), finished work and long-poll buffers by housekeeping.

const botInput = (n: number, fields: Partial<Bot.BotRecordInput> = {}) => TestRuntime.botInput(`${n}:token`, fields)

const iso = (ms: number) => new Date(ms).toISOString()
const now = Effect.map(Clock.currentTimeMillis, iso)

const layer = LongPoll.layer({ maxUpdates: 100, maxAge: "1 hour" }).pipe(
  Layer.provideMerge(Layer.mergeAll(TestRuntime.storage, Events.layer, TestRuntime.noLlm))
)

const provide = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(
    Effect.provide(layer),
    Effect.provide(Logger.remove(Logger.defaultLogger))
  )

/**
 * A source bot whose message 5 in chat 100 was copied by a route to message 77 of the target bot in chat -200,
 * now: the mapping the send recorded is created at the TestClock's present time.
 */
const routed = Effect.gen(function*() {
  const storage = yield* TestRuntime.store
  const source = yield* storage.insertBot(botInput(1))
  const target = yield* storage.insertBot(botInput(2))
  const route = yield* storage.insertRoute({
    source_bot_id: source.id,
    target_bot_id: target.id,
    condition_type: "all",
    condition_value: "",
    action: "copy",
    target_chat_id: -200,
    enabled: true,
    description: "",
    created_at: yield* now
  })
  const payload = `{"update_id":1,"message":{"message_id":5,"chat":{"id":100,"type":"private"},"date":0,"text":"hi"}}`
  yield* storage.commitUpdates(source.id, [{ update_id: 1, payload, received_at: yield* now }], 2)
  const send: RouteSend.NewRouteSend = {
    bot_id: target.id,
    kind: "copy",
    route_id: route.id,
    chat_id: -200,
    reply_to_message_id: 0,
    source_bot_id: source.id,
    update_id: 1,
    from_chat_id: 100,
    message_id: 5,
    hop: 1,
    created_at: yield* now
  }
  yield* storage.completeUpdates([{ bot_id: source.id, update_id: 1, messages: [], deliveries: [], sends: [send] }])
  const [job] = yield* storage.nextSends(target.id, 1)
  const at = yield* now
  yield* storage.recordSend(job!.id, { status: "sent", at }, [{
    route_id: route.id,
    source_bot_id: source.id,
    source_chat_id: 100,
    source_message_id: 5,
    target_bot_id: target.id,
    target_chat_id: -200,
    target_message_id: 77,
    hop: 1,
    reversible: true,
    created_at: at
  }])
  const bots = new Map([[source.id, source], [target.id, target]])
  const routing = yield* Routing.make({
    bot: (id) => bots.get(id),
    isBotUser: () => false,
    quiet: () => Effect.void
  }, { mappingTtl: "1 hour" }).pipe(Effect.provideServiceEffect(RouteMatcher.RouteSets, RouteMatcher.make))
  let next = 10
  /** The target chat's reply to message 77, evaluated now; the sends routing decides on. */
  const reply = Effect.gen(function*() {
    const update_id = next++
    const update: Inbox.InboxUpdate = {
      bot_id: target.id,
      update_id,
      received_at: yield* now,
      payload: JSON.stringify({
        update_id,
        message: {
          message_id: update_id,
          chat: { id: -200, type: "group", title: "desk" },
          from: { id: 555, is_bot: false, first_name: "Op" },
          date: 0,
          text: "an answer",
          reply_to_message: { message_id: 77, chat: { id: -200, type: "group", title: "desk" }, date: 0 }
        }
      })
    }
    const [decision] = yield* routing.evaluate(target, [update], yield* Clock.currentTimeMillis)
    return decision!.sends
  })
  /** Whether the mapping is still stored, whatever its age. */
  const mapped = Effect.map(storage.findReverse(target.id, -200, 77, iso(0)), Option.isSome)
  return { source, target, route, reply, mapped }
})

const sweepOptions: Housekeeping.Options = { retention: "1 hour", interval: "1 hour", mappingTtl: "1 hour" }

describe("route mappings on a TestClock", () => {
  it.scoped("a reply within the mapping's lifetime travels back; one after it does not", () =>
    provide(Effect.gen(function*() {
      const { reply, route, source } = yield* routed
      yield* TestClock.adjust("1 hour")
      const back = yield* reply
      assert.strictEqual(back.length, 1)
      assert.deepInclude(back[0]!, {
        bot_id: source.id,
        kind: "reply",
        route_id: route.id,
        chat_id: 100,
        reply_to_message_id: 5
      })
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* reply, [])
    })))

  it.scoped("housekeeping deletes a mapping once it is older than its lifetime, not before", () =>
    provide(Effect.gen(function*() {
      const { mapped } = yield* routed
      yield* TestClock.adjust("1 hour")
      yield* Housekeeping.sweep(sweepOptions)
      assert.isTrue(yield* mapped)
      yield* TestClock.adjust("1 millis")
      yield* Housekeeping.sweep(sweepOptions)
      assert.isFalse(yield* mapped)
    })))
})

describe("Housekeeping on a TestClock", () => {
  it.effect("sweeps at start and every interval: old finished work goes, unprocessed updates and pending deliveries stay", () =>
    provide(Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const bot = yield* storage.insertBot(botInput(1, { proxy_enabled: true, backend_url: "http://backend.example/hook" }))
      const update = (update_id: number) => ({ update_id, payload: `{"update_id":${update_id}}`, received_at: "" })
      const commit = (update_id: number) =>
        Effect.flatMap(now, (received_at) => storage.commitUpdates(bot.id, [{ ...update(update_id), received_at }], update_id + 1))
      const complete = (update_id: number) =>
        Effect.flatMap(now, (created_at) =>
          storage.completeUpdates([{
            bot_id: bot.id,
            update_id,
            messages: [],
            deliveries: [{ bot_id: bot.id, update_id, url: bot.backend_url, payload: update(update_id).payload, created_at }]
          }]))
      /** Commits and processes the update, queuing its delivery; `delivered` records that delivery as made. */
      const finish = (update_id: number, delivered: boolean) =>
        Effect.gen(function*() {
          yield* commit(update_id)
          yield* complete(update_id)
          if (!delivered) return
          const pending = yield* storage.nextDeliveries(bot.id, 10)
          const id = pending.find((d) => d.update_id === update_id)!.id
          yield* storage.recordAttempts([[id, { status: "delivered", at: yield* now }]])
        })
      const statuses = Effect.map(
        storage.listDeliveries({ bot_id: bot.id, limit: 10 }),
        (list) => list.map((d) => [d.update_id, d.status] as const).reverse()
      )
      /** Whether the inbox still holds the update: committing it again adds nothing then (else it is added back). */
      const held = (update_id: number) =>
        Effect.map(storage.commitUpdates(bot.id, [update(update_id)], 0), (added) => added === 0)

      yield* finish(1, true)
      yield* finish(2, false)
      yield* commit(3)
      yield* TestClock.adjust("61 minutes")
      const housekeeping = yield* Effect.fork(Housekeeping.run(sweepOptions))
      yield* TestRuntime.until(() => false)
      assert.deepStrictEqual(yield* statuses, [[2, "pending"]], "the sweep at start deleted the delivered one")

      yield* finish(4, true)
      yield* TestClock.adjust("1 hour")
      assert.deepStrictEqual(yield* statuses, [[2, "pending"], [4, "delivered"]], "exactly an hour old is kept")
      assert.isTrue(yield* held(4))
      yield* TestClock.adjust("1 hour")
      assert.deepStrictEqual(yield* statuses, [[2, "pending"]], "the sweep an interval later deleted it")
      assert.deepStrictEqual((yield* storage.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [3])
      assert.isFalse(yield* held(1))
      assert.isFalse(yield* held(4))
      yield* Fiber.interrupt(housekeeping)
    })))

  it.effect("trims long-poll buffers by age when nobody polls; a bot with long polling off keeps its buffer", () =>
    provide(Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const polled = yield* storage.insertBot(botInput(1, { long_poll_enabled: true }))
      const off = yield* storage.insertBot(botInput(2, { long_poll_enabled: true }))
      for (const bot of [polled, off]) {
        yield* storage.commitUpdates(bot.id, [{ update_id: 7, payload: `{"update_id":7,"message":{}}`, received_at: "" }], 8)
        yield* Pipeline.drain(bot.id, { current: () => bot }).pipe(Effect.zipLeft(TestRuntime.followed))
      }
      yield* storage.updateBot(off.id, { long_poll_enabled: false })
      yield* TestClock.adjust("61 minutes")
      yield* Housekeeping.sweep(sweepOptions)
      assert.strictEqual(yield* storage.countBuffered(polled.id), 0)
      assert.deepInclude(yield* storage.bufferState(polled.id), { trimmed: 1, last_trimmed_at: iso(61 * 60_000) })
      assert.strictEqual(yield* storage.countBuffered(off.id), 1)
      assert.strictEqual((yield* storage.bufferState(off.id)).trimmed, 0)
    })))
})
