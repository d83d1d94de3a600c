import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Accounts, ApiKeys, AuditLog } from "@botrelay/core"
import { Effect, Layer, Option, Redacted } from "effect"
import { Authorization, Caller, type CallerInfo } from "./Api.js"
import * as ApiError from "./ApiError.js"
import { actorOf, record } from "./Audited.js"
import * as RateLimit from "./RateLimit.js"
import * as RequestActor from "./RequestActor.js"

/** The name of the session cookie. */
export const sessionCookie = "botrelay_session"


const unauthorized = (error: string) => new ApiError.Unauthorized({ error, code: "unauthorized" })

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

/** Equal strings, compared in time independent of where they differ. */
export const sameSecret = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/**
 * Whether a browser request comes from Botrelay's own origin: no `Origin` (not sent by every browser on
 * every request) or one whose host is the request's; `Origin: null` (sandboxed or privacy-redirected) is not.
 */
export const sameOrigin = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const origin = request.headers["origin"]
  if (origin === undefined) return true
  if (!URL.canParse(origin)) return false
  return new URL(origin).host === request.headers["host"]
}

/** The 403 a cookie-authenticated change without its CSRF token (or from another origin) gets. */
const csrfRefusal = (caller: CallerInfo, reason: string) =>
  record(
    "auth.csrf",
    actorOf(caller),
    "denied",
    { details: { error: reason } }
  ).pipe(Effect.zipRight(Effect.fail(new ApiError.Forbidden({ error: reason, code: "csrf" }))))

/**
 * Authentication of every /api request but login: a Bearer API key, or else the session cookie of a
 * signed-in account. A cookie-authenticated request that changes anything must carry the session's
 * `X-CSRF-Token` and come from Botrelay's origin. A refused known key is recorded in the audit log. The
 * caller's request is then taken from its rate limit (see RateLimit).
 */
export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const keys = yield* ApiKeys.ApiKeys
    const accounts = yield* Accounts.Accounts
    const audit = yield* AuditLog.AuditLog
    const audited = Effect.provideService(AuditLog.AuditLog, audit)
    const storageFailure = () => unauthorized("credentials could not be checked")

    const refusedKey = (secret: Redacted.Redacted<string>) =>
      keys.identify(secret).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.void,
          onSome: (key) =>
            audited(record("auth.key", { type: "key", id: key.id, name: key.name }, "denied", {
              details: { error: "the API key is disabled" }
            }))
        })),
        Effect.catchAll(() => Effect.void)
      )

    return Authorization.of({
      bearer: (secret) =>
        Redacted.value(secret) === ""
          ? Effect.fail(unauthorized("missing API key or session"))
          : keys.authenticate(secret).pipe(
            Effect.mapError(storageFailure),
            Effect.flatMap(Option.match({
              onNone: (): Effect.Effect<
                CallerInfo,
                ApiError.Unauthorized | ApiError.TooManyRequests,
                HttpServerRequest.HttpServerRequest
              > =>
                Effect.zipRight(refusedKey(secret), Effect.fail(unauthorized("missing or invalid API key"))),
              onSome: (key) =>
                Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
                  RequestActor.set(request, `key:${key.id}`)
                  return Effect.as(
                    RateLimit.charge({ type: "key", id: key.id }),
                    Caller.of({ type: "key", id: key.id, name: key.name, role: key.role, bot_ids: key.bot_ids, scopes: key.scopes })
                  )
                })
            }))
          ),
      session: (session) =>
        Effect.gen(function*() {
          yield* RateLimit.refused
          const request = yield* HttpServerRequest.HttpServerRequest
          if ((request.headers["authorization"] ?? "") !== "") {
            return yield* Effect.fail(unauthorized("missing or invalid API key"))
          }
          if (Redacted.value(session) === "") {
            return yield* Effect.fail(unauthorized("missing API key or session: send Authorization: Bearer <key>, or sign in"))
          }
          const found = yield* accounts.resolve(session).pipe(Effect.mapError(storageFailure))
          if (Option.isNone(found)) {
            return yield* Effect.fail(unauthorized("the session has ended or is not valid; sign in again"))
          }
          const { account, csrf_token } = found.value
          RequestActor.set(request, `account:${account.id}`)
          const caller = Caller.of({
            type: "account",
            id: account.id,
            name: account.username,
            role: account.role,
            bot_ids: account.bot_ids,
            scopes: account.scopes,
            session
          })
          if (!safeMethods.has(request.method)) {
            if (!sameSecret(request.headers["x-csrf-token"] ?? "", csrf_token)) {
              return yield* audited(csrfRefusal(caller, "this change needs the session's X-CSRF-Token header"))
            }
            if (!sameOrigin(request)) {
              return yield* audited(csrfRefusal(caller, "this change must come from Botrelay's own origin"))
            }
          }
          yield* RateLimit.charge(caller)
          return caller
        })
    })
  })
)
