import { assert, describe, it } from "@effect/vitest"
import type { Bot } from "@botrelay/core"
import { BotStore, Events, Inbox, Ingress, InboxStore, Ownership, type Stores } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { TelegramClient, TelegramError } from "@botrelay/telegram"
import { Clock, Duration, Effect, Fiber, Layer, Logger, Option, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// The poller on Effect's TestClock: how long it waits after each kind of failure, with no real time.

const botInput = TestRuntime.botInput("7:token", { manage_enabled: true })

const options: Ingress.Options = {
  ...Ingress.defaults,
  retryBase: Duration.seconds(1),
  retryCap: Duration.seconds(30),
  unauthorizedWait: Duration.minutes(5)
}

const apiError = (error_code: number, description: string, retry_after?: number) =>
  new TelegramError.TelegramApiError({
    method: "getUpdates",
    error_code,
    description,
    ...(retry_after === undefined ? {} : { retry_after })
  })

const unreachable = new TelegramError.TelegramTransportError({
  reason: "Transport",
  method: "getUpdates",
  description: "ECONNREFUSED"
})

type Answer = TelegramError.TelegramError | ReadonlyArray<{ readonly update_id: number }>

/**
 * A Telegram whose getUpdates answers from a script, one entry a call, then holds every later call
 * (as a long poll with nothing to give does);
 * it records when each getUpdates and getMe came (TestClock milliseconds), the offsets asked for and whether the call
 * sent every update type as `allowed_updates`.
 */
const scripted = (script: ReadonlyArray<Answer>) => {
  const polls: Array<{ readonly at: number; readonly offset: number | undefined; readonly announces: boolean }> = []
  const identities: Array<number> = []
  let next = 0
  const service = {
    getMe: () =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        identities.push(at)
        return { id: 7, is_bot: true, first_name: "Bot", username: "seven_bot" }
      }),
    deleteWebhook: () => Effect.succeed(true as const),
    getUpdates: (
      _token: unknown,
      params: { readonly offset?: number | undefined; readonly allowed_updates?: ReadonlyArray<string> }
    ) =>
      Effect.gen(function*() {
        polls.push({
          at: yield* Clock.currentTimeMillis,
          offset: params.offset,
          announces: params.allowed_updates === Ingress.allUpdateTypes
        })
        const answer = script[next++]
        if (answer === undefined) return yield* Effect.never
        if (answer instanceof TelegramError.TelegramApiError || answer instanceof TelegramError.TelegramTransportError) {
          return yield* Effect.fail(answer)
        }
        return answer.map((u) => ({ update_id: u.update_id, payload: `{"update_id":${u.update_id},"message":{}}` }))
      })
  } as unknown as TelegramClient.Service
  /** The offset of each call of `pollUpdates` (the client's own loop of empty answers). */
  const loops: Array<number | undefined> = []
  const looping = TelegramClient.pollingWith(service.getUpdates)
  return {
    polls,
    identities,
    loops,
    layer: Layer.succeed(TelegramClient.TelegramClient, {
      ...service,
      pollUpdates: (token, params, emptied) => {
        loops.push(params.offset)
        return looping(token, params, emptied)
      }
    })
  }
}

const run = <A, E>(
  script: ReadonlyArray<Answer>,
  body: (t: ReturnType<typeof scripted>, bot: Bot.StoredBot) => Effect.Effect<A, E, Stores.Stores | Events.Events>,
  tenure?: Ownership.Tenure
) => {
  const telegram = scripted(script)
  return Effect.gen(function*() {
    const bot = yield* Effect.flatMap(BotStore.BotStore, (bots) => bots.insertBot(botInput))
    const poller = yield* Effect.fork(Ingress.poll(bot, Effect.void, options, tenure))
    const result = yield* body(telegram, bot)
    yield* Fiber.interrupt(poller)
    return result
  }).pipe(
    Effect.provide(
      Inbox.layer.pipe(
        Layer.provideMerge(Layer.mergeAll(SqliteStores.layer({ filename: ":memory:" }), Events.layer, Ownership.everything, telegram.layer))
      )
    ),
    Effect.provide(Logger.remove(Logger.defaultLogger))
  )
}

/** Lets the poller run until it has made `count` getUpdates calls (or gives up). */
const until = (polls: ReadonlyArray<unknown>, count: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && polls.length < count; i++) yield* Effect.yieldNow()
  })

