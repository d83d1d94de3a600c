import type { TelegramError } from "@botrelay/telegram"
import { BotApi, TelegramClient } from "@botrelay/telegram"
import { Duration, Effect, FiberRef, HashMap, Option } from "effect"
import type { LeaseLost, StorageError } from "../domain/Errors.js"
import type { StoredBot } from "../domain/Bot.js"
import * as BotStatus from "./BotStatus.js"
import { Event, Events, publish } from "./Events.js"
import { Inbox } from "./Inbox.js"
import { IngressPolls } from "./IngressPolls.js"
import { Ownership, type Tenure } from "./Ownership.js"
import type * as Pipeline from "./Pipeline.js"
import * as Retry from "./Retry.js"

/** Every update type, so backends get all Telegram sends, chat_member and reactions included. */
export const allUpdateTypes: ReadonlyArray<string> = BotApi.updateTypes

/** How a poller behaves. */
export interface Options {
  /** The long-poll `timeout` sent to getUpdates, in seconds. */
  readonly pollSeconds: number
  /** Waits after transport errors and Telegram 5xx: from `base`, doubling, up to `cap`. */
  readonly retryBase: Duration.DurationInput
  readonly retryCap: Duration.DurationInput
  /** How long to wait after Telegram rejects the token (401) before trying again. */
  readonly unauthorizedWait: Duration.DurationInput
  /**
   * No getUpdates while the bot's unprocessed updates and pending deliveries reach this: Telegram
   * keeps the rest, so a slow backend bounds the bot's backlog here instead of growing it. The backlog is
   * counted at most every 100 ms, and only after a batch came since the last count: an idle bot's rounds
   * count nothing.
   */
  readonly maxBacklog: number
  /**
   * After a batch, how long polling waits at most for the bot's processing and deliveries to settle:
   * an idle bot polls again at once, a busy one gathers updates into larger, cheaper batches.
   */
  readonly settleTimeout: Duration.DurationInput
}

/**
 * Defaults: 50 s long polls (the longest Telegram holds one: an idle bot costs a round every 50 s, not every
 * 30); back off 1 s to 30 s; retry a rejected token every 5 minutes; backlog 300 (three full batches);
 * wait up to 50 ms for a batch to settle.
 */
export const defaults: Options = {
  pollSeconds: 50,
  retryBase: Duration.seconds(1),
  retryCap: Duration.seconds(30),
  unauthorizedWait: Duration.minutes(5),
  maxBacklog: 300,
  settleTimeout: Duration.millis(50)
}

/** How often the backlog is counted at most, per bot, and how long polling pauses when it is full. */
const backlogInterval = 100

const webhookActive = (e: TelegramError.TelegramError) =>
  e._tag === "TelegramApiError" && e.error_code === 409 && /webhook/i.test(e.description)

/** What a failed getUpdates means: the `last_error` to show and how long to wait (a conflict backs off more). */
export const assess = (
  e: TelegramError.TelegramError,
  failures: number,
  options: Options
): Effect.Effect<{ readonly lastError: string; readonly wait: Duration.Duration }> => {
  const conflict = e._tag === "TelegramApiError" && e.error_code === 409
  return Effect.map(Retry.delay(conflict ? failures + 2 : failures, options.retryBase, options.retryCap), (backoff) => {
    if (e._tag === "TelegramTransportError") {
      return { lastError: `Telegram unreachable: ${e.description}`, wait: backoff }
    }
    switch (e.error_code) {
      case 429:
        return {
          lastError: `rate limited by Telegram: ${e.description}`,
          wait: e.retry_after === undefined ? backoff : Duration.seconds(e.retry_after)
        }
      case 401:
      case 404:
        return {
          lastError: "unauthorized: Telegram rejected the token",
          wait: Duration.decode(options.unauthorizedWait)
        }
      case 409:
        return { lastError: `conflict: ${e.description}`, wait: backoff }
      default:
        return { lastError: `Telegram error ${e.error_code}: ${e.description}`, wait: backoff }
    }
  })
}

/**
 * Polls one bot for as long as it runs: each batch is accepted by the inbox together with the
 * next offset before the next getUpdates (which confirms the batch to Telegram) is sent.
 * `committed` is called after each non-empty batch; `completing` completes batches as they are committed (see
 * `Inbox.accept`); `early` is handed each non-empty batch's first update before the batch is committed, to forward
 * it meanwhile. Under a lease (`tenure`), no getUpdates is sent once it may no longer hold, and a commit it
 * refuses stops the bot here. It is meant to be the whole of its fiber: it never ends on its own, and it puts the
 * bot's id on the fiber's log annotations rather than around itself, which would keep more per bot while it waits.
 */
