import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { Accounts, ApiKeys } from "@botrelay/core"
import { AuditLog } from "@botrelay/core"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { Authorization, Caller } from "./Api.js"
import * as Access from "./Access.js"
import * as ApiError from "./ApiError.js"
import { AuthorizationLive, sameSecret, sessionCookie } from "./Authentication.js"

/** Where Prometheus scrapes: outside /api, so that nothing limiting /api (rate limits) ever applies. */
export const path = "/metrics"

/** The content type of Prometheus' text format 0.0.4. */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

/** What `/metrics` serves, as the host builds it: the metrics as Prometheus text, and the scrape token. */
export interface ExpositionService {
  /** `BOTRELAY_METRICS_TOKEN`: a Bearer token that may read the metrics (and nothing else). */
  readonly token: Option.Option<Redacted.Redacted<string>>
  /** The metrics in Prometheus' text format 0.0.4. */
  readonly render: Effect.Effect<string>
}

/** The host's metrics; without it, `/metrics` is not served (404). */
export class Exposition extends Context.Tag("@botrelay/http/MetricsEndpoint/Exposition")<
  Exposition,
  ExpositionService
>() {}

const bearerOf = (header: string | undefined) => {
  const match = /^Bearer\s+(.*)$/i.exec(header ?? "")
  return match === null ? undefined : match[1]!.trim()
}

/**
 * `GET /metrics`: the host's `Exposition`, for `Authorization: Bearer <metrics token>`, an admin key or an
 * admin session; an operator gets 403, anyone else 401, in the API's error shape.
 */
export const layer: Layer.Layer<never, never, ApiKeys.ApiKeys | Accounts.Accounts | AuditLog.AuditLog> = HttpApiBuilder
  .Router.use((router) =>
  Effect.gen(function*() {
    const exposition = yield* Effect.serviceOption(Exposition)
    if (Option.isNone(exposition)) return
    const { render, token } = exposition.value
    const authorization = yield* Authorization
    const audit = yield* AuditLog.AuditLog

    const caller = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const bearer = bearerOf(request.headers["authorization"])
      if (bearer !== undefined) {
        if (Option.isSome(token) && sameSecret(bearer, Redacted.value(token.value))) return Option.none()
        return Option.some(yield* authorization.bearer(Redacted.make(bearer)))
      }
      const session = request.cookies[sessionCookie]
      if (session !== undefined) return Option.some(yield* authorization.session(Redacted.make(session)))
      return yield* Effect.fail(
        new ApiError.Unauthorized({
          error: "missing credentials: send Authorization: Bearer <metrics token or admin key>",
          code: "unauthorized"
        })
      )
    })

    const handle = Effect.gen(function*() {
      const who = yield* caller
      if (Option.isSome(who)) yield* Effect.provideService(Access.requireAdmin, Caller, who.value)
      return HttpServerResponse.text(yield* render, { contentType })
    }).pipe(
      Effect.provideService(AuditLog.AuditLog, audit),
      Effect.catchIf(ApiError.isApiError, (e) =>
        Effect.succeed(HttpServerResponse.unsafeJson({ error: e.error, code: e.code }, {
          status: ApiError.status[e._tag],
          headers: e._tag === "Unauthorized" ? { "www-authenticate": "Bearer" } : {}
        })))
    )

    yield* router.get(path, handle)
  })
).pipe(Layer.provide(AuthorizationLive))
