import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as PlatformHttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type {
  Accounts,
  ApiKeys,
  AuditLog,
  Bots,
  Bridges,
  ChatAdmin,
  MediaFiles,
  Chats,
  Configuration,
  Deliveries,
  EventLog,
  Health,
  Idempotency,
  LlmSettings,
  LoginThrottle,
  LongPoll,
  Messages,
  People,
  Routes,
  Search,
  SentMessages,
  Statistics,
  Tags,
  Webhooks
} from "@botrelay/core"
import type { CannedReplies, Notes } from "@botrelay/core"
import { Identity, type StatusReport } from "@botrelay/core"
import type { HttpExchange, TelegramClient } from "@botrelay/telegram"
import { Cause, Effect, Layer, Option } from "effect"
import { Api, HealthUnavailable } from "./Api.js"
import * as AccountsHandlers from "./AccountsHandlers.js"
import * as ApiError from "./ApiError.js"
import * as ConsoleFiles from "./ConsoleFiles.js"
import * as Handlers from "./Handlers.js"
import * as MediaUpload from "./MediaUpload.js"
import * as MetricsEndpoint from "./MetricsEndpoint.js"
import * as InboxHandlers from "./InboxHandlers.js"
import * as NotesHandlers from "./NotesHandlers.js"
import * as CannedRepliesHandlers from "./CannedRepliesHandlers.js"
import * as TgApi from "./TgApi.js"
import * as WebhookIngress from "./WebhookIngress.js"

/** The largest request body the API reads. */
export const maxBodyBytes = 1024 * 1024

/** The deepest nesting of arrays and objects a JSON body may have (Telegram's updates stay under 20). */
export const maxJsonDepth = 64

/** Whether JSON text nests arrays and objects deeper than `max`; one pass, strings skipped. */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}


const json = (status: number, body: object, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers })

/** The response for an API error: `{ error, code, details? }` with its status and headers. */
export const render = (e: ApiError.ApiError): HttpServerResponse.HttpServerResponse => {
  const headers: Record<string, string> = {}
  if (e._tag === "Unauthorized") headers["www-authenticate"] = "Bearer"
  if (e._tag === "TooManyRequests" && e.retry_after !== undefined) headers["retry-after"] = String(e.retry_after)
  return json(
    ApiError.status[e._tag],
    e.details === undefined ? { error: e.error, code: e.code } : { error: e.error, code: e.code, details: e.details },
    headers
  )
}

const allowedMethods = (() => {
  const methods = new Map<string, Set<string>>([["/api/openapi.json", new Set(["GET"])]])
  HttpApi.reflect(Api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      const set = methods.get(endpoint.path) ?? new Set<string>()
      set.add(endpoint.method)
      methods.set(endpoint.path, set)
    }
  })
  return methods
})()

const notRouted = (request: HttpServerRequest.HttpServerRequest) => {
  const path = new URL(request.url, "http://localhost").pathname.replace(/(.)\/+$/, "$1")
  const allowed = allowedMethods.get(path)
  if (allowed !== undefined && !allowed.has(request.method)) {
    const allow = [...allowed].join(", ")
    return json(405, { error: `${request.method} is not allowed here; use ${allow}`, code: "method_not_allowed" }, {
      allow
    })
  }
  const shown = /^\/api(\/[A-Za-z0-9._-]*)*$/.test(path) && path.length <= 200 ? ` ${path}` : ""
  return json(404, { error: `no such endpoint: ${request.method}${shown}`, code: "not_found" })
}

const issuePath = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

const decodeError = (e: HttpApiError.HttpApiDecodeError) =>
  render(ApiError.invalidRequest(e.issues.map((issue) => ({ path: issuePath(issue.path), message: issue.message }))))

const tooDeep = json(400, {
  error: `invalid request: the JSON body nests deeper than ${maxJsonDepth} levels`,
  code: "invalid_json"
})

const tooLarge = json(413, {
  error: `request body is larger than ${maxBodyBytes} bytes`,
  code: "payload_too_large"
})

const isBodyLimit = (cause: unknown) => cause instanceof Error && cause.message === "maxBytes exceeded"

