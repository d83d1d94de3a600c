import { assert, describe, it } from "@effect/vitest"
import type { Bot } from "@botrelay/core"
import {
  BackendDelivery,
  Events,
  FloodControl,
  Lane,
  Outbox,
  OutboxStore,
  RouteSender,
  SentMessages,
  type Stores
} from "@botrelay/core"
import type { BotApi } from "@botrelay/telegram"
import { HttpExchange, TelegramClient, TelegramError } from "@botrelay/telegram"
import { Clock, Duration, Effect, Fiber, FiberSet, Layer, Logger, Option, Queue, Redacted, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// The outbox on Effect's TestClock, both kinds through the one runner: deliveries to backends and route sends
// through Telegram. Per-bot FIFO, backoff with jitter, retry_after, the deadline and dead letters, and lines
// that never hold each other. `attempts` counts the failed attempts.

const options: Outbox.Options = {
  ...Outbox.defaults,
  retryBase: Duration.seconds(1),
  retryCap: Duration.seconds(60),
  maxAge: Duration.minutes(10)
}

const botInput = (n: number) =>
  TestRuntime.botInput(`${n}:token`, {
    proxy_enabled: true,
    backend_url: `http://backend-${n}.example/hook`,
    secret_token: Redacted.make("s3cret")
  })

/** Telegram for route sends: forwardMessage answers or fails as `failures` says for the sending bot's token. */
const telegram = () => {
  const failures = new Map<string, TelegramError.TelegramApiError>()
  const forwarded: Array<{ readonly token: string; readonly message_id: number; readonly at: number }> = []
  const service = {
    forwardMessage: (token: Redacted.Redacted<string> | string, params: BotApi.ForwardMessageParams) =>
      Effect.gen(function*() {
        const at = yield* Clock.currentTimeMillis
        const value = typeof token === "string" ? token : Redacted.value(token)
        forwarded.push({ token: value, message_id: params.message_id, at })
        const failure = failures.get(value)
        if (failure !== undefined) return yield* failure
        return { message_id: 1000 + params.message_id, chat: { id: params.chat_id, type: "group" }, date: 0 }
      })
  } as unknown as TelegramClient.Service
  return { failures, forwarded, layer: Layer.succeed(TelegramClient.TelegramClient, service) }
}

const failure = (error_code: number, retry_after?: number) =>
  new TelegramError.TelegramApiError({
    method: "forwardMessage",
    error_code,
    description: "Bad Gateway",
    ...(retry_after === undefined ? {} : { retry_after })
  })

/** No pacing in the way: the tests are about the outbox. 429s reach it at once. */
const unpaced: FloodControl.Options = {
  perBot: { count: 1000, per: Duration.seconds(1), burst: 1000 },
  perPrivateChat: { count: 1000, per: Duration.seconds(1), burst: 1000 },
  perGroup: { count: 1000, per: Duration.seconds(1), burst: 1000 },
  retries429: 0
}

/** How the outbox reaches the backend: through the client's fiber form only, or its callbacks (`send`) too. */
type Client = "exchange" | "send"

/**
 * A backend whose answer each URL decides (200 unless told otherwise); it records what reached it, when (by
 * `clock`). With `send`, it answers a call made through the callbacks on the next microtask.
 */
const backend = (client: Client = "exchange", clock?: Clock.Clock) => {
  const statuses = new Map<string, number>()
  const received: Array<{ readonly url: string; readonly update_id: number; readonly at: number; readonly secret: string }> = []
  const answer = (request: HttpExchange.Request, at: number): HttpExchange.Answer => {
    const update_id = (JSON.parse(String(request.body)) as { update_id: number }).update_id
    received.push({ url: request.url, update_id, at, secret: request.headers["x-telegram-bot-api-secret-token"] ?? "" })
    return { status: statuses.get(request.url) ?? 200, headers: {}, body: new Uint8Array() }
  }
  /** Update ids whose calls get no answer. */
  const held = new Set<number>()
  const isHeld = (request: HttpExchange.Request) =>
    held.has((JSON.parse(String(request.body)) as { update_id: number }).update_id)
  const sends = { count: 0, cancelled: 0 }
  const service = HttpExchange.HttpExchange.of({
    exchange: (request) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) => {
        const answered = answer(request, at)
        return isHeld(request) ? Effect.never : Effect.succeed(answered)
      }),
    send: client === "exchange" ? undefined : (request, callback) => {
      let cancelled = false
      sends.count++
      queueMicrotask(() => {
        const answered = answer(request, clock!.unsafeCurrentTimeMillis())
        if (!cancelled && !isHeld(request)) callback(undefined, answered)
      })
      return () => {
        cancelled = true
        sends.cancelled++
      }
    }
  })
  return { statuses, received, held, sends, layer: Layer.succeed(HttpExchange.HttpExchange, service) }
}

