import type { TelegramError } from "@botrelay/telegram"
import { BotApi, TelegramClient } from "@botrelay/telegram"
import { Clock, Duration, Effect } from "effect"
import * as Backoff from "./Backoff.js"
import type { StoredBot } from "./Bot.js"
import { BotActivity } from "./BotActivity.js"
import * as BotStatus from "./BotStatus.js"
import { InboxStore } from "./stores/InboxStore.js"

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
   * keeps the rest, so a slow backend bounds the bot's backlog here instead of growing it.
   */
  readonly maxBacklog: number
  /**
   * After a batch, how long polling waits at most for the bot's processing and deliveries to settle:
   * an idle bot polls again at once, a busy one gathers updates into larger, cheaper batches.
   */
  readonly settleTimeout: Duration.DurationInput
}

/**
 * Defaults: 30 s long polls; back off 1 s to 30 s; retry a rejected token every 5 minutes; backlog 1,000;
 * wait up to 50 ms for a batch to settle.
 */
export const defaults: Options = {
  pollSeconds: 30,
  retryBase: Duration.seconds(1),
  retryCap: Duration.seconds(30),
  unauthorizedWait: Duration.minutes(5),
  maxBacklog: 1000,
  settleTimeout: Duration.millis(50)
}

/** How often `last_update_at` is written at most, per bot. */
const statusInterval = 1000

/** How often the backlog is counted at most, per bot, and how long polling pauses when it is full. */
const backlogInterval = 100

const webhookActive = (e: TelegramError.TelegramError) =>
  e._tag === "TelegramApiError" && e.error_code === 409 && /webhook/i.test(e.description)

/** What a failed getUpdates means: the `last_error` to show and how long to wait. */
export const assess = (
  e: TelegramError.TelegramError,
  failures: number,
  options: Options
): { readonly lastError: string; readonly wait: Duration.Duration } => {
  const backoff = Backoff.delay(failures, options.retryBase, options.retryCap)
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
      return { lastError: `conflict: ${e.description}`, wait: Backoff.delay(failures + 2, options.retryBase, options.retryCap) }
    default:
      return { lastError: `Telegram error ${e.error_code}: ${e.description}`, wait: backoff }
  }
}

/**
 * Polls one bot for as long as it runs: each batch is committed to the inbox together with the
 * next offset before the next getUpdates (which confirms the batch to Telegram) is sent.
 * `committed` is called after each non-empty batch.
 */
export const poll = (bot: StoredBot, committed: Effect.Effect<void>, options: Options = defaults) =>
  Effect.gen(function*() {
    const inbox = yield* InboxStore
    const telegram = yield* TelegramClient.TelegramClient
    const activity = yield* BotActivity
    let failures = 0
    const { identify, setError, updatedAt } = yield* BotStatus.make(bot, "bot ingress failed")

    let statusWritten = 0
    let backlogChecked = 0
    /** The next offset, once read: this poller is the only writer of it while it runs. */
    let offset: number | undefined

    const round = Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      if (started - backlogChecked >= backlogInterval) {
        if ((yield* inbox.backlog(bot.id)) >= options.maxBacklog) return yield* Effect.sleep(backlogInterval)
        backlogChecked = started
      }
      offset ??= yield* inbox.ingressOffset(bot.id)
      const updates = yield* telegram.getUpdates(bot.token, {
        offset,
        limit: 100,
        timeout: options.pollSeconds,
        allowed_updates: allUpdateTypes
      })
      failures = 0
      if (updates.length > 0) {
        const now = yield* Clock.currentTimeMillis
        const received_at = new Date(now).toISOString()
        const last = updates[updates.length - 1]!.update_id
        offset = undefined
        yield* inbox.commitUpdates(
          bot.id,
          updates.map((u) => ({ update_id: u.update_id, payload: u.payload, received_at })),
          last + 1
        )
        offset = last + 1
        yield* committed
        if (now - statusWritten >= statusInterval) {
          statusWritten = now
          yield* updatedAt(received_at)
        }
      }
      yield* setError("")
    })

    yield* activity.setRunning(bot.id, true)
    yield* identify
    yield* round.pipe(
      Effect.catchTag("StorageError", (e) =>
        Effect.logError("could not store updates", e.cause).pipe(
          Effect.zipRight(Effect.sleep(Backoff.delay(failures++, options.retryBase, options.retryCap)))
        )),
      Effect.catchAll((e) =>
        Effect.gen(function*() {
          const { lastError: message, wait } = assess(e, failures++, options)
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
      ),
      Effect.forever
    )
  }).pipe(
    Effect.ensuring(Effect.flatMap(BotActivity, (activity) => activity.setRunning(bot.id, false))),
    Effect.annotateLogs({ bot_id: bot.id })
  )
