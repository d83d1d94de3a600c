import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import type {
  Account,
  ApiKey,
  Bot,
  Bridge,
  ChatTag,
  Deliveries,
  Errors,
  IdempotencyKey,
  LlmSettings,
  LongPoll,
  Media,
  Message,
  Outgoing,
  Route
} from "@botrelay/core"
import type { TelegramError } from "@botrelay/telegram"
import { Effect, Schema } from "effect"

const FieldIssue = Schema.Struct({ path: Schema.String, message: Schema.String })

const fields = {
  error: Schema.String,
  code: Schema.String,
  details: Schema.optional(Schema.Array(FieldIssue))
}

/** 400: malformed JSON, a schema violation or a bad query parameter. */
export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  fields,
  HttpApiSchema.annotations({ status: 400 })
) {}

/** 401: missing, unknown, disabled or malformed API key. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  fields,
  HttpApiSchema.annotations({ status: 401 })
) {}

/** 403: the key's role or bot scope does not allow this. */
export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  fields,
  HttpApiSchema.annotations({ status: 403 })
) {}

/** 404: an unknown id, also one referenced in a body, or an unknown path. */
export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  fields,
  HttpApiSchema.annotations({ status: 404 })
) {}

/** 409: a conflict with existing state, such as a duplicate token. */
export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  fields,
  HttpApiSchema.annotations({ status: 409 })
) {}

/** 422: the request is well formed but contradicts an earlier one (an `Idempotency-Key` reused with another body). */
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()(
  "UnprocessableEntity",
  fields,
  HttpApiSchema.annotations({ status: 422 })
) {}

/** 429: rate limited; `retry_after` seconds become the `Retry-After` header. */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()(
  "TooManyRequests",
  { ...fields, retry_after: Schema.optional(Schema.Int) },
  HttpApiSchema.annotations({ status: 429 })
) {}

/** 500: a failure on our side; the body never carries internals. */
export class InternalServerError extends Schema.TaggedError<InternalServerError>()(
  "InternalServerError",
  fields,
  HttpApiSchema.annotations({ status: 500 })
) {}

/** 502: Telegram answered with an error; its description is passed on. */
export class BadGateway extends Schema.TaggedError<BadGateway>()(
  "BadGateway",
  fields,
  HttpApiSchema.annotations({ status: 502 })
) {}

/** 503: Telegram, or storage, cannot be reached. */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  fields,
  HttpApiSchema.annotations({ status: 503 })
) {}

/** 504: the request reached Telegram but no answer came back. */
export class GatewayTimeout extends Schema.TaggedError<GatewayTimeout>()(
  "GatewayTimeout",
  fields,
  HttpApiSchema.annotations({ status: 504 })
) {}

/** Every error the API answers with. */
export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | UnprocessableEntity
  | TooManyRequests
  | InternalServerError
  | BadGateway
  | ServiceUnavailable
  | GatewayTimeout

/** The HTTP status of each error. */
export const status: Record<ApiError["_tag"], number> = {
  BadRequest: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  UnprocessableEntity: 422,
  TooManyRequests: 429,
  InternalServerError: 500,
  BadGateway: 502,
  ServiceUnavailable: 503,
  GatewayTimeout: 504
}

/**
 * A schema's own message without the value it was given, which may be a secret (a token pasted in
 * the wrong field): `Expected number, actual "123:abc"` → `expected number`, `Unable to decode "x" into
 * a number` → `must be a number`. Messages the contract words itself pass unchanged.
 */