const setup = Effect.gen(function*() {
  const storage = yield* TestRuntime.store
  const deliveries = (yield* BackendDelivery.make(options)).kind
  const sends = (yield* RouteSender.make).kind
  const a = yield* storage.insertBot(botInput(1))
  const b = yield* storage.insertBot(botInput(2))
  const c = yield* storage.insertBot(botInput(3))
  const known = new Map([a, b, c].map((bot) => [bot.id, bot]))
  const bots = (id: number) => known.get(id)
  /** Queues, for each message id, an update of the bot with a delivery and route sends by `senders`. */
  const queueWith = (bot: Bot.StoredBot, senders: ReadonlyArray<Bot.StoredBot>, ...ids: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const received_at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const updates = ids.map((update_id) => {
        const message_id = update_id
        const message = { message_id, chat: { id: -100, type: "group" }, date: 0, text: "hi" }
        return { update_id, message_id, payload: JSON.stringify({ update_id, message }), received_at }
      })
      yield* storage.commitUpdates(bot.id, updates, Math.max(...updates.map((u) => u.update_id)) + 1)
      yield* storage.completeUpdates(updates.map((u) => ({
        bot_id: bot.id,
        update_id: u.update_id,
        messages: [],
        deliveries: [{ bot_id: bot.id, update_id: u.update_id, url: bot.backend_url, payload: u.payload, created_at: received_at }],
        sends: senders.map((sender) => ({
          bot_id: sender.id,
          kind: "forward" as const,
          route_id: 1,
          source_bot_id: bot.id,
          update_id: u.update_id,
          from_chat_id: -100,
          message_id: u.message_id,
          chat_id: -200,
          reply_to_message_id: 0,
          hop: 1,
          created_at: received_at
        }))
      })))
    })
  /** Queues deliveries of these update ids for the bot, as processing an update does. */
  const queue = (bot: Bot.StoredBot, ...ids: ReadonlyArray<number>) => queueWith(bot, [], ...ids)
  const deliver = (bot: Bot.StoredBot) => Outbox.runLine(deliveries, options, bot.id, bots)
  const send = (bot: Bot.StoredBot) => Outbox.runLine(sends, options, bot.id, bots)
  const statuses = (bot: Bot.StoredBot) =>
    Effect.map(
      storage.listDeliveries({ bot_id: bot.id, limit: 100 }),
      (list) => list.map((d) => [d.update_id, d.status, d.attempts] as const).reverse()
    )
  const sendStatuses = (bot: Bot.StoredBot) =>
    Effect.map(
      storage.listSends({ bot_id: bot.id, limit: 100 }),
      (list) => list.map((s) => [s.message_id, s.status, s.attempts] as const).reverse()
    )
  /** Runs the bot's lanes, both kinds, for `time` on the TestClock. */
  const work = (bot: Bot.StoredBot, time: Duration.DurationInput) =>
    Effect.scoped(Effect.gen(function*() {
      const fork = yield* FiberSet.makeRuntime()
      Lane.make(() => Outbox.runLine(deliveries, options, bot.id, bots), Effect.void, fork).wake()
      Lane.make(() => Outbox.runLine(sends, options, bot.id, bots), Effect.void, fork).wake()
      yield* TestClock.adjust(time)
    }))
  return { storage, a, b, c, known, queue, queueWith, deliver, send, statuses, sendStatuses, work }
})