export const poll = (
  bot: StoredBot,
  committed: Effect.Effect<void>,
  options: Options = defaults,
  tenure?: Tenure,
  completing?: Pipeline.Completing,
  early?: (update: BotApi.RawUpdate) => void
) =>
  Effect.gen(function*() {
    const ownership = yield* Ownership
    const inbox = yield* Inbox
    const events = yield* Events
    const telegram = yield* TelegramClient.TelegramClient
    const polls = yield* Effect.serviceOption(IngressPolls)
    let failures = 0
    const { identify, setError } = yield* BotStatus.make(bot, "bot ingress failed")

    let backlogChecked = -Infinity
    /** Whether a batch came since the backlog was last counted: an empty round cannot have grown it. */
    let receivedSince = true
    /** The next offset, once read: this poller is the only writer of it while it runs. */
    let offset: number | undefined
    /**
     * Whether Telegram has this poller's `allowed_updates`: it keeps them from one getUpdates to the next, so they
     * are sent until a call succeeds, and again after any failure (a webhook set meanwhile may have changed them).
     */
    let announced = false

    const clock = yield* Effect.clock

    /** Takes a batch: it and the next offset go to the inbox before the next getUpdates. */
    const received = (updates: ReadonlyArray<BotApi.RawUpdate>) => {
      announced = true
      failures = 0
      if (Option.isSome(polls)) polls.value.returned(bot.id, clock.unsafeCurrentTimeMillis())
      if (updates.length === 0) return setError("")
      receivedSince = true
      const next = updates[updates.length - 1]!.update_id + 1
      offset = undefined
      early?.(updates[0]!)
      return inbox.accept(bot.id, updates, next, tenure?.fence, completing).pipe(
        Effect.zipRight(Effect.suspend(() => {
          offset = next
          return committed
        })),
        Effect.zipRight(Effect.suspend(() => setError("")))
      )
    }

    /** An empty answer taken without a round of the fiber (`TelegramClient.pollUpdates`). */
    const emptied = () => {
      if (Option.isSome(polls)) polls.value.returned(bot.id, clock.unsafeCurrentTimeMillis())
    }

    /**
     * Once a getUpdates succeeded and the backlog was counted since the last batch, the empty answers that follow
     * are taken by the client in a loop of its own (they would count nothing), where no other instance can run the
     * bot: under a lease, each getUpdates waits for the lease to be checked first.
     */
    const fetch = (at: number): Effect.Effect<void, TelegramError.TelegramError | StorageError | LeaseLost> =>
      (announced
        ? !receivedSince && tenure?.fence === undefined
          ? telegram.pollUpdates(bot.token, { offset: at, limit: 100, timeout: options.pollSeconds }, emptied)
          : telegram.getUpdates(bot.token, { offset: at, limit: 100, timeout: options.pollSeconds })
        : telegram.getUpdates(bot.token, {
          offset: at,
          limit: 100,
          timeout: options.pollSeconds,
          allowed_updates: allUpdateTypes
        })).pipe(Effect.flatMap(received))

    const fetchNext = Effect.suspend(() =>
      offset === undefined
        ? Effect.flatMap(inbox.offset(bot.id), (read) => {
          offset = read
          return fetch(read)
        })
        : fetch(offset)
    )

    const held = tenure === undefined
      ? fetchNext
      : Effect.flatMap(tenure.holds, (holds) => holds ? fetchNext : Effect.zipRight(ownership.lost(bot.id), Effect.never))

    /** One round, built from steps made as it goes rather than a generator: a long poll keeps little while it waits. */
    const round = Effect.suspend(() => {
      const started = clock.unsafeCurrentTimeMillis()
      if (!receivedSince || started - backlogChecked < backlogInterval) return held
      return Effect.flatMap(inbox.backlog(bot.id), (backlog) => {
        if (backlog >= options.maxBacklog) return Effect.sleep(backlogInterval)
        backlogChecked = started
        receivedSince = false
        return held
      })
    })

    /** What a failed round does before the next: a lost lease stops here, anything else waits and tries again. */
    const recover = (e: TelegramError.TelegramError | StorageError | LeaseLost): Effect.Effect<void> => {
      announced = false
      switch (e._tag) {
        case "LeaseLost":
          return Effect.zipRight(ownership.lost(bot.id), Effect.never)
        case "StorageError":
          return Effect.logError("could not store updates", e.cause).pipe(
            Effect.zipRight(Effect.flatMap(Retry.delay(failures++, options.retryBase, options.retryCap), Effect.sleep))
          )
        default:
          return Effect.gen(function*() {
            const { lastError: message, wait } = yield* assess(e, failures++, options)
            yield* setError(message)
            if (webhookActive(e)) {
              yield* telegram.deleteWebhook(bot.token, {}).pipe(Effect.ignore)
            }
            if (e._tag === "TelegramApiError" && (e.error_code === 401 || e.error_code === 404)) {
              yield* Effect.sleep(wait)
              return yield* identify
            }
            yield* Effect.sleep(wait)
          })
      }
    }

    yield* FiberRef.update(FiberRef.currentLogAnnotations, HashMap.set<string, unknown>("bot_id", bot.id))
    yield* events.publish(Event.BotStatusChanged({ bot_id: bot.id, running: true }))
    yield* identify
    yield* round.pipe(Effect.catchAll(recover), Effect.forever)
  }).pipe(
    Effect.ensuring(publish(Event.BotStatusChanged({ bot_id: bot.id, running: false })))
  )