const lastError = (botId: number) =>
  Effect.flatMap(BotStore.BotStore, (bots) => bots.findBot(botId)).pipe(
    Effect.map((bot) => Option.getOrThrow(bot).last_error)
  )

describe("Ingress.poll on a TestClock", () => {
  it.effect("sends allowed_updates until a getUpdates succeeds, and again after a failure", () =>
    run([[{ update_id: 1 }], [], unreachable, [], []], ({ polls }) =>
      Effect.gen(function*() {
        yield* until(polls, 3)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* until(polls, 6)
        assert.deepStrictEqual(polls.map((p) => p.announces), [true, false, false, true, false, false])
      })))

  it.effect("empty answers after the first are the client's loop's, unless the bot runs under a lease", () =>
    Effect.gen(function*() {
      yield* run([[], [], [], []], ({ loops, polls }) =>
        Effect.gen(function*() {
          yield* until(polls, 5)
          assert.strictEqual(polls.length, 5)
          assert.deepStrictEqual(loops, [0])
        }))
      let checks = 0
      const tenure: Ownership.Tenure = {
        fence: { bot_id: 1, instance_id: "i-00000001", epoch: 1 },
        holds: Effect.sync(() => (checks++, true)),
        holdsAt: () => true
      }
      yield* run([[], [], [], []], ({ loops, polls }) =>
        Effect.gen(function*() {
          yield* until(polls, 5)
          assert.strictEqual(polls.length, 5)
          assert.deepStrictEqual(loops, [])
          assert.strictEqual(checks, 5)
        }), tenure)
    }))

  it.effect("waits exactly retry_after on 429, and says so in last_error", () =>
    run([apiError(429, "Too Many Requests: retry after 7", 7)], ({ polls }, bot) =>
      Effect.gen(function*() {
        yield* until(polls, 1)
        assert.strictEqual(polls.length, 1)
        yield* TestClock.adjust(Duration.millis(6_999))
        yield* until(polls, 2)
        assert.strictEqual(polls.length, 1)
        assert.match(yield* lastError(bot.id), /^rate limited by Telegram/)
        yield* TestClock.adjust(Duration.millis(1))
        yield* until(polls, 2)
        assert.deepStrictEqual(polls.map((p) => p.at), [0, 7_000])
      })))

  it.effect("on 401 marks the bot unauthorized and tries again only after the slow wait, identifying itself first", () =>
    run([apiError(401, "Unauthorized")], ({ identities, polls }, bot) =>
      Effect.gen(function*() {
        yield* until(polls, 1)
        assert.strictEqual(yield* lastError(bot.id), "unauthorized: Telegram rejected the token")
        yield* TestClock.adjust(Duration.minutes(4))
        yield* until(polls, 2)
        assert.strictEqual(polls.length, 1)
        yield* TestClock.adjust(Duration.minutes(1))
        yield* until(polls, 2)
        assert.deepStrictEqual(polls.map((p) => p.at), [0, 300_000])
        assert.deepStrictEqual(identities, [0, 300_000])
      })))

  it.effect("backs off exponentially with jitter when Telegram cannot be reached, up to the cap", () =>
    run(Array.from({ length: 8 }, () => unreachable), ({ polls }, bot) =>
      Effect.gen(function*() {
        yield* until(polls, 1)
        for (let i = 1; i < 8; i++) {
          yield* TestClock.adjust(Duration.seconds(30))
          yield* until(polls, i + 1)
        }
        const gaps = polls.slice(1).map((p, i) => p.at - polls[i]!.at)
        for (const [attempt, gap] of gaps.entries()) {
          const ceiling = Math.min(30_000, 1_000 * 2 ** attempt)
          assert.isAtLeast(gap, ceiling / 2, `attempt ${attempt}`)
          assert.isAtMost(gap, ceiling, `attempt ${attempt}`)
        }
        assert.match(yield* lastError(bot.id), /^Telegram unreachable: ECONNREFUSED/)
      })))

  it.effect("reports a 409 conflict and waits longer than after a plain failure, never looping hot", () =>
    run([apiError(409, "Conflict: terminated by other getUpdates request")], ({ polls }, bot) =>
      Effect.gen(function*() {
        yield* until(polls, 1)
        assert.match(yield* lastError(bot.id), /^conflict: Conflict: terminated/)
        yield* TestClock.adjust(Duration.millis(1_999))
        yield* until(polls, 2)
        assert.strictEqual(polls.length, 1, "at least 2 s after the first conflict")
        yield* TestClock.adjust(Duration.seconds(2))
        yield* until(polls, 2)
        assert.strictEqual(polls.length, 2)
      })))

  it.effect("commits each batch with the next offset before asking again, and clears last_error", () =>
    run([unreachable, [{ update_id: 41 }, { update_id: 42 }]], ({ polls }, bot) =>
      Effect.gen(function*() {
        yield* until(polls, 1)
        yield* TestClock.adjust(Duration.seconds(1))
        yield* until(polls, 3)
        assert.deepStrictEqual(polls.map((p) => p.offset), [0, 0, 43])
        const inbox = yield* InboxStore.InboxStore
        assert.strictEqual(yield* inbox.ingressOffset(bot.id), 43)
        assert.deepStrictEqual((yield* inbox.pendingUpdates(bot.id, 10)).map((u) => u.update_id), [41, 42])
        assert.strictEqual(yield* lastError(bot.id), "")
      })))
})