const run = <A, E>(body: (http: ReturnType<typeof backend>, tg: ReturnType<typeof telegram>) => Effect.Effect<
    A,
    E,
    | Stores.Stores
    | Events.Events
    | SentMessages.SentMessages
    | FloodControl.FloodControl
    | HttpExchange.HttpExchange
    | TelegramClient.TelegramClient
  >, client: Client = "exchange") =>
  Effect.clockWith((clock) => {
    const http = backend(client, clock)
    const tg = telegram()
    return body(http, tg).pipe(
      Effect.provide(Layer.mergeAll(TestRuntime.stores, FloodControl.layer(unpaced), http.layer, tg.layer)),
      Effect.provide(Logger.remove(Logger.defaultLogger))
    )
  })

/** The waits the line asks for, attempt after attempt, letting each pass. */
const waitsOf = (line: Effect.Effect<Option.Option<Duration.Duration>>, times: number) =>
  Effect.gen(function*() {
    const waits: Array<number> = []
    for (let attempt = 0; attempt < times; attempt++) {
      const wait = Option.getOrThrow(yield* line)
      waits.push(Duration.toMillis(wait))
      yield* TestClock.adjust(wait)
    }
    return waits
  })

/** Each wait lies in the upper half of base · 2^attempt, capped. */
const assertBackoff = (waits: ReadonlyArray<number>) => {
  for (const [attempt, wait] of waits.entries()) {
    const ceiling = Math.min(60_000, 1_000 * 2 ** attempt)
    assert.isAtLeast(wait, ceiling / 2, `attempt ${attempt}`)
    assert.isAtMost(wait, ceiling, `attempt ${attempt}`)
  }
}

