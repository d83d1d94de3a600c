import type * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { BackendPolicy, Bot, Bots, CallParams, Deliveries, type Errors, LongPoll } from "@botrelay/core"
import { Effect, Either, ParseResult, Schema } from "effect"
import * as BotApiAnswer from "./BotApiAnswer.js"

/** A Bot API method Botrelay answers itself, for a registered bot that is not disabled. */
export type LocalMethod = (
  bot: Bot.StoredBot,
  params: CallParams.CallParams
) => Effect.Effect<HttpServerResponse.HttpServerResponse>

const secretPattern = /^[A-Za-z0-9_-]{1,256}$/

const decodeUpdate = Schema.decodeUnknown(Bot.BotUpdate)

const firstIssue = (error: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "invalid value"

/** `allowed_updates` as a client sent it (undefined when absent), or why it cannot be used. */
const allowedUpdates = (value: unknown): Either.Either<ReadonlyArray<string> | undefined, string> => {
  if (value === undefined || value === "") return Either.right(undefined)
  const list = CallParams.array(value)
  if (list === undefined) return Either.left("can't parse allowed_updates JSON array")
  if (list.length > LongPoll.maxAllowedUpdates) {
    return Either.left(`allowed_updates may name at most ${LongPoll.maxAllowedUpdates} update types`)
  }
  const names = list.filter((name): name is string => typeof name === "string" && LongPoll.updateTypeName.test(name))
  return names.length === list.length
    ? Either.right([...new Set(names)])
    : Either.left("allowed_updates must hold update type names such as \"message\"")
}

const failed = (operation: string) => (e: Errors.StorageError) =>
  Effect.logError(`tgapi ${operation} failed`, e.cause).pipe(Effect.as(BotApiAnswer.internalError))

/** A Unix time in seconds from an ISO 8601 string; 0 when it does not parse. */
const unixSeconds = (iso: string) => {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000)
}

/** The lower-case names of the methods answered locally. */
export const names: ReadonlySet<string> = new Set([
  "getupdates",
  "setwebhook",
  "deletewebhook",
  "getwebhookinfo",
  "logout",
  "close"
])

const reasons: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout"
}

/**
 * A delivery's last error as getWebhookInfo reports it: a status in Telegram's words ("Wrong response
 * from the webhook: 401 Unauthorized"); other errors are Botrelay's own sentences. Never the answer's body.
 */
export const webhookError = (lastError: string): string => {
  const status = /^HTTP (\d{3})$/.exec(lastError)?.[1]
  if (status === undefined) return lastError
  const reason = reasons[Number(status)]
  return `Wrong response from the webhook: ${status}${reason === undefined ? "" : ` ${reason}`}`
}

/** How many recent deliveries getWebhookInfo looks at for the last error. */
const recentDeliveries = 100

/**
 * The methods Botrelay answers for /tgapi instead of Telegram, by lower-case name: getUpdates (the
 * long-poll buffer), setWebhook / deleteWebhook (the bot's forwarding), getWebhookInfo (Botrelay's own
 * state), logOut and close (true: the bot stays with Botrelay).
 */
