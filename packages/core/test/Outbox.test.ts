import { assert, describe, it } from "@effect/vitest"
import type { Bot } from "@botrelay/core"
import { BotStore, FloodControl, InboxStore, Outbox, OutboxStore, type Stores } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { HttpExchange, TelegramClient } from "@botrelay/telegram"
import { Clock, Duration, Effect, Layer, Logger, Option, Redacted, TestClock } from "effect"

// Forwarding to backends on Effect's TestClock: per-bot FIFO, backoff, the deadline and dead letters.
// `attempts` counts the failed attempts.

const options: Outbox.Options = {
  ...Outbox.defaults,
  retryBase: Duration.seconds(1),
  retryCap: Duration.seconds(60),
  maxAge: Duration.minutes(10)
}

const botInput = (n: number): Bot.BotRecordInput => ({
  token: Redacted.make(`${n}:token`),
  name: "",
  source: "web",
  manage_enabled: false,
  proxy_enabled: true,
  backend_url: `http://backend-${n}.example/hook`,
  secret_token: Redacted.make("s3cret"),
  long_poll_enabled: false,
  description: "",
  created_at: "2025-01-01T00:00:00.000Z"
})

/** A backend whose answer each URL decides (200 unless told otherwise); it records what reached it, when. */
const backend = () => {
  const statuses = new Map<string, number>()
  const received: Array<{ readonly url: string; readonly update_id: number; readonly at: number; readonly secret: string }> = []
  const service = HttpExchange.HttpExchange.of({
    exchange: (request) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        const update_id = (JSON.parse(String(request.body)) as { update_id: number }).update_id
        received.push({ url: request.url, update_id, at, secret: request.headers["x-telegram-bot-api-secret-token"] ?? "" })
        return { status: statuses.get(request.url) ?? 200, headers: {}, body: new Uint8Array() }
      })
  })
  return { statuses, received, layer: Layer.succeed(HttpExchange.HttpExchange, service) }
}

const setup = Effect.gen(function*() {
  const storage = { ...yield* BotStore.BotStore, ...yield* InboxStore.InboxStore, ...yield* OutboxStore.OutboxStore }
  const outbox = yield* Outbox.make(options)
  const a = yield* storage.insertBot(botInput(1))
  const b = yield* storage.insertBot(botInput(2))
  /** Queues deliveries of these update ids for the bot, as processing an update does. */
  const queue = (bot: Bot.StoredBot, ...ids: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      const received_at = new Date(yield* Clock.currentTimeMillis).toISOString()
      const updates = ids.map((update_id) => ({ update_id, payload: `{"update_id":${update_id}}`, received_at }))
      yield* storage.commitUpdates(bot.id, updates, ids.at(-1)! + 1)
      yield* storage.completeUpdates(updates.map((u) => ({
        bot_id: bot.id,
        update_id: u.update_id,
        messages: [],
        deliveries: [{ bot_id: bot.id, update_id: u.update_id, url: bot.backend_url, payload: u.payload, created_at: received_at }]
      })))
    })
  const deliver = (bot: Bot.StoredBot) => outbox.deliverDue(bot.id, () => bot)
  const statuses = (bot: Bot.StoredBot) =>
    Effect.map(
      storage.listDeliveries({ bot_id: bot.id, limit: 100 }),
      (list) => list.map((d) => [d.update_id, d.status, d.attempts] as const).reverse()
    )
  return { storage, a, b, queue, deliver, statuses }
})

const run = <A, E>(body: (http: ReturnType<typeof backend>) => Effect.Effect<
    A,
    E,
    Stores.Stores | FloodControl.FloodControl | HttpExchange.HttpExchange | TelegramClient.TelegramClient
  >) => {
  const http = backend()
  return body(http).pipe(
    Effect.provide(Layer.mergeAll(
      SqliteStores.layer({ filename: ":memory:" }),
      FloodControl.layer(),
      http.layer,
      Layer.succeed(TelegramClient.TelegramClient, {} as TelegramClient.Service)
    )),
    Effect.provide(Logger.remove(Logger.defaultLogger))
  )
}

describe("Outbox on a TestClock", () => {
  it.effect("delivers a bot's updates in order, with the secret header", () =>
    run((http) =>
      Effect.gen(function*() {
        const { a, deliver, queue, statuses } = yield* setup
        yield* queue(a, 10, 11, 12)
        assert.isTrue(Option.isNone(yield* deliver(a)))
        assert.deepStrictEqual(http.received.map((r) => r.update_id), [10, 11, 12])
        assert.isTrue(http.received.every((r) => r.secret === "s3cret" && r.url === a.backend_url))
        assert.deepStrictEqual(yield* statuses(a), [[10, "delivered", 0], [11, "delivered", 0], [12, "delivered", 0]])
      })))

  it.effect("a failing head holds the bot's line, retried with growing waits; another bot goes on", () =>
    run((http) =>
      Effect.gen(function*() {
        const { a, b, deliver, queue, statuses } = yield* setup
        http.statuses.set(a.backend_url, 503)
        yield* queue(a, 1, 2)
        yield* queue(b, 7)
        const waits: Array<number> = []
        for (let attempt = 0; attempt < 4; attempt++) {
          const wait = yield* deliver(a)
          assert.isTrue(Option.isSome(wait))
          waits.push(Duration.toMillis(Option.getOrThrow(wait)))
          yield* TestClock.adjust(Option.getOrThrow(wait))
        }
        for (const [attempt, wait] of waits.entries()) {
          const ceiling = Math.min(60_000, 1_000 * 2 ** attempt)
          assert.isAtLeast(wait, ceiling / 2)
          assert.isAtMost(wait, ceiling)
        }
        assert.deepStrictEqual(http.received.filter((r) => r.url === a.backend_url).map((r) => r.update_id), [1, 1, 1, 1])
        assert.deepStrictEqual(yield* statuses(a), [[1, "pending", 4], [2, "pending", 0]])
        assert.isTrue(Option.isNone(yield* deliver(b)))
        assert.deepStrictEqual(yield* statuses(b), [[7, "delivered", 0]])

        http.statuses.delete(a.backend_url)
        assert.isTrue(Option.isNone(yield* deliver(a)))
        assert.deepStrictEqual(yield* statuses(a), [[1, "delivered", 4], [2, "delivered", 0]])
      })))

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
      })))

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
      })))
})
