import { HttpExchange, TelegramClient, type TelegramError } from "@botrelay/telegram"
import { Clock, Duration, Effect, Either, Option, Redacted } from "effect"
import * as BackendPolicy from "./BackendPolicy.js"
import * as Backoff from "./Backoff.js"
import type { StoredBot } from "./Bot.js"
import type { Delivery, DeliveryOutcome } from "./Delivery.js"
import { FloodControl } from "./FloodControl.js"
import * as SentMessages from "./SentMessages.js"
import { MessageStore } from "./stores/MessageStore.js"
import { OutboxStore } from "./stores/OutboxStore.js"

/** How deliveries to backends behave. */
export interface Options {
  /** How long a backend may take to answer. */
  readonly timeout: Duration.DurationInput
  /** Retry waits: from `retryBase`, doubling, up to `retryCap`, with jitter. */
  readonly retryBase: Duration.DurationInput
  readonly retryCap: Duration.DurationInput
  /** How long a delivery is retried before it is dead-lettered. */
  readonly maxAge: Duration.DurationInput
}

/** Defaults: 10 s per attempt, retries from 1 s up to 5 min apart, for 24 h. */
export const defaults: Options = {
  timeout: Duration.seconds(10),
  retryBase: Duration.seconds(1),
  retryCap: Duration.minutes(5),
  maxAge: Duration.hours(24)
}

/** Methods a webhook reply may not call: Botrelay owns the bot's ingress. */
const refusedReplyMethods = new Set(["getupdates", "setwebhook", "deletewebhook", "logout", "close"])

/** A webhook reply in a backend's answer: `{"method": ...}` as JSON or form, else `undefined`. */
export const webhookReply = (
  body: string,
  contentType: string | undefined
): { readonly method: string; readonly params: Record<string, unknown> } | undefined => {
  let fields: Record<string, unknown> | undefined
  if (contentType !== undefined && /application\/x-www-form-urlencoded/i.test(contentType)) {
    fields = Object.fromEntries(new URLSearchParams(body))
  } else if (body.trimStart().startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(body)
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
        fields = parsed as Record<string, unknown>
      }
    } catch {
      return undefined
    }
  }
  if (fields === undefined || typeof fields.method !== "string" || fields.method === "") return undefined
  const { method, ...params } = fields
  return { method, params }
}

const jsonHeaders = { "content-type": "application/json" }

/** The header Telegram sends a webhook's secret in. */
const secretHeader = "x-telegram-bot-api-secret-token"

/** The largest backend answer read: room for any webhook reply; a larger one counts as a failed attempt. */
const maxAnswerBytes = 1024 * 1024

/** How many due deliveries one read takes. */
const batchSize = 50

/** Where a delivery goes now: the bot's current backend URL, or the one it was queued with when the bot has none. */
export const target = (delivery: Pick<Delivery, "url">, bot: Pick<StoredBot, "backend_url">): string =>
  bot.backend_url === "" ? delivery.url : bot.backend_url

/**
 * Delivery of one bot's outbox, oldest first, to its backend: each attempt goes to the bot's backend
 * URL as it is at that moment, under the `BackendPolicy` for whoever set it.
 */