describe("Ingress.poll's backlog on a TestClock", () => {
  /** A Telegram that answers from a script, then as an idle long poll: nothing after 30 s. */
  const longPolling = (script: ReadonlyArray<ReadonlyArray<number>>) => {
    const polls: Array<number> = []
    let next = 0
    const service = {
      getMe: () => Effect.succeed({ id: 7, is_bot: true, first_name: "Bot", username: "seven_bot" }),
      getUpdates: () =>
        Effect.gen(function*() {
          polls.push(yield* Clock.currentTimeMillis)
          const ids = script[next++]
          if (ids === undefined) return yield* Effect.as(Effect.sleep(Duration.seconds(30)), [])
          return ids.map((id) => ({ update_id: id, payload: `{"update_id":${id},"message":{}}` }))
        })
    } as unknown as TelegramClient.Service
    return {
      polls,
      layer: Layer.succeed(TelegramClient.TelegramClient, {
        ...service,
        pollUpdates: TelegramClient.pollingWith(service.getUpdates)
      })
    }
  }

  it.effect("stops polling while the backlog is full and counts it only after a batch came", () => {
    const telegram = longPolling([[1, 2]])
    let counted = 0
    const counting = Layer.effect(
      InboxStore.InboxStore,
      Effect.map(InboxStore.InboxStore, (store) => ({
        ...store,
        backlog: (botId: number) => Effect.zipRight(Effect.sync(() => counted++), store.backlog(botId))
      }))
    )
    return Effect.gen(function*() {
      const bot = yield* Effect.flatMap(BotStore.BotStore, (bots) => bots.insertBot(botInput))
      yield* Effect.fork(Ingress.poll(bot, Effect.void, { ...options, maxBacklog: 2 }))
      yield* TestRuntime.until(() => telegram.polls.length >= 2)
      // counted before the first poll; the batch came within 100 ms, so the second poll went without a count
      assert.deepStrictEqual(telegram.polls, [0, 0])
      assert.strictEqual(counted, 1)
      yield* TestClock.adjust(Duration.seconds(60))
      yield* TestRuntime.followed
      // the idle poll returned after 30 s: the backlog (2 unprocessed) is full, so no poll since, counting each 100 ms
      assert.deepStrictEqual(telegram.polls, [0, 0])
      assert.isAbove(counted, 100)
      const inbox = yield* InboxStore.InboxStore
      const pending = yield* inbox.pendingUpdates(bot.id, 10)
      yield* inbox.completeUpdates(pending.map((u) => ({ bot_id: u.bot_id, update_id: u.update_id, messages: [], deliveries: [] })))
      yield* TestClock.adjust(Duration.millis(100))
      yield* TestRuntime.until(() => telegram.polls.length >= 3)
      assert.strictEqual(telegram.polls.length, 3)
      // nothing came since the count that let it poll: idle rounds count nothing
      const before = counted
      yield* TestClock.adjust(Duration.minutes(5))
      yield* TestRuntime.followed
      assert.strictEqual(telegram.polls.length, 13)
      assert.strictEqual(counted, before)
    }).pipe(
      Effect.provide(
        Inbox.layer.pipe(
          Layer.provideMerge(counting),
          Layer.provideMerge(
            Layer.mergeAll(SqliteStores.layer({ filename: ":memory:" }), Events.layer, Ownership.everything, telegram.layer)
          )
        )
      ),
      Effect.provide(Logger.remove(Logger.defaultLogger))
    )
  })
})
