import { HttpClient, HttpClientRequest } from "@effect/platform"
import { BotApi, TelegramClient, type TelegramError } from "@botrelay/telegram"
import { Clock, Duration, Effect, Either, Option, Redacted, Schema } from "effect"
import * as Backoff from "./Backoff.js"
import type { StoredBot } from "./Bot.js"
import type { Delivery } from "./Delivery.js"
import { fromTelegram } from "./Message.js"
import { FloodControl } from "./FloodControl.js"
import { Storage } from "./Storage.js"

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

const decodeMessage = Schema.decodeUnknownEither(BotApi.Message)

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
  return { method: method as string, params }
}

type Attempt =
  | { readonly _tag: "Answered"; readonly status: number; readonly body: string; readonly contentType?: string }
  | { readonly _tag: "Failed"; readonly reason: string }

/** Delivery of one bot's outbox, oldest first, to its backend. */
export const make = (options: Options = defaults) =>
  Effect.gen(function*() {
    const storage = yield* Storage
    const telegram = yield* TelegramClient.TelegramClient
    const flood = yield* FloodControl
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
    const timeout = Duration.decode(options.timeout)

    const post = (delivery: Delivery, bot: StoredBot): Effect.Effect<Attempt> => {
      const secret = Redacted.value(bot.secret_token)
      return HttpClientRequest.post(delivery.url).pipe(
        HttpClientRequest.bodyText(delivery.payload, "application/json"),
        secret === "" ? (r) => r : HttpClientRequest.setHeader("x-telegram-bot-api-secret-token", secret),
        client.execute,
        Effect.flatMap((response) =>
          Effect.map(response.text, (body): Attempt => ({
            _tag: "Answered",
            status: response.status,
            body,
            ...(response.headers["content-type"] === undefined ? {} : { contentType: response.headers["content-type"] })
          }))
        ),
        Effect.timeoutFail({ duration: timeout, onTimeout: () => `no answer within ${Duration.format(timeout)}` }),
        Effect.catchAll((e) =>
          Effect.succeed<Attempt>({
            _tag: "Failed",
            reason: typeof e === "string" ? e : e._tag === "RequestError" ? `connection failed (${e.reason})` : "the answer could not be read"
          })
        )
      )
    }

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
          Effect.flatMap((result) => {
            const message = decodeMessage(result)
            return bot.manage_enabled && Either.isRight(message)
              ? storage.saveMessage(fromTelegram(bot.id, message.right, "out"))
              : Effect.void
          }),
          Effect.catchAll((e) =>
            Effect.logWarning("a webhook reply failed").pipe(
              Effect.annotateLogs({ method: reply.method, error: e.message })
            )
          )
        )

    /** Attempts the delivery once and records the outcome. */
    const attempt = (delivery: Delivery, bot: StoredBot) =>
      Effect.gen(function*() {
        const result = yield* post(delivery, bot)
        const now = yield* Clock.currentTimeMillis
        const at = new Date(now).toISOString()
        if (result._tag === "Answered" && result.status >= 200 && result.status < 300) {
          yield* storage.recordAttempt(delivery.id, { status: "delivered", at })
          const reply = webhookReply(result.body, result.contentType)
          if (reply !== undefined) yield* runReply(bot, reply)
          return
        }
        const last_error = result._tag === "Failed" ? result.reason : `HTTP ${result.status}`
        if (now - Date.parse(delivery.created_at) >= Duration.toMillis(options.maxAge)) {
          yield* storage.recordAttempt(delivery.id, { status: "dead", at, last_error })
          yield* Effect.logWarning("delivery dead-lettered").pipe(
            Effect.annotateLogs({ delivery_id: delivery.id, error: last_error })
          )
          return
        }
        const wait = Backoff.delay(delivery.attempts, options.retryBase, options.retryCap)
        const next_attempt_at = new Date(now + Duration.toMillis(wait)).toISOString()
        yield* storage.recordAttempt(delivery.id, { status: "pending", at, next_attempt_at, last_error })
      })

    /**
     * Delivers the bot's due deliveries in order. Returns how long to wait for the next one, or
     * `None` when the outbox is empty.
     */
    const deliverDue = (botId: number): Effect.Effect<Option.Option<Duration.Duration>, never> =>
      Effect.gen(function*() {
        while (true) {
          const next = yield* storage.nextDelivery(botId)
          if (Option.isNone(next)) return Option.none()
          const delivery = next.value
          const wait = Date.parse(delivery.next_attempt_at) - (yield* Clock.currentTimeMillis)
          if (wait > 0) return Option.some(Duration.millis(wait))
          const bot = yield* storage.findBot(botId)
          if (Option.isNone(bot)) return Option.none()
          yield* attempt(delivery, bot.value)
        }
      }).pipe(
        Effect.catchAll((e) =>
          Effect.logError("outbox failed", e.cause).pipe(Effect.as(Option.some(Duration.seconds(1))))
        )
      )

    return { deliverDue } as const
  })