export const make = Effect.gen(function*() {
  const bots = yield* Bots.Bots
  const longPoll = yield* LongPoll.LongPoll
  const deliveries = yield* Deliveries.Deliveries
  const policy = yield* BackendPolicy.BackendPolicy

  const getUpdates: LocalMethod = (bot, params) => {
    const allowed = allowedUpdates(params.allowed_updates)
    if (Either.isLeft(allowed)) return Effect.succeed(BotApiAnswer.badRequest(allowed.left))
    return longPoll.getUpdates(bot, {
      offset: CallParams.int(params.offset),
      limit: CallParams.int(params.limit),
      timeout: CallParams.int(params.timeout),
      allowed_updates: allowed.right
    }).pipe(
      Effect.map((updates) => BotApiAnswer.okRaw(`[${updates.map((u) => u.payload).join(",")}]`)),
      Effect.catchTags({
        PollConflict: (e) => Effect.succeed(BotApiAnswer.error(409, e.message)),
        LongPollDisabled: (e) => Effect.succeed(BotApiAnswer.error(409, `Conflict: ${e.message}`)),
        StorageError: failed("getUpdates")
      })
    )
  }

  const dropIf = (bot: Bot.StoredBot, params: CallParams.CallParams) =>
    CallParams.bool(params.drop_pending_updates) === true ? longPoll.drop(bot.id) : Effect.void

  const stopForwarding = (bot: Bot.StoredBot, params: CallParams.CallParams) =>
    Effect.gen(function*() {
      if (bot.proxy_enabled) yield* bots.update({ id: bot.id, proxy_enabled: false })
      yield* dropIf(bot, params)
      return BotApiAnswer.ok(true, bot.proxy_enabled ? "Webhook was deleted" : "Webhook is already deleted")
    })

  const answerFailure = (operation: string) =>
  (
    effect: Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      Bot.BotNotFound | Errors.InvalidInput | Bot.DuplicateToken | Errors.StorageError
    >
  ) =>
    effect.pipe(Effect.catchTags({
      BotNotFound: () => Effect.succeed(BotApiAnswer.unauthorized),
      InvalidInput: (e) => Effect.succeed(BotApiAnswer.badRequest(e.message)),
      DuplicateToken: () => Effect.succeed(BotApiAnswer.internalError),
      StorageError: failed(operation)
    }))

  const setWebhook: LocalMethod = (bot, params) =>
    Effect.gen(function*() {
      const url = CallParams.string(params.url) ?? ""
      if (url === "") return yield* stopForwarding(bot, params)
      const secret = CallParams.string(params.secret_token) ?? ""
      if (secret !== "" && !secretPattern.test(secret)) {
        return BotApiAnswer.badRequest("secret token contains unallowed characters")
      }
      const update = yield* Effect.either(
        decodeUpdate({ id: bot.id, backend_url: url, secret_token: secret, proxy_enabled: true })
      )
      if (update._tag === "Left") return BotApiAnswer.badRequest(`bad webhook: ${firstIssue(update.left)}`)
      const refusal = BackendPolicy.publicOnly(policy, BackendPolicy.originAfter(bot, url, "tgapi"))
        ? BackendPolicy.literalRefusal(url)
        : undefined
      if (refusal !== undefined) return BotApiAnswer.badRequest(`bad webhook: ${refusal}`)
      yield* bots.update(update.right, "tgapi")
      yield* dropIf(bot, params)
      return BotApiAnswer.ok(true, "Webhook was set")
    }).pipe(answerFailure("setWebhook"))

  const deleteWebhook: LocalMethod = (bot, params) => stopForwarding(bot, params).pipe(answerFailure("deleteWebhook"))

  const getWebhookInfo: LocalMethod = (bot) =>
    Effect.gen(function*() {
      const status = yield* longPoll.status(bot.id)
      const backlog = yield* deliveries.backlog(bot.id)
      const recent = yield* deliveries.list({ bot_id: bot.id, limit: recentDeliveries })
      let lastError: { readonly date: number; readonly message: string } | undefined
      for (const delivery of recent) {
        if (delivery.last_error === "") continue
        const date = unixSeconds(delivery.updated_at)
        if (lastError === undefined || date > lastError.date) {
          lastError = { date, message: webhookError(delivery.last_error) }
        }
      }
      if (status.trimmed > 0 && status.last_trimmed_date > (lastError?.date ?? 0)) {
        lastError = {
          date: status.last_trimmed_date,
          message: `the long-poll buffer dropped old updates (${status.trimmed} so far); confirm updates sooner`
        }
      }
      const url = bot.proxy_enabled ? bot.backend_url : ""
      return BotApiAnswer.ok({
        url,
        has_custom_certificate: false,
        pending_update_count: status.pending + backlog,
        ...(lastError === undefined ? {} : { last_error_date: lastError.date, last_error_message: lastError.message }),
        ...(url === "" ? {} : { max_connections: 1 }),
        ...(status.allowed_updates.length === 0 ? {} : { allowed_updates: status.allowed_updates })
      })
    }).pipe(Effect.catchTag("StorageError", failed("getWebhookInfo")))

  const stays: LocalMethod = () => Effect.succeed(BotApiAnswer.ok(true))

  return new Map<string, LocalMethod>([
    ["getupdates", getUpdates],
    ["setwebhook", setWebhook],
    ["deletewebhook", deleteWebhook],
    ["getwebhookinfo", getWebhookInfo],
    ["logout", stays],
    ["close", stays]
  ])
})
