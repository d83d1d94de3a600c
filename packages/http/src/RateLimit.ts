import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type * as HttpApp from "@effect/platform/HttpApp"
import { Clock, Context, Effect, Option } from "effect"
import * as ApiError from "./ApiError.js"
import type { CallerInfo } from "./Api.js"
import { sessionCookie } from "./Authentication.js"

/** How fast /api requests may come: `rate` a second refilled per caller, up to `burst` at once; a `rate` of 0 is no limit. */
export interface Settings {
  readonly rate: number
  readonly burst: number
}

/** The limits the host sets; none unless it does (the standalone server: 20 a second, bursts of 100). */
export class Limits extends Context.Reference<Limits>()("@botrelay/http/RateLimit/Limits", {
  defaultValue: (): Settings => ({ rate: 0, burst: 100 })
}) {}

/** What taking a request from a caller's bucket says, in the terms of the `RateLimit-*` and `Retry-After` headers. */
export interface Decision {
  readonly allowed: boolean
  /** The bucket's size. */
  readonly limit: number
  /** Whole requests left now. */
  readonly remaining: number
  /** Whole seconds until the bucket is full again. */
  readonly reset: number
  /** Whole seconds (at least 1) until the next request is allowed; 0 when this one was. */
  readonly retryAfter: number
}

interface Bucket {
  tokens: number
  at: number
}

/** Token buckets by caller; the least recently used are forgotten beyond `maxCallers`. */
export interface Buckets {
  readonly take: (caller: string) => Effect.Effect<Decision>
}

/** The most callers whose buckets are kept; one forgotten starts full again. */
export const maxCallers = 10_000

/**
 * Token buckets under the settings, timed by Effect's Clock. A hand-written bucket: the libraries at hand either
 * delay instead of refusing (Effect's RateLimiter) or read the wall clock and timers of their own, which the
 * tests could not drive.
 */
export const buckets = (settings: Settings, options: { readonly maxCallers?: number } = {}): Buckets => {
  const kept = new Map<string, Bucket>()
  const most = options.maxCallers ?? maxCallers
  const { burst, rate } = settings
  return {
    take: (caller) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        let bucket = kept.get(caller)
        if (bucket === undefined) {
          bucket = { tokens: burst, at: now }
          if (kept.size >= most) kept.delete(kept.keys().next().value!)
        } else {
          kept.delete(caller)
          bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * rate)
          bucket.at = now
        }
        kept.set(caller, bucket)
        const allowed = bucket.tokens >= 1
        if (allowed) bucket.tokens -= 1
        return {
          allowed,
          limit: burst,
          remaining: Math.floor(bucket.tokens),
          reset: Math.ceil((burst - bucket.tokens) / rate),
          retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - bucket.tokens) / rate))
        }
      })
  }
}

/** The bucket key of a signed-in caller. */
export const callerKey = (caller: Pick<CallerInfo, "type" | "id">): string => `${caller.type}:${caller.id}`

/** The decision of the current request, once a bucket was taken from. */
interface Charge {
  decision: Decision | undefined
  readonly take: (caller: string) => Effect.Effect<Decision>
}

/** The current /api request's charge, when requests are limited. */
class CurrentCharge extends Context.Tag("@botrelay/http/RateLimit/CurrentCharge")<CurrentCharge, Charge>() {}

/** The 429 for a refused request. */
const refusal = (decision: Decision) =>
  new ApiError.TooManyRequests({
    error: `too many requests: try again in ${decision.retryAfter} s`,
    code: "rate_limited",
    retry_after: decision.retryAfter
  })

/**
 * Takes the authenticated caller's request from its bucket (once per request), failing with a 429 when it is
 * empty; nothing when requests are not limited. Authentication calls it.
 */
export const charge = (caller: Pick<CallerInfo, "type" | "id">): Effect.Effect<void, ApiError.TooManyRequests> =>
  Effect.flatMap(Effect.serviceOption(CurrentCharge), (current) => {
    if (Option.isNone(current) || current.value.decision !== undefined) return Effect.void
    const cell = current.value
    return Effect.flatMap(cell.take(callerKey(caller)), (decision) => {
      cell.decision = decision
      return decision.allowed ? Effect.void : Effect.fail(refusal(decision))
    })
  })

/**
 * Fails with the 429 when this request's caller was refused already: a later security scheme calls it first,
 * so that its own failure does not turn the refusal into a 401.
 */
export const refused: Effect.Effect<void, ApiError.TooManyRequests> = Effect.flatMap(
  Effect.serviceOption(CurrentCharge),
  (current) =>
    Option.isSome(current) && current.value.decision !== undefined && !current.value.decision.allowed
      ? Effect.fail(refusal(current.value.decision))
      : Effect.void
)

/** Paths never limited: the health check and the OpenAPI document; everything outside /api. */
export const limits = (url: string): boolean => {
  if (!url.startsWith("/api/") && url !== "/api" && !url.startsWith("/api?")) return false
  const query = url.indexOf("?")
  const path = (query === -1 ? url : url.slice(0, query)).replace(/(.)\/+$/, "$1")
  return path !== "/api/health" && path !== "/api/openapi.json"
}

const withHeaders = (response: HttpServerResponse.HttpServerResponse, decision: Decision) =>
  HttpServerResponse.setHeaders(response, {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.reset),
    ...(decision.allowed ? {} : { "retry-after": String(decision.retryAfter) })
  })

/**
 * Limits /api requests (but `limits`' exceptions) per caller: an API key or an account once authenticated
 * (see `charge`), else the client's IP address, taken before the request runs when it carries no credentials and
 * after it when its credentials were refused. Every limited path's answer carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset`; a refused one is a 429 `rate_limited` with `Retry-After`. A live
 * event stream or a long poll counts once, when it starts. `render` turns the 429 into the API's error answer.
 */
export const limited = <E, R>(
  app: HttpApp.Default<E, R>,
  settings: Settings,
  render: (error: ApiError.TooManyRequests) => HttpServerResponse.HttpServerResponse
): Effect.Effect<HttpApp.Default<E, R>> =>
  Effect.sync(() => {
    if (settings.rate <= 0) return app
    const kept = buckets(settings)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      if (!limits(request.url)) return app
      const ip = `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
      const cell: Charge = { decision: undefined, take: kept.take }
      const anonymous = (request.headers["authorization"] ?? "") === "" &&
        !(request.cookies[sessionCookie] !== undefined && request.cookies[sessionCookie] !== "")
      return Effect.gen(function*() {
        if (anonymous) {
          cell.decision = yield* kept.take(ip)
          if (!cell.decision.allowed) return withHeaders(render(refusal(cell.decision)), cell.decision)
        }
        const response = yield* Effect.provideService(app, CurrentCharge, cell)
        cell.decision ??= yield* kept.take(ip)
        return withHeaders(response, cell.decision)
      })
    })
  })
