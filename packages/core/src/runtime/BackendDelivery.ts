import { HttpExchange, TelegramClient, type TelegramError } from "@botrelay/telegram"
import { Clock, Duration, Effect, Either, Redacted } from "effect"
import * as BackendPolicy from "../domain/BackendPolicy.js"
import * as Signing from "../internal/Signing.js"
import type { StoredBot } from "../domain/Bot.js"
import type { Delivery, DeliveryOutcome } from "../domain/Delivery.js"
import { Event, Events } from "./Events.js"
import { FloodControl } from "./FloodControl.js"
import type * as Outbox from "./Outbox.js"
import * as SentMessages from "./SentMessages.js"
import { UpdateTracer } from "./UpdateTracer.js"
import { OutboxStore } from "../stores/OutboxStore.js"

/** Methods a webhook reply may not call: Botrelay owns the bot's ingress. */
const refusedReplyMethods = new Set(["getupdates", "setwebhook", "deletewebhook", "logout", "close"])

/** A webhook reply: a Bot API call a backend answered an update with. */
export interface WebhookReply {
  readonly method: string
  readonly params: Record<string, unknown>
}

/** A webhook reply in a backend's answer: `{"method": ...}` as JSON or form, else `undefined`. */
export const webhookReply = (body: string, contentType: string | undefined): WebhookReply | undefined => {
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

/** Where a delivery goes now: the bot's current backend URL, or the one it was queued with when the bot has none. */
export const target = (delivery: Pick<Delivery, "url">, bot: Pick<StoredBot, "backend_url">): string =>
  bot.backend_url === "" ? delivery.url : bot.backend_url

/** The delivery as the store keeps it once the outcome of an attempt is recorded. */
export const afterAttempt = (delivery: Delivery, outcome: DeliveryOutcome): Delivery => {
  switch (outcome.status) {
    case "delivered":
      return { ...delivery, status: "delivered", updated_at: outcome.at }
    case "pending":
      return {
        ...delivery,
        status: "pending",
        attempts: delivery.attempts + 1,
        next_attempt_at: outcome.next_attempt_at,
        last_error: outcome.last_error,
        updated_at: outcome.at
      }
    case "dead":
      return {
        ...delivery,
        status: "dead",
        attempts: delivery.attempts + 1,
        last_error: outcome.last_error,
        updated_at: outcome.at
      }
  }
}

/**
 * A POST of a bot's update begun before the update was stored (`forwardEarly`), kept until the bot's line
 * attempts the update's delivery and takes it as that attempt.
 */
interface Early {
  readonly update_id: number
  readonly url: string
  /** What the POST came to, until the line takes it. */
  answered: Parameters<HttpExchange.Callback> | undefined
  /** The line's attempt waiting for the POST. */
  taken: HttpExchange.Callback | undefined
  cancel: () => void
}

const outcomeOf = (outcome: Outbox.Outcome): DeliveryOutcome =>
  outcome.status === "done" ? { status: "delivered", at: outcome.at } : outcome

/**
 * Deliveries of updates to backends, the outbox kind: each attempt POSTs the update to the bot's backend URL
 * as it is at that moment, under the `BackendPolicy` for whoever set it, signed (Standard Webhooks,
 * `webhook-id` `msg_<delivery id>`, the attempt's time) when the bot has a signing secret; a webhook reply in
 * the answer runs once the delivery is recorded. `timeout` bounds each attempt.
 *
 * `forwardEarly` begins the first attempt of an update's delivery while the update is being stored, for a bot
 * whose line is empty: the line, once the delivery is stored, takes that POST as its attempt (it is recorded
 * like any other, and a webhook reply in its answer runs only then). `forget` drops what a bot began so.
 */
export const make = (options: { readonly timeout: Duration.DurationInput }) =>
  Effect.gen(function*() {
    const policy = yield* BackendPolicy.BackendPolicy
    const events = yield* Events
    const sentMessages = yield* SentMessages.SentMessages
    const outbox = yield* OutboxStore
    const telegram = yield* TelegramClient.TelegramClient
    const flood = yield* FloodControl
    const http = yield* HttpExchange.HttpExchange
    const tracer = yield* UpdateTracer
    const timeout = Duration.decode(options.timeout)

    const paced = <A, E extends TelegramError.TelegramError>(
      bot: StoredBot,
      params: Record<string, unknown>,
      call: Effect.Effect<A, E>
    ) => {
      const chatId = params.chat_id
      return typeof chatId === "number" || typeof chatId === "string" ? flood.send(bot.id, chatId, call) : call
    }

    const runReply = (bot: StoredBot, reply: WebhookReply) =>
      refusedReplyMethods.has(reply.method.toLowerCase())
        ? Effect.logWarning("refused a webhook reply").pipe(Effect.annotateLogs({ method: reply.method }))
        : paced(bot, reply.params, telegram.call(bot.token, reply.method, reply.params)).pipe(
          Effect.flatMap((result) =>
            sentMessages.capture([{ bot, method: reply.method.toLowerCase(), params: reply.params, result }], "reply")
          ),
          Effect.catchAll((e) =>
            Effect.logWarning("a webhook reply failed").pipe(
              Effect.annotateLogs({ method: reply.method, error: e.message })
            )
          )
        )

    /** The headers of the bot's deliveries without a signature, made once per version of the bot. */
    const plainHeaders = new WeakMap<StoredBot, Record<string, string>>()
    const headersOf = (bot: StoredBot): Record<string, string> => {
      let headers = plainHeaders.get(bot)
      if (headers === undefined) {
        const secret = Redacted.value(bot.secret_token)
        headers = secret === "" ? jsonHeaders : { ...jsonHeaders, [secretHeader]: secret }
        plainHeaders.set(bot, headers)
      }
      return headers
    }

    /** The POST of the delivery to `url`, with these headers. */
    const post = (delivery: Pick<Delivery, "payload">, bot: StoredBot, url: string, headers: Record<string, string>): HttpExchange.Request => {
      const addresses = BackendPolicy.addressesFor(policy, bot.backend_url_origin)
      return {
        method: "POST",
        url,
        headers,
        body: delivery.payload,
        timeout,
        maxBytes: maxAnswerBytes,
        ...(addresses === undefined ? {} : { addresses })
      }
    }

    /** What a POST to `url` came to; a failure whose bot moved to another URL meanwhile is due again at once. */
    const attemptOf = (
      delivery: Delivery,
      url: string,
      bot: StoredBot,
      bots: Outbox.Bots,
      result: Either.Either<HttpExchange.Answer, HttpExchange.HttpExchangeError>
    ): Outbox.Attempt<void> => {
      if (Either.isRight(result) && result.right.status >= 200 && result.right.status < 300) {
        const reply = result.right.body.length === 0
          ? undefined
          : webhookReply(HttpExchange.text(result.right), result.right.headers["content-type"])
        return { _tag: "Done", extra: undefined, after: reply === undefined ? undefined : runReply(bot, reply) }
      }
      const moved = url !== target(delivery, bots(bot.id) ?? bot)
      return {
        _tag: "Failed",
        extra: undefined,
        error: Either.isLeft(result) ? result.left.description : `HTTP ${result.right.status}`,
        retry: moved ? "now" : "later"
      }
    }

    const send = http.send

    /**
     * POSTs begun by `forwardEarly`, one at most per bot: a later update's replaces one its line never took, and an
     * update fetched again (its commit failed) is not sent again.
     */
    const early = new Map<number, Early>()

    const forwardEarly = (bot: StoredBot, update: { readonly update_id: number; readonly payload: string }): void => {
      if (send === undefined || tracer.enabled || !bot.proxy_enabled || bot.backend_url === "") return
      if (Redacted.value(bot.signing_secret) !== "" || (early.get(bot.id)?.update_id ?? -1) >= update.update_id) return
      const url = bot.backend_url
      const begun: Early = { update_id: update.update_id, url, answered: undefined, taken: undefined, cancel: () => {} }
      early.set(bot.id, begun)
      const cancel = send(post(update, bot, url, headersOf(bot)), (failure, answer) => {
        if (begun.taken === undefined) begun.answered = [failure, answer]
        else begun.taken(failure, answer)
      })
      if (begun.answered === undefined) begun.cancel = cancel
    }

    /** The early POST of the delivery, taken as its first attempt; `undefined` when none was begun. */
    const takeEarly = (delivery: Delivery): Early | undefined => {
      const begun = early.get(delivery.bot_id)
      if (begun === undefined || begun.update_id !== delivery.update_id || delivery.attempts !== 0) return undefined
      early.delete(delivery.bot_id)
      return begun
    }

    /** Calls `done` with what the early POST comes to; returns what cancels it. */
    const awaitEarly = (begun: Early, done: HttpExchange.Callback): (() => void) => {
      if (begun.answered === undefined) {
        begun.taken = done
        return begun.cancel
      }
      done(...begun.answered)
      return () => {}
    }

    const resultOf = (
      failure: HttpExchange.HttpExchangeError | undefined,
      answer: HttpExchange.Answer | undefined
    ): Either.Either<HttpExchange.Answer, HttpExchange.HttpExchangeError> =>
      failure === undefined ? Either.right(answer!) : Either.left(failure)

    /** One POST of the delivery, signed and traced as the bot and the tracer say. */
    const attempt = (
      delivery: Delivery,
      bot: StoredBot,
      bots: Outbox.Bots,
      interruptible: Outbox.Interruptible
    ): Effect.Effect<Outbox.Attempt<void>> =>
      Effect.gen(function*() {
        const begun = takeEarly(delivery)
        if (begun !== undefined) {
          const result = yield* interruptible(Effect.async<Either.Either<HttpExchange.Answer, HttpExchange.HttpExchangeError>>(
            (resume) => {
              const cancel = awaitEarly(begun, (failure, answer) => resume(Effect.succeed(resultOf(failure, answer))))
              return Effect.sync(cancel)
            }
          ))
          return attemptOf(delivery, begun.url, bot, bots, result)
        }
        const url = target(delivery, bot)
        const span = tracer.enabled
          ? yield* tracer.attempt(delivery.bot_id, delivery.update_id, delivery.id, delivery.attempts + 1)
          : undefined
        let headers = headersOf(bot)
        if (Redacted.value(bot.signing_secret) !== "") {
          const signature = Signing.sign(bot.signing_secret, `msg_${delivery.id}`, yield* Clock.currentTimeMillis, delivery.payload)
          headers = { ...headers, ...signature }
        }
        if (span !== undefined) headers = { ...headers, traceparent: span.traceparent }
        const call = interruptible(Effect.either(http.exchange(post(delivery, bot, url, headers))))
        const result = yield* span === undefined
          ? call
          : call.pipe(Effect.onInterrupt(() => span.end({ error: "interrupted" })))
        if (span !== undefined) {
          yield* span.end(Either.isRight(result) ? { status: result.right.status } : { error: result.left.description })
        }
        return attemptOf(delivery, url, bot, bots, result)
      })

    /** The attempt in the HTTP client's callbacks, when it needs no fiber: no span to make, no signature to date. */
    const attemptNow = send === undefined ? undefined : (
      delivery: Delivery,
      bot: StoredBot,
      bots: Outbox.Bots,
      done: (attempt: Outbox.Attempt<void>) => void
    ): (() => void) | undefined => {
      const begun = takeEarly(delivery)
      if (begun !== undefined) {
        return awaitEarly(begun, (failure, answer) => done(attemptOf(delivery, begun.url, bot, bots, resultOf(failure, answer))))
      }
      if (tracer.enabled || Redacted.value(bot.signing_secret) !== "") return undefined
      const url = target(delivery, bot)
      return send(post(delivery, bot, url, headersOf(bot)), (failure, answer) =>
        done(attemptOf(delivery, url, bot, bots, resultOf(failure, answer))))
    }

    const kind: Outbox.Kind<Delivery, void> = {
      name: "delivery",
      metric: "backend",
      line: outbox.nextDeliveries,
      runs: () => true,
      attempt,
      attemptNow,
      record: (recorded) => {
        const outcomes = recorded.map(({ job, outcome }) => [job, outcomeOf(outcome)] as const)
        return outbox.recordAttempts(outcomes.map(([job, outcome]) => [job.id, outcome])).pipe(
          Effect.zipRight(Effect.forEach(
            outcomes.filter(([job, outcome]) => job.attempts > 0 || outcome.status !== "delivered"),
            ([job, outcome]) => events.publish(Event.DeliveryChanged({ delivery: afterAttempt(job, outcome) })),
            { discard: true }
          ))
        )
      },
      recordEach: false,
      annotations: (delivery) => ({ delivery_id: delivery.id })
    }
    return {
      kind,
      forwardEarly,
      forget: (botId: number) => void early.delete(botId)
    }
  })