/** The answer to a request, every failure rendered; see `errorResponses`. */
const answer = (files: Option.Option<ConsoleFiles.ConsoleFiles["Type"]>, app: PlatformHttpApp.Default<never>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (TgApi.isProxyUrl(request.url)) return yield* app
    if (MediaUpload.isUpload(request.method, request.url, request.headers["content-type"])) return yield* app
    const length = Number(request.headers["content-length"] ?? 0)
    if (length > maxBodyBytes) return tooLarge
    const contentType = request.headers["content-type"]
    const asJson = contentType === undefined || /^application\/([\w.+-]+\+)?json\b/i.test(contentType)
      ? request
      : request.modify({ headers: { ...request.headers, "content-type": "application/json" } })
    if (asJson.method !== "GET" && asJson.method !== "HEAD") {
      const text = yield* Effect.orElseSucceed(asJson.text, () => "")
      if (nestsDeeperThan(text, maxJsonDepth)) return tooDeep
    }
    return yield* (asJson === request ? app : Effect.provideService(app, HttpServerRequest.HttpServerRequest, asJson))
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.gen(function*() {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) {
          const e: unknown = failure.value
          if (ApiError.isApiError(e)) return render(e)
          if (e instanceof HealthUnavailable) {
            return json(503, { status: e.status, storage: e.storage, error: e.error, code: e.code })
          }
          if (e instanceof HttpApiError.HttpApiDecodeError) return decodeError(e)
          if (e instanceof HttpServerError.RouteNotFound) {
            return Option.getOrElse(Option.flatMap(files, (console) => console.respond(e.request)), () => notRouted(e.request))
          }
          if (e instanceof HttpServerError.RequestError) {
            return isBodyLimit(e.cause)
              ? tooLarge
              : json(400, { error: "invalid request: the body could not be read", code: "invalid_request" })
          }
        }
        if (Cause.isInterruptedOnly(cause)) return yield* Effect.failCause(cause)
        const defect = Cause.dieOption(cause)
        if (Option.isSome(defect) && defect.value instanceof HttpServerError.RequestError) {
          return isBodyLimit(defect.value.cause)
            ? tooLarge
            : json(400, { error: "invalid request: the body is not valid JSON", code: "invalid_json" })
        }
        yield* Effect.logError("unhandled failure", cause)
        return json(500, { error: "internal error", code: "internal_error" })
      })
    )
  )

/**
 * Reads every body as JSON whatever its content type (so `curl -d '{...}'` works), answers 413
 * before reading a body declared over the limit (except under /tgapi, which passes bodies on as they
 * are and has its own limit), 400 to JSON nested deeper than `maxJsonDepth`, and renders every failure as `{ error, code }` JSON: API errors with their status, decode errors as
 * 400 with `details`, unknown paths as 404 or 405, over-large bodies as 413, defects as a bare 500.
 * A GET outside the API's paths is the console's (see ConsoleFiles) when the host provides it.
 * Every answer carries the instance id (`X-Botrelay-Instance`).
 */
export const errorResponses = HttpApiBuilder.middleware(
  Api,
  Effect.map(
    Effect.all([Effect.serviceOption(ConsoleFiles.ConsoleFiles), Identity.Identity]),
    ([files, identity]) => (app: PlatformHttpApp.Default<never>) =>
      Effect.map(answer(files, app), HttpServerResponse.setHeader(Identity.header, identity.id))
  )
)

/**
 * The API implementation, its OpenAPI document, the webhook ingress (`POST /telegram/webhook/:bot_id`)
 * and the Bot API proxy (`/tgapi`), on the core services and the Telegram client; the proxy
 * also needs where to pass calls on (`TgApi.Upstream`) and HTTP clients to do it with (`HttpExchange`, `HttpClient`).
 */
export const layer: Layer.Layer<
  HttpApi.Api,
  never,
  | Health.Health
  | Idempotency.Idempotency
  | StatusReport.StatusReport
  | Identity.Identity
  | Accounts.Accounts
  | AuditLog.AuditLog
  | LoginThrottle.LoginThrottle
  | Bots.Bots
  | Bridges.Bridges
  | Routes.Routes
  | Messages.Messages
  | ChatAdmin.ChatAdmin
  | MediaFiles.MediaFiles
  | Tags.Tags
  | Notes.Notes
  | CannedReplies.CannedReplies
  | Chats.Chats
  | Configuration.Configuration
  | People.People
  | Statistics.Statistics
  | Search.Search
  | ApiKeys.ApiKeys
  | Deliveries.Deliveries
  | EventLog.EventLog
  | LlmSettings.LlmSettings
  | Webhooks.Webhooks
  | SentMessages.SentMessages
  | LongPoll.LongPoll
  | TelegramClient.TelegramClient
  | HttpClient.HttpClient
  | HttpExchange.HttpExchange
  | TgApi.Upstream
> = HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" }).pipe(
  Layer.provideMerge(Layer.mergeAll(
    HttpApiBuilder.api(Api).pipe(
      Layer.provide(Layer.mergeAll(
        Handlers.layer,
        InboxHandlers.layer,
        AccountsHandlers.layer,
        NotesHandlers.layer,
        CannedRepliesHandlers.layer
      ))
    ),
    errorResponses,
    WebhookIngress.layer,
    MetricsEndpoint.layer,
    TgApi.layer
  ))
)

/** Applies the body limit to an app; the host's server uses it when serving the API. */
export const withBodyLimit = <E, R>(app: PlatformHttpApp.Default<E, R>) =>
  HttpIncomingMessage.withMaxBodySize(app, Option.some(maxBodyBytes))
