import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type Errors, Idempotency, IdempotencyKey, type Message, type Outgoing } from "@botrelay/core"
import { Data, Effect, Option, Schema } from "effect"
import { orDomain } from "./Access.js"
import { Caller } from "./Api.js"
import * as ApiError from "./ApiError.js"

/** The header that makes a send idempotent, and the one that marks a replayed answer. */
export const keyHeader = "idempotency-key"
export const replayedHeader = "Idempotent-Replayed"

/** A send that did not end `sent`: the answer it gets, its status and body (`error`, `code`, the stored `message`). */
export class Undelivered extends Data.TaggedError("Undelivered")<{
  readonly status: number
  readonly error: string
  readonly code: string
  readonly body: Readonly<Record<string, unknown>>
}> {}

/**
 * The answer of a failed or unknown delivery: 502 (503 when the call never reached Telegram, 429 for a rate
 * limit outlasting the retries), or 504.
 */
export const undelivered = (e: Outgoing.DeliveryFailed | Outgoing.DeliveryUnknown): Undelivered => {
  if (e._tag === "DeliveryUnknown") {
    const error = `no answer from Telegram; the message may have been delivered (${e.description})`
    return new Undelivered({
      status: 504,
      error,
      code: "delivery_unknown",
      body: { error, code: "delivery_unknown", message: e.stored }
    })
  }
  const [status, error, code] = e.error_code === 429
    ? [429, `Telegram rate limit: ${e.description}`, "telegram_rate_limited"]
    : e.error_code === 0
    ? [503, `Telegram is unreachable: ${e.description}`, "telegram_unreachable"]
    : [502, `Telegram error: ${e.description}`, "telegram_error"]
  return new Undelivered({
    status,
    error,
    code,
    body: { error, code, ...(e.retry_after === undefined ? {} : { retry_after: e.retry_after }), message: e.stored }
  })
}

/** A send's failures as answers: undelivered messages as `Undelivered`, the others as API errors. */
export const orUndelivered = (
  e: ApiError.ApiError | ApiError.DomainError | Outgoing.DeliveryFailed | Outgoing.DeliveryUnknown
): Effect.Effect<never, ApiError.ApiError | Undelivered> =>
  e._tag === "DeliveryFailed" || e._tag === "DeliveryUnknown" ? Effect.fail(undelivered(e)) : orDomain(e)

/** The seconds of a 429 answer's `retry_after`, for its `Retry-After` header. */
const retryAfterOf = (status: number, body: string): string | undefined => {
  if (status !== 429) return undefined
  const seconds = (JSON.parse(body) as { readonly retry_after?: unknown }).retry_after
  return typeof seconds === "number" ? String(Math.ceil(seconds)) : undefined
}

const json = (status: number, body: string, replayed: boolean) => {
  const retryAfter = retryAfterOf(status, body)
  return HttpServerResponse.text(body, {
    status,
    contentType: "application/json",
    headers: {
      ...(replayed ? { [replayedHeader.toLowerCase()]: "true" } : {}),
      ...(retryAfter === undefined ? {} : { "retry-after": retryAfter })
    }
  })
}

const decodeKey = Schema.decodeUnknownOption(IdempotencyKey.Key)

/** The request's `Idempotency-Key`, if it has one; 400 when it is not 1-255 printable ASCII characters. */
export const keyOf = (request: HttpServerRequest.HttpServerRequest) => {
  const raw = request.headers[keyHeader]
  if (raw === undefined) return Effect.succeed(Option.none<string>())
  return Option.match(decodeKey(raw), {
    onNone: () =>
      Effect.fail(
        new ApiError.BadRequest({
          error: "invalid request: Idempotency-Key must be 1 to 255 printable ASCII characters",
          code: "invalid_idempotency_key",
          details: [{ path: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters" }]
        })
      ),
    onSome: (key) => Effect.succeed(Option.some(key))
  })
}

/**
 * Answers a send: the stored message (200) or its `Undelivered` answer. With an `Idempotency-Key`, the
 * caller's first request with the key runs and its answer is kept 24 hours; a repeat gets it again with
 * `Idempotent-Replayed: true` and sends nothing (422 with another body, 409 while the first runs). `request`
 * is what identifies the request: its path and decoded body. API errors (nothing sent) are not kept.
 */
export const answer = <E extends { readonly _tag: string }, R>(
  request: string,
  send: Effect.Effect<Message.Message, E | Undelivered, R>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  Exclude<E, Undelivered> | ApiError.ApiError,
  R | Caller | Idempotency.Idempotency | HttpServerRequest.HttpServerRequest
> =>
  Effect.gen(function*() {
    const http = yield* HttpServerRequest.HttpServerRequest
    const key = yield* keyOf(http)
    const answered: Effect.Effect<IdempotencyKey.Answer, Exclude<E, Undelivered>, R> = send.pipe(
      Effect.map((m): IdempotencyKey.Answer => ({ status: 200, body: JSON.stringify(m) })),
      Effect.catchIf(
        (e): e is Undelivered => e._tag === "Undelivered",
        (e) => Effect.succeed<IdempotencyKey.Answer>({ status: e.status, body: JSON.stringify(e.body) })
      )
    )
    if (Option.isNone(key)) {
      const { body, status } = yield* answered
      return json(status, body, false)
    }
    const caller = yield* Caller
    const idempotency = yield* Idempotency.Idempotency
    const outcome = yield* idempotency.run(`${caller.type}:${caller.id}`, key.value, request, answered).pipe(
      Effect.catchIf(
        (e): e is IdempotencyKey.KeyReused | IdempotencyKey.KeyInProgress | Errors.StorageError =>
          e._tag === "KeyReused" || e._tag === "KeyInProgress" || e._tag === "StorageError",
        (e) => orDomain(e)
      )
    )
    return json(outcome.answer.status, outcome.answer.body, outcome.replayed)
  })