for (const client of ["exchange", "send"] as const) {
describe(`deliveries on a TestClock, the backend called through the client's ${client}`, () => {
  it.effect("delivers a bot's updates in order, with the secret header", () =>
    run((http) =>
      Effect.gen(function*() {
        const { a, deliver, queue, statuses } = yield* setup
        yield* queue(a, 10, 11, 12)
        assert.isTrue(Option.isNone(yield* deliver(a)))
        assert.deepStrictEqual(http.received.map((r) => r.update_id), [10, 11, 12])
        assert.isTrue(http.received.every((r) => r.secret === "s3cret" && r.url === a.backend_url))
        assert.deepStrictEqual(yield* statuses(a), [[10, "delivered", 0], [11, "delivered", 0], [12, "delivered", 0]])
        assert.strictEqual(http.sends.count, client === "send" ? 3 : 0)
      }), client))

  it.effect("a line stopped while a delivery is under way keeps what was delivered; the cut one goes again", () =>
    run((http) =>
      Effect.gen(function*() {
        const { a, deliver, queue, statuses } = yield* setup
        yield* queue(a, 1, 2, 3)
        http.held.add(2)
        const line = yield* Effect.fork(deliver(a))
        while (http.received.length < 2) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
        yield* Fiber.interrupt(line)
        assert.strictEqual(http.sends.cancelled, client === "send" ? 1 : 0)
        assert.deepStrictEqual(yield* statuses(a), [[1, "delivered", 0], [2, "pending", 0], [3, "pending", 0]])
        http.held.clear()
        assert.isTrue(Option.isNone(yield* deliver(a)))
        assert.deepStrictEqual(http.received.map((r) => r.update_id), [1, 2, 2, 3])
        assert.deepStrictEqual(yield* statuses(a), [[1, "delivered", 0], [2, "delivered", 0], [3, "delivered", 0]])
      }), client))

  it.effect("a failing head holds the bot's line, retried with growing waits; another bot goes on", () =>
    run((http) =>
      Effect.gen(function*() {
        const { a, b, deliver, queue, statuses } = yield* setup
        http.statuses.set(a.backend_url, 503)
        yield* queue(a, 1, 2)
        yield* queue(b, 7)
        assertBackoff(yield* waitsOf(deliver(a), 4))
        assert.deepStrictEqual(http.received.filter((r) => r.url === a.backend_url).map((r) => r.update_id), [1, 1, 1, 1])
        assert.deepStrictEqual(yield* statuses(a), [[1, "pending", 4], [2, "pending", 0]])
        assert.isTrue(Option.isNone(yield* deliver(b)))
        assert.deepStrictEqual(yield* statuses(b), [[7, "delivered", 0]])

        http.statuses.delete(a.backend_url)
        assert.isTrue(Option.isNone(yield* deliver(a)))
        assert.deepStrictEqual(yield* statuses(a), [[1, "delivered", 4], [2, "delivered", 0]])
      }), client))

  it.effect("tells the bus of every attempt after a failure with the delivery as stored, not of first-time successes", () =>
    run((http) =>
      Effect.scoped(Effect.gen(function*() {
        const { a, deliver, queue } = yield* setup
        const heard = yield* (yield* Events.Events).subscribe("DeliveryChanged")
        const stored = yield* OutboxStore.OutboxStore
        yield* queue(a, 1)
        assert.isTrue(Option.isNone(yield* deliver(a)))
        assert.strictEqual((yield* stored.listDeliveries({ bot_id: a.id, limit: 10 }))[0]?.status, "delivered")
        http.statuses.set(a.backend_url, 503)
        yield* queue(a, 2)
        yield* TestClock.adjust(Option.getOrThrow(yield* deliver(a)))
        http.statuses.delete(a.backend_url)
        assert.isTrue(Option.isNone(yield* deliver(a)))
        const told = [...yield* Queue.takeAll(heard)].map((e) => e.delivery)
        assert.deepStrictEqual(told.map((d) => [d.update_id, d.status, d.attempts, d.last_error]), [
          [2, "pending", 1, "HTTP 503"],
          [2, "delivered", 1, "HTTP 503"]
        ])
        assert.deepStrictEqual(
          told.at(-1),
          (yield* stored.listDeliveries({ bot_id: a.id, limit: 10 })).find((d) => d.update_id === 2)
        )
      })), client))

  it.effect("answers before their time are not retried early", () =>
    run((http) =>
      Effect.gen(function*() {
        const { a, deliver, queue } = yield* setup
        http.statuses.set(a.backend_url, 500)
        yield* queue(a, 1)
        const wait = Option.getOrThrow(yield* deliver(a))
        const again = Option.getOrThrow(yield* deliver(a))
        assert.isAtMost(Duration.toMillis(again), Duration.toMillis(wait))
        assert.strictEqual(http.received.length, 1)
      }), client))

  it.effect("dead-letters the head once it is older than maxAge, and the next one goes", () =>
    run((http) =>
      Effect.gen(function*() {
        const { a, deliver, queue, statuses } = yield* setup
        http.statuses.set(a.backend_url, 502)
        yield* queue(a, 1)
        yield* TestClock.adjust(Duration.minutes(9))
        yield* queue(a, 2)
        yield* deliver(a)
        assert.deepStrictEqual((yield* statuses(a))[0], [1, "pending", 1])
        yield* TestClock.adjust(Duration.minutes(1))
        http.statuses.set(a.backend_url, 502)
        const next = yield* deliver(a)
        assert.deepStrictEqual((yield* statuses(a))[0], [1, "dead", 2])
        assert.isTrue(Option.isSome(next), "update 2 failed too and waits")
        http.statuses.delete(a.backend_url)
        yield* TestClock.adjust(Option.getOrThrow(next))
        assert.isTrue(Option.isNone(yield* deliver(a)))
        assert.deepStrictEqual(yield* statuses(a), [[1, "dead", 2], [2, "delivered", 1]])
      }), client))
})
}

