import { assert, describe, it } from "@effect/vitest"
import { Bot, Events, Bots, Ownership, Route, Routes, type Stores, Supervisor, Webhook } from "@botrelay/core"
import { type BotApi, HttpExchange, TelegramClient } from "@botrelay/telegram"
import { Deferred, Effect, Layer, Logger, Option, Queue, Redacted, Schema, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// The supervisor on a TestClock: which bots it polls as bots and routes change, and the work it picks up at start.

const publicUrl = "https://relay.example"

/**
 * A Telegram whose getUpdates holds until interrupted; it counts the polls held per token and records
 * every call with its token.
 */
const holdingTelegram = () => {
  const held = new Map<string, number>()
  const calls: Array<{ readonly method: string; readonly token: string; readonly params: unknown }> = []
  const record = (method: string, token: Redacted.Redacted<string>, params?: unknown) =>
    Effect.sync(() => void calls.push({ method, token: Redacted.value(token), params }))
  const service = {
    getMe: (token: Redacted.Redacted<string>) =>
      Effect.as(record("getMe", token), {
        id: Number(Redacted.value(token).split(":")[0]),
        is_bot: true,
        first_name: "Bot",
        username: `bot_${Redacted.value(token).split(":")[0]}`
      }),
    getUpdates: (token: Redacted.Redacted<string>, params: unknown) =>
      Effect.zipRight(
        record("getUpdates", token, params),
        Effect.acquireUseRelease(
          Effect.sync(() => held.set(Redacted.value(token), (held.get(Redacted.value(token)) ?? 0) + 1)),
          () => Effect.never,
          () => Effect.sync(() => held.set(Redacted.value(token), held.get(Redacted.value(token))! - 1))
        )
      ),
    setWebhook: (token: Redacted.Redacted<string>, params: unknown) => Effect.as(record("setWebhook", token, params), true),
    deleteWebhook: (token: Redacted.Redacted<string>, params: unknown) =>
      Effect.as(record("deleteWebhook", token, params), true)
  } as unknown as TelegramClient.Service
  return {
    held: (token: string) => held.get(token) ?? 0,
    calls: (method: string, token: string) => calls.filter((c) => c.method === method && c.token === token),
    layer: Layer.succeed(TelegramClient.TelegramClient, {
      ...service,
      pollUpdates: TelegramClient.pollingWith(service.getUpdates)
    })
  }
}

const newBot = (token: string, fields: Partial<Bot.NewBot> = {}) =>
  Schema.decodeUnknownSync(Bot.NewBot)({ token, ...fields })

const options: Supervisor.Options = { ...Supervisor.defaults, publicUrl }

/** Runs `body` with a started supervisor on fresh storage and the given Telegram and backend. */
const run = <A, E>(
  telegram: ReturnType<typeof holdingTelegram>,
  body: Effect.Effect<A, E, Bots.Bots | Routes.Routes | Events.Events | Stores.Stores>,
  http = TestRuntime.backend()
) =>
  Effect.gen(function*() {
    yield* Supervisor.run(options)
    return yield* body
  }).pipe(
    Effect.provide(TestRuntime.runtime(telegram.layer, http.layer)),
    Effect.provideService(Webhook.PublicUrl, Option.some(publicUrl)),
    Effect.provide(Logger.remove(Logger.defaultLogger))
  )

const running = (botId: number) => Effect.map(Events.Events, (events) => events.isRunning(botId))

describe("Supervisor on a TestClock", () => {
  it.scoped("polls an added bot that needs updates, identifying it first; a send-only bot is not polled", () => {
    const tg = holdingTelegram()
    return run(tg, Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const managed = yield* bots.add(newBot("1:one", { manage_enabled: true }))
      const idle = yield* bots.add(newBot("2:two"))
      yield* TestRuntime.until(() => tg.held("1:one") === 1)
      assert.strictEqual(tg.held("1:one"), 1)
      assert.strictEqual(tg.held("2:two"), 0)
      assert.strictEqual(tg.calls("getMe", "1:one").length, 1)
      assert.deepStrictEqual(tg.calls("getMe", "2:two"), [])
      assert.isTrue(yield* running(managed.id))
      assert.isFalse(yield* running(idle.id))
      assert.strictEqual((yield* bots.get(managed.id)).username, "bot_1")
    }))
  })

  it.scoped("disabling stops the poller at once; enabling starts it again", () => {
    const tg = holdingTelegram()
    return run(tg, Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const bot = yield* bots.add(newBot("1:one", { proxy_enabled: true, backend_url: "http://backend.example/hook" }))
      yield* TestRuntime.until(() => tg.held("1:one") === 1)
      yield* bots.toggleDisabled(bot.id)
      yield* TestRuntime.until(() => tg.held("1:one") === 0)
      assert.strictEqual(tg.held("1:one"), 0)
      assert.isFalse(yield* running(bot.id))
      yield* TestRuntime.until(() => false)
      assert.strictEqual(tg.calls("getUpdates", "1:one").length, 1, "no poll while disabled")
      yield* bots.toggleDisabled(bot.id)
      yield* TestRuntime.until(() => tg.held("1:one") === 1)
      assert.strictEqual(tg.held("1:one"), 1)
      assert.strictEqual(tg.calls("getUpdates", "1:one").length, 2)
      assert.isTrue(yield* running(bot.id))
    }))
  })

  it.scoped("webhook mode on stops polling and registers the webhook; off deletes it, forgets the secret and polls", () => {
    const tg = holdingTelegram()
    return run(tg, Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const storage = yield* TestRuntime.store
      const bot = yield* bots.add(newBot("1:one", { manage_enabled: true }))
      yield* TestRuntime.until(() => tg.held("1:one") === 1)

      yield* bots.update({ id: bot.id, webhook_mode: true })
      yield* TestRuntime.until(() => tg.calls("setWebhook", "1:one").length === 1 && tg.held("1:one") === 0)
      assert.strictEqual(tg.held("1:one"), 0)
      const [registered] = tg.calls("setWebhook", "1:one")
      const params = registered!.params as { readonly url: string; readonly secret_token: Redacted.Redacted<string> }
      assert.strictEqual(params.url, `${publicUrl}/telegram/webhook/${bot.id}`)
      const secret = yield* storage.webhookSecret(bot.id)
      assert.deepStrictEqual(secret, Option.some(Redacted.value(params.secret_token)))
      yield* TestRuntime.until(() => false)
      assert.isTrue(yield* running(bot.id))

      yield* bots.update({ id: bot.id, webhook_mode: false })
      yield* TestRuntime.until(() => tg.held("1:one") === 1)
      const removed = tg.calls("deleteWebhook", "1:one")
      assert.strictEqual(removed.length, 1)
      assert.notStrictEqual((removed[0]!.params as { drop_pending_updates?: boolean }).drop_pending_updates, true)
      assert.isTrue(Option.isNone(yield* storage.webhookSecret(bot.id)))
      assert.strictEqual(tg.held("1:one"), 1)
      assert.isTrue(yield* running(bot.id))
    }))
  })

  it.scoped("deleting a bot stops its poller; a new token restarts the poller with it", () => {
    const tg = holdingTelegram()
    return run(tg, Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const kept = yield* bots.add(newBot("1:one", { manage_enabled: true }))
      const gone = yield* bots.add(newBot("2:two", { long_poll_enabled: true }))
      yield* TestRuntime.until(() => tg.held("1:one") === 1 && tg.held("2:two") === 1)

      yield* bots.remove(gone.id)
      yield* TestRuntime.until(() => tg.held("2:two") === 0)
      assert.strictEqual(tg.held("2:two"), 0)
      assert.isFalse(yield* running(gone.id))

      yield* bots.update({ id: kept.id, token: Redacted.make("1:renewed") })
      yield* TestRuntime.until(() => tg.held("1:renewed") === 1)
      assert.strictEqual(tg.held("1:one"), 0)
      assert.strictEqual(tg.held("1:renewed"), 1)
      assert.strictEqual(tg.calls("getMe", "1:renewed").length, 1)
      assert.isTrue(yield* running(kept.id))
    }))
  })

  it.scoped("an enabled route makes its send-only bots polled; disabling or removing it stops them", () => {
    const tg = holdingTelegram()
    return run(tg, Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const routes = yield* Routes.Routes
      const source = yield* bots.add(newBot("1:one"))
      const target = yield* bots.add(newBot("2:two"))
      const input = { source_bot_id: source.id, target_bot_id: target.id, action: "copy" }
      const route = yield* routes.add(Schema.decodeUnknownSync(Route.NewRoute)(input))
      yield* TestRuntime.until(() => tg.held("1:one") === 1 && tg.held("2:two") === 1)
      assert.strictEqual(tg.held("1:one"), 1)
      assert.strictEqual(tg.held("2:two"), 1, "the target is polled for the reverse path")

      yield* routes.update(Schema.decodeUnknownSync(Route.RouteUpdate)({ ...input, id: route.id, enabled: false }))
      yield* TestRuntime.until(() => tg.held("1:one") === 0 && tg.held("2:two") === 0)
      assert.strictEqual(tg.held("1:one") + tg.held("2:two"), 0)

      yield* routes.update(Schema.decodeUnknownSync(Route.RouteUpdate)({ ...input, id: route.id }))
      yield* TestRuntime.until(() => tg.held("1:one") === 1 && tg.held("2:two") === 1)
      yield* routes.remove(route.id)
      yield* TestRuntime.until(() => tg.held("1:one") === 0 && tg.held("2:two") === 0)
      assert.strictEqual(tg.held("1:one") + tg.held("2:two"), 0)
      assert.isFalse(yield* running(source.id))
    }))
  })

  it.effect("picks up work left from before at start: unprocessed updates are processed and pending deliveries made", () => {
    const tg = holdingTelegram()
    const http = TestRuntime.backend()
    const input = (token: string) =>
      TestRuntime.botInput(token, { proxy_enabled: true, backend_url: "http://backend.example/hook" })
    const update = (update_id: number) => ({ update_id, payload: `{"update_id":${update_id}}`, received_at: "" })
    return Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const unprocessed = yield* storage.insertBot(input("1:one"))
      const undelivered = yield* storage.insertBot(input("2:two"))
      yield* storage.commitUpdates(unprocessed.id, [update(10), update(11)], 12)
      yield* storage.commitUpdates(undelivered.id, [update(20)], 21)
      yield* storage.completeUpdates([{
        bot_id: undelivered.id,
        update_id: 20,
        messages: [],
        deliveries: [{ bot_id: undelivered.id, update_id: 20, url: undelivered.backend_url, payload: update(20).payload, created_at: "" }]
      }])
      assert.deepStrictEqual([...(yield* storage.botsWithWork)].sort(), [unprocessed.id, undelivered.id])

      yield* Effect.scoped(Effect.gen(function*() {
        yield* Supervisor.run(options)
        yield* TestRuntime.until(() => http.received.length === 3)
        yield* TestRuntime.followed
      }))
      assert.deepStrictEqual([...http.received].sort(), [10, 11, 20])
      assert.deepStrictEqual(yield* storage.pendingUpdates(unprocessed.id, 10), [])
      const statuses = yield* storage.listDeliveries({ limit: 10 })
      assert.deepStrictEqual(statuses.map((d) => [d.update_id, d.status]).sort(), [[10, "delivered"], [11, "delivered"], [20, "delivered"]])
      assert.deepStrictEqual(yield* storage.botsWithWork, [])
    }).pipe(
      Effect.provide(TestRuntime.runtime(tg.layer, http.layer)),
      Effect.provide(Logger.remove(Logger.defaultLogger))
    )
  })

  /**
   * Runs a bot with two updates to deliver and a backend that holds the first POST; while it is on the wire,
   * this instance stops running the bot: handing it over to rebalance, or having lost its lease.
   */
  const stoppedMidDelivery = (handingOver: boolean) => {
    const tg = holdingTelegram()
    const answer = Effect.runSync(Deferred.make<void>())
    const posted: Array<number> = []
    let interrupted = 0
    const http = Layer.succeed(
      HttpExchange.HttpExchange,
      HttpExchange.HttpExchange.of({
        exchange: (request) =>
          Effect.sync(() => posted.push((JSON.parse(String(request.body)) as { update_id: number }).update_id)).pipe(
            Effect.zipRight(Deferred.await(answer)),
            Effect.onInterrupt(() => Effect.sync(() => interrupted++)),
            Effect.as({ status: 200, headers: {}, body: new Uint8Array() })
          )
      })
    )
    const owned = new Set<number>()
    const stopped: Array<number> = []
    const ownership = Ownership.Ownership.of({
      owns: (botId) => owned.has(botId),
      tenure: (botId) => ({ fence: undefined, holds: Effect.sync(() => owned.has(botId)), holdsAt: () => owned.has(botId) }),
      lost: () => Effect.void,
      handingOver: (botId) => handingOver && !owned.has(botId),
      stopped: (botId) => Effect.sync(() => void stopped.push(botId)),
      release: Effect.void
    })
    const update = (update_id: number) => ({ update_id, payload: `{"update_id":${update_id}}`, received_at: "" })
    return Effect.gen(function*() {
      const storage = yield* TestRuntime.store
      const events = yield* Events.Events
      const bot = yield* storage.insertBot(
        TestRuntime.botInput("1:one", { proxy_enabled: true, backend_url: "http://backend.example/hook" })
      )
      owned.add(bot.id)
      yield* storage.commitUpdates(bot.id, [update(10), update(11)], 12)
      const stoppedOnTheWire = yield* Effect.scoped(Effect.gen(function*() {
        yield* Supervisor.run(options)
        yield* TestRuntime.until(() => posted.length === 1)
        owned.delete(bot.id)
        yield* events.publish(Events.Event.OwnershipChanged({ bot_id: bot.id, owned: false }))
        yield* TestRuntime.until(() => false)
        const early = [...stopped]
        yield* Deferred.succeed(answer, undefined)
        yield* TestRuntime.until(() => stopped.length > 0)
        return early
      }))
      const statuses = yield* storage.listDeliveries({ limit: 10 })
      return {
        botId: bot.id,
        posted,
        interrupted,
        stoppedOnTheWire,
        stopped,
        statuses: statuses.map((d) => [d.update_id, d.status]).sort()
      }
    }).pipe(
      Effect.provideService(Ownership.Ownership, ownership),
      Effect.provide(TestRuntime.runtime(tg.layer, http)),
      Effect.provide(Logger.remove(Logger.defaultLogger))
    )
  }

  it.effect("a bot handed over mid-delivery: the POST on the wire is finished and recorded, no other begun, then the lease may go", () =>
    Effect.gen(function*() {
      const run = yield* stoppedMidDelivery(true)
      assert.deepStrictEqual(run.posted, [10])
      assert.strictEqual(run.interrupted, 0, "the POST under way was not cut short")
      assert.deepStrictEqual(run.stoppedOnTheWire, [], "the lease is kept while the POST is on the wire")
      assert.deepStrictEqual(run.stopped, [run.botId])
      assert.deepStrictEqual(run.statuses, [[10, "delivered"], [11, "pending"]])
    }))

  it.effect("a bot whose lease was lost mid-delivery: the POST on the wire is cut short at once and goes again later", () =>
    Effect.gen(function*() {
      const run = yield* stoppedMidDelivery(false)
      assert.deepStrictEqual(run.posted, [10])
      assert.strictEqual(run.interrupted, 1)
      assert.deepStrictEqual(run.stoppedOnTheWire, [run.botId])
      assert.deepStrictEqual(run.statuses, [[10, "pending"], [11, "pending"]])
    }))

  /**
   * A bot forwarding to a backend that answers each POST with the next of `answers` (a status, or a 200 with this
   * JSON body; 200 once they run out) on the next turn, on a Telegram whose getUpdates answers the batches `push`
   * gives it. Each POST is recorded with the bot's ingress offset as stored at that moment, each other Bot API call
   * with the statuses of the bot's deliveries at that moment.
   */
  const earlyForwarding = (answers: ReadonlyArray<number | string>) => {
    const batches = Effect.runSync(Queue.unbounded<ReadonlyArray<BotApi.RawUpdate>>())
    const calls: Array<{ readonly method: string; readonly deliveries: ReadonlyArray<ReadonlyArray<unknown>> }> = []
    let deliveries = (): ReadonlyArray<ReadonlyArray<unknown>> => []
    const telegram = {
      getMe: () => Effect.succeed({ id: 1, is_bot: true, first_name: "Bot", username: "bot_1" }),
      getUpdates: () => Queue.take(batches),
      call: (_token: unknown, method: string) =>
        Effect.sync(() => {
          calls.push({ method, deliveries: deliveries() })
          return { message_id: 1, date: 0, chat: { id: 5, type: "private" }, text: "hi" }
        })
    } as unknown as TelegramClient.Service
    const posts: Array<{ readonly update_id: number; readonly offset: number }> = []
    let offset = () => -1
    const left = [...answers]
    const answer = () => {
      const next = left.shift() ?? 200
      return typeof next === "number"
        ? { status: next, headers: {}, body: new Uint8Array() }
        : { status: 200, headers: { "content-type": "application/json" }, body: new TextEncoder().encode(next) }
    }
    const post = (request: HttpExchange.Request) =>
      posts.push({ update_id: (JSON.parse(String(request.body)) as { update_id: number }).update_id, offset: offset() })
    const http = Layer.succeed(
      HttpExchange.HttpExchange,
      HttpExchange.HttpExchange.of({
        exchange: (request) =>
          Effect.sync(() => {
            post(request)
            return answer()
          }),
        send: (request, callback) => {
          post(request)
          const answered = answer()
          setImmediate(() => callback(undefined, answered))
          return () => {}
        }
      })
    )
    const update = (update_id: number) => ({ update_id, payload: `{"update_id":${update_id}}` })
    const run = <A, E>(body: (botId: number) => Effect.Effect<A, E, Stores.Stores | Events.Events>) =>
      Effect.gen(function*() {
        const storage = yield* TestRuntime.store
        const bot = yield* storage.insertBot(
          TestRuntime.botInput("1:one", { proxy_enabled: true, backend_url: "http://backend.example/hook" })
        )
        offset = () => Effect.runSync(storage.ingressOffset(bot.id))
        deliveries = () =>
          Effect.runSync(storage.listDeliveries({ bot_id: bot.id, limit: 10 })).map((d) => [d.update_id, d.status])
        return yield* Effect.scoped(Effect.zipRight(Supervisor.run(options), body(bot.id)))
      }).pipe(
        Effect.provide(TestRuntime.runtime(Layer.succeed(TelegramClient.TelegramClient, {
          ...telegram,
          pollUpdates: TelegramClient.pollingWith(telegram.getUpdates)
        }), http)),
        Effect.provide(Logger.remove(Logger.defaultLogger))
      )
    return { calls, posts, push: (...ids: ReadonlyArray<number>) => Queue.offer(batches, ids.map(update)), run }
  }

  const statusesOf = (botId: number) =>
    Effect.map(TestRuntime.store, (storage) => storage.listDeliveries({ bot_id: botId, limit: 10 })).pipe(
      Effect.flatten,
      Effect.map((page) => page.map((d) => [d.update_id, d.status, d.attempts]).sort())
    )

  it.effect("an update of a bot with nothing waiting goes to its backend while it is committed, once", () => {
    const backend = earlyForwarding([])
    return backend.run((botId) =>
      Effect.gen(function*() {
        yield* backend.push(10)
        yield* TestRuntime.until(() => backend.posts.length === 1)
        yield* TestRuntime.until(() => false)
        assert.deepStrictEqual(backend.posts, [{ update_id: 10, offset: 0 }], "POSTed before the batch was stored")
        assert.deepStrictEqual(yield* statusesOf(botId), [[10, "delivered", 0]], "that POST is the delivery's attempt")
        yield* backend.push(11, 12)
        yield* TestRuntime.until(() => false)
        assert.deepStrictEqual(backend.posts.map((p) => p.update_id), [10, 11, 12], "no update sent twice")
        assert.deepStrictEqual(backend.posts[1], { update_id: 11, offset: 11 })
        assert.deepStrictEqual(backend.posts[2]!.offset, 13, "only a batch's first update goes before the commit")
      })
    )
  })

  it.effect("a webhook reply in the answer to an early POST runs once, after the delivery is recorded", () => {
    const backend = earlyForwarding([JSON.stringify({ method: "sendMessage", chat_id: 5, text: "hi" })])
    return backend.run((botId) =>
      Effect.gen(function*() {
        yield* backend.push(10)
        yield* TestRuntime.until(() => backend.calls.length === 1)
        yield* TestRuntime.until(() => false)
        assert.deepStrictEqual(backend.posts, [{ update_id: 10, offset: 0 }])
        assert.deepStrictEqual(backend.calls, [{ method: "sendMessage", deliveries: [[10, "delivered"]] }])
        assert.deepStrictEqual(yield* statusesOf(botId), [[10, "delivered", 0]])
      })
    )
  })

  it.effect("an update of a bot with a delivery waiting for its retry is not sent early: deliveries stay in order", () => {
    const backend = earlyForwarding([500])
    return backend.run((botId) =>
      Effect.gen(function*() {
        yield* backend.push(10)
        yield* TestRuntime.until(() => false)
        assert.deepStrictEqual(yield* statusesOf(botId), [[10, "pending", 1]])
        yield* backend.push(11)
        yield* TestRuntime.until(() => false)
        assert.deepStrictEqual(backend.posts.map((p) => p.update_id), [10])
        yield* TestClock.adjust("1 second")
        yield* TestRuntime.until(() => backend.posts.length === 3)
        yield* TestRuntime.until(() => false)
        assert.deepStrictEqual(backend.posts.map((p) => p.update_id), [10, 10, 11])
        assert.deepStrictEqual(yield* statusesOf(botId), [[10, "delivered", 1], [11, "delivered", 0]])
      })
    )
  })
})