export const withoutValue = (message: string): string => {
  const expected = /^Expected ([^]*?), actual [^]*$/.exec(message)
  if (expected !== null) return `expected ${expected[1]}`
  const decode = /^Unable to decode [^]* into an? ([^"]+)$/.exec(message)
  if (decode !== null) return `must be ${/^[aeiou]/.test(decode[1]!) ? "an" : "a"} ${decode[1]}`
  return message.includes("actual ") ? "has an invalid value" : message
}

/** The 400 for input that broke the contract's schemas: every issue in `details`, summed up in `error`. */
export const invalidRequest = (details: ReadonlyArray<{ readonly path: string; readonly message: string }>) => {
  const shown = details.map((d) => ({ path: d.path, message: withoutValue(d.message) }))
  return new BadRequest({
    error: `invalid request: ${shown.map((d) => d.path === "" ? d.message : `${d.path}: ${d.message}`).join("; ")}`,
    code: "invalid_request",
    details: shown
  })
}

/** Tells API errors from other failures. */
export const isApiError = (u: unknown): u is ApiError =>
  typeof u === "object" && u !== null && "_tag" in u && typeof u._tag === "string" && u._tag in status &&
  "code" in u && "error" in u

/** Domain failures the API translates. */
export type DomainError =
  | Account.AccountNotFound
  | Account.UsernameTaken
  | Account.LastAdminAccount
  | Account.WrongPassword
  | Account.NotAllowed
  | Account.InvalidCredentials
  | Errors.InvalidInput
  | Errors.StorageError
  | Bot.BotNotFound
  | Bot.DuplicateToken
  | Bot.BotDisabled
  | Bot.HistoryDisabled
  | Message.NotEditable
  | Media.FileNotFound
  | Media.FileTooBig
  | Route.RouteNotFound
  | Bridge.BridgeNotFound
  | ChatTag.TagNotFound
  | ApiKey.ApiKeyNotFound
  | ApiKey.LastAdminKey
  | Deliveries.DeliveryNotFound
  | LongPoll.PollConflict
  | LongPoll.LongPollDisabled
  | LlmSettings.LlmSettingFixed
  | TelegramError.TelegramApiError
  | TelegramError.TelegramTransportError
  | Outgoing.OutgoingNotFound
  | Outgoing.NotResolvable
  | IdempotencyKey.KeyReused
  | IdempotencyKey.KeyInProgress

/** The API error a domain failure becomes. Storage causes are logged, never sent. */
export const fromDomain = (e: DomainError): Effect.Effect<never, ApiError> => {
  switch (e._tag) {
    case "InvalidInput":
      return Effect.fail(new BadRequest({ error: `invalid request: ${e.message}`, code: "invalid_request", details: e.details }))
    case "BotNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "bot_not_found" }))
    case "AccountNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "account_not_found" }))
    case "UsernameTaken":
      return Effect.fail(new Conflict({ error: e.message, code: "username_taken" }))
    case "LastAdminAccount":
      return Effect.fail(new Conflict({ error: e.message, code: "last_admin" }))
    case "WrongPassword":
      return Effect.fail(
        new BadRequest({
          error: e.message,
          code: "wrong_password",
          details: [{ path: "old_password", message: e.message }]
        })
      )
    case "NotAllowed":
      return Effect.fail(new Forbidden({ error: e.reason, code: "forbidden" }))
    case "InvalidCredentials":
      return Effect.fail(new Unauthorized({ error: "invalid username or password", code: "invalid_credentials" }))
    case "BridgeNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "bridge_not_found" }))
    case "RouteNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "route_not_found" }))
    case "TagNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "tag_not_found" }))
    case "DeliveryNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "delivery_not_found" }))
    case "ApiKeyNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "api_key_not_found" }))
    case "DuplicateToken":
      return Effect.fail(new Conflict({ error: e.message, code: "duplicate_token" }))
    case "BotDisabled":
      return Effect.fail(new Conflict({ error: e.message, code: "bot_disabled" }))
    case "HistoryDisabled":
      return Effect.fail(new Conflict({ error: e.message, code: "history_disabled" }))
    case "NotEditable":
      return Effect.fail(new BadRequest({ error: e.message, code: "not_editable" }))
    case "FileNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "file_not_found" }))
    case "FileTooBig":
      return Effect.fail(new BadRequest({ error: e.message, code: "file_too_big" }))
    case "LastAdminKey":
      return Effect.fail(new Conflict({ error: e.message, code: "last_admin_key" }))
    case "PollConflict":
      return Effect.fail(new Conflict({ error: e.message, code: "poll_conflict" }))
    case "LongPollDisabled":
      return Effect.fail(new Conflict({ error: e.message, code: "long_poll_disabled" }))
    case "LlmSettingFixed":
      return Effect.fail(new Conflict({ error: e.message, code: "llm_setting_from_env" }))
    case "TelegramApiError":
      return e.error_code === 429
        ? Effect.fail(
          new TooManyRequests({
            error: `Telegram rate limit: ${e.description}`,
            code: "telegram_rate_limited",
            ...(e.retry_after === undefined ? {} : { retry_after: e.retry_after })
          })
        )
        : Effect.fail(new BadGateway({ error: `Telegram error: ${e.description}`, code: "telegram_error" }))
    case "TelegramTransportError":
      return Effect.fail(new ServiceUnavailable({ error: "Telegram is unreachable; try again later", code: "telegram_unreachable" }))
    case "OutgoingNotFound":
      return Effect.fail(new NotFound({ error: e.message, code: "message_not_found" }))
    case "NotResolvable":
      return Effect.fail(new Conflict({ error: e.message, code: "delivery_not_resolvable" }))
    case "KeyReused":
      return Effect.fail(new UnprocessableEntity({ error: e.message, code: "idempotency_key_reused" }))
    case "KeyInProgress":
      return Effect.fail(new Conflict({ error: e.message, code: "idempotency_in_progress" }))
    case "StorageError":
      return Effect.logError(`${e.message}`, e.cause).pipe(
        Effect.zipRight(Effect.fail(new InternalServerError({ error: "internal error", code: "internal_error" })))
      )
  }
}