describe("route sends on a TestClock, through the same runner", () => {
  it.effect("a bot's sends go in order; a failing head holds its line with growing, jittered waits; another bot goes on", () =>
    run((_, tg) =>
      Effect.gen(function*() {
        const { a, b, c, queueWith, send, sendStatuses } = yield* setup
        tg.failures.set(Redacted.value(b.token), failure(502))
        yield* queueWith(a, [b, c], 1, 2, 3)
        assert.isTrue(Option.isNone(yield* send(c)))
        assert.deepStrictEqual(yield* sendStatuses(c), [[1, "sent", 1], [2, "sent", 1], [3, "sent", 1]])

        assertBackoff(yield* waitsOf(send(b), 5))
        const byB = tg.forwarded.filter((f) => f.token === Redacted.value(b.token))
        assert.deepStrictEqual(byB.map((f) => f.message_id), [1, 1, 1, 1, 1])
        assert.deepStrictEqual(yield* sendStatuses(b), [[1, "pending", 5], [2, "pending", 0], [3, "pending", 0]])

        tg.failures.delete(Redacted.value(b.token))
        assert.isTrue(Option.isNone(yield* send(b)))
        assert.deepStrictEqual(
          tg.forwarded.filter((f) => f.token === Redacted.value(b.token)).map((f) => f.message_id),
          [1, 1, 1, 1, 1, 1, 2, 3]
        )
        assert.deepStrictEqual(yield* sendStatuses(b), [[1, "sent", 6], [2, "sent", 1], [3, "sent", 1]])
      })))

  it.effect("Telegram's retry_after wins over a shorter backoff", () =>
    run((_, tg) =>
      Effect.gen(function*() {
        const { a, b, queueWith, send } = yield* setup
        tg.failures.set(Redacted.value(b.token), failure(429, 90))
        yield* queueWith(a, [b], 1)
        assert.strictEqual(Duration.toMillis(Option.getOrThrow(yield* send(b))), 90_000)
        yield* TestClock.adjust(Duration.seconds(89))
        assert.strictEqual(Duration.toMillis(Option.getOrThrow(yield* send(b))), 1_000, "not retried early")
        assert.strictEqual(tg.forwarded.length, 1)
      })))

  it.effect("dead-letters the head past maxAge, and the next one goes", () =>
    run((_, tg) =>
      Effect.gen(function*() {
        const { a, b, queueWith, send, sendStatuses } = yield* setup
        tg.failures.set(Redacted.value(b.token), failure(502))
        yield* queueWith(a, [b], 1)
        yield* TestClock.adjust(Duration.minutes(9))
        yield* queueWith(a, [b], 2)
        yield* send(b)
        assert.deepStrictEqual(yield* sendStatuses(b), [[1, "pending", 1], [2, "pending", 0]])
        yield* TestClock.adjust(Duration.minutes(1))
        const left = yield* send(b)
        assert.deepStrictEqual((yield* sendStatuses(b))[0], [1, "dead", 2])
        assert.isTrue(Option.isSome(left), "send 2 failed too and waits")
        tg.failures.delete(Redacted.value(b.token))
        yield* TestClock.adjust(Option.getOrThrow(left))
        assert.isTrue(Option.isNone(yield* send(b)))
        assert.deepStrictEqual(yield* sendStatuses(b), [[1, "dead", 2], [2, "sent", 2]])
      })))

  it.effect("a refused send is dead at once; a disabled sender's line waits", () =>
    run((_, tg) =>
      Effect.gen(function*() {
        const { a, b, known, queueWith, send, sendStatuses } = yield* setup
        tg.failures.set(Redacted.value(b.token), failure(403))
        yield* queueWith(a, [b], 1)
        known.set(b.id, { ...b, disabled: true })
        assert.isTrue(Option.isNone(yield* send(b)))
        assert.deepStrictEqual(yield* sendStatuses(b), [[1, "pending", 0]])
        known.set(b.id, b)
        assert.isTrue(Option.isNone(yield* send(b)))
        assert.deepStrictEqual(yield* sendStatuses(b), [[1, "dead", 1]])
      })))

  it.effect("a failing delivery line never holds the same bot's route sends, nor the reverse", () =>
    run((http, tg) =>
      Effect.gen(function*() {
        const { a, b, queueWith, sendStatuses, statuses, work } = yield* setup
        http.statuses.set(a.backend_url, 503)
        tg.failures.set(Redacted.value(b.token), failure(502))
        yield* queueWith(a, [a], 1, 2)
        yield* queueWith(b, [b], 3, 4)
        yield* work(a, Duration.seconds(3))
        yield* work(b, Duration.seconds(3))
        assert.deepStrictEqual((yield* statuses(a)).map(([id, status]) => [id, status]), [[1, "pending"], [2, "pending"]])
        assert.deepStrictEqual(yield* sendStatuses(a), [[1, "sent", 1], [2, "sent", 1]])
        assert.deepStrictEqual(yield* statuses(b), [[3, "delivered", 0], [4, "delivered", 0]])
        assert.deepStrictEqual((yield* sendStatuses(b)).map(([id, status]) => [id, status]), [[3, "pending"], [4, "pending"]])
      })))
})