export const make = (options: Options = defaults) =>
  Effect.gen(function*() {
    const policy = yield* BackendPolicy.BackendPolicy
    const messageStore = yield* MessageStore
    const outbox = yield* OutboxStore
    const telegram = yield* TelegramClient.TelegramClient
    const flood = yield* FloodControl
    const http = yield* HttpExchange.HttpExchange
    const timeout = Duration.decode(options.timeout)
    const maxAge = Duration.toMillis(options.maxAge)

    const paced = <A, E extends TelegramError.TelegramError>(
      bot: StoredBot,
      params: Record<string, unknown>,
      call: Effect.Effect<A, E>
    ) => {
      const chatId = params.chat_id
      return typeof chatId === "number" || typeof chatId === "string" ? flood.send(bot.id, chatId, call) : call
    }

    const runReply = (bot: StoredBot, reply: { readonly method: string; readonly params: Record<string, unknown> }) =>
      refusedReplyMethods.has(reply.method.toLowerCase())
        ? Effect.logWarning("refused a webhook reply").pipe(Effect.annotateLogs({ method: reply.method }))
        : paced(bot, reply.params, telegram.call(bot.token, reply.method, reply.params)).pipe(
          Effect.flatMap((result) =>
            SentMessages.capture([{ bot, method: reply.method.toLowerCase(), params: reply.params, result }], "reply")
          ),
          Effect.provideService(MessageStore, messageStore),
          Effect.catchAll((e) =>
            Effect.logWarning("a webhook reply failed").pipe(
              Effect.annotateLogs({ method: reply.method, error: e.message })
            )
          )
        )

    /**
     * Attempts the delivery once: its outcome, and the webhook reply a delivered update was answered with.
     * A failed attempt whose bot moved to another URL meanwhile is due again at once.
     */
    const attempt = (delivery: Delivery, bot: StoredBot, current: () => StoredBot | undefined) =>
      Effect.gen(function*() {
        const secret = Redacted.value(bot.secret_token)
        const url = target(delivery, bot)
        const addresses = BackendPolicy.addressesFor(policy, bot.backend_url_origin)
        const result = yield* Effect.either(http.exchange({
          method: "POST",
          url,
          headers: secret === "" ? jsonHeaders : { ...jsonHeaders, [secretHeader]: secret },
          body: delivery.payload,
          timeout,
          maxBytes: maxAnswerBytes,
          ...(addresses === undefined ? {} : { addresses })
        }))
        const now = yield* Clock.currentTimeMillis
        const at = new Date(now).toISOString()
        if (Either.isRight(result) && result.right.status >= 200 && result.right.status < 300) {
          const outcome: DeliveryOutcome = { status: "delivered", at }
          const answer = result.right
          return { outcome, reply: webhookReply(HttpExchange.text(answer), answer.headers["content-type"]) }
        }
        const last_error = Either.isLeft(result) ? result.left.description : `HTTP ${result.right.status}`
        if (now - Date.parse(delivery.created_at) >= maxAge) {
          yield* Effect.logWarning("delivery dead-lettered").pipe(
            Effect.annotateLogs({ delivery_id: delivery.id, error: last_error })
          )
          const outcome: DeliveryOutcome = { status: "dead", at, last_error }
          return { outcome, reply: undefined }
        }
        const moved = url !== target(delivery, current() ?? bot)
        const wait = moved ? Duration.zero : Backoff.delay(delivery.attempts, options.retryBase, options.retryCap)
        const next_attempt_at = new Date(now + Duration.toMillis(wait)).toISOString()
        const outcome: DeliveryOutcome = { status: "pending", at, next_attempt_at, last_error }
        return { outcome, reply: undefined }
      })

    /**
     * Delivers due deliveries of one batch in order, recording outcomes together: at the end, before a
     * webhook reply runs, and when interrupted. Returns how long the head of the line waits, "failed"
     * when a delivery was rescheduled, or "drained" when the whole batch left the line.
     */
    const deliverBatch = (current: () => StoredBot | undefined, batch: ReadonlyArray<Delivery>) => {
      const outcomes: Array<readonly [number, DeliveryOutcome]> = []
      const record = Effect.suspend(() => outcomes.length === 0 ? Effect.void : outbox.recordAttempts(outcomes.splice(0)))
      return Effect.gen(function*() {
        let result: Duration.Duration | "drained" | "failed" = "drained"
        for (const delivery of batch) {
          const due = Date.parse(delivery.next_attempt_at) - (yield* Clock.currentTimeMillis)
          if (due > 0) {
            result = Duration.millis(due)
            break
          }
          const bot = current()
          if (bot === undefined) break
          const { outcome, reply } = yield* attempt(delivery, bot, current)
          outcomes.push([delivery.id, outcome])
          if (reply !== undefined) {
            yield* record
            yield* runReply(bot, reply)
          }
          if (outcome.status === "pending") {
            result = "failed"
            break
          }
        }
        yield* record
        return result
      }).pipe(Effect.onInterrupt(() => Effect.ignoreLogged(record)))
    }

    /**
     * Delivers the bot's due deliveries in order. Returns how long to wait for the next one, or
     * `None` when the outbox is empty. `current` is the bot as it is now, `undefined` once it is gone.
     */
    const deliverDue = (
      botId: number,
      current: () => StoredBot | undefined
    ): Effect.Effect<Option.Option<Duration.Duration>, never> =>
      Effect.gen(function*() {
        while (true) {
          const batch = yield* outbox.nextDeliveries(botId, batchSize)
          const bot = current()
          if (batch.length === 0 || bot === undefined) return Option.none()
          const wait = yield* deliverBatch(current, batch)
          if (Duration.isDuration(wait)) return Option.some(wait)
          if (wait === "drained" && batch.length < batchSize) return Option.none()
        }
      }).pipe(
        Effect.catchAll((e) =>
          Effect.logError("outbox failed", e.cause).pipe(Effect.as(Option.some(Duration.seconds(1))))
        )
      )

    return { deliverDue } as const
  })
