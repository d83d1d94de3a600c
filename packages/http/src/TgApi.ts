import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { type Bot, Bots, CallParams, type Deliveries, type Errors, type LongPoll, SentMessages } from "@botrelay/core"
import { HttpExchange } from "@botrelay/telegram"
import { Cause, Context, Data, Deferred, Duration, Effect, Fiber, Layer, Option, Queue, Redacted, Stream, Take } from "effect"
import * as BotApiAnswer from "./BotApiAnswer.js"
import * as LocalMethods from "./LocalMethods.js"

/** Where /tgapi passes calls on to: the Bot API root, e.g. `https://api.telegram.org`. */
export class Upstream extends Context.Tag("@botrelay/http/TgApi/Upstream")<Upstream, {
  readonly apiRoot: string
}>() {}

/** The upstream Bot API root; a trailing slash is removed. */
export const upstream = (apiRoot: string): Layer.Layer<Upstream> =>
  Layer.succeed(Upstream, { apiRoot: apiRoot.replace(/\/+$/, "") })

/** The path the proxy serves under. */
export const prefix = "/tgapi"

/** Whether a request URL (path and query) is the proxy's. */
export const isProxyUrl = (url: string): boolean =>
  url.startsWith(prefix) && (url.length === prefix.length || url[prefix.length] === "/" || url[prefix.length] === "?")

/** Whether a request URL is a /tgapi call of a method Botrelay answers itself (whose body it reads whole). */
export const isLocalCall = (url: string): boolean => {
  const method = /^\/tgapi\/bot[^/?]+\/([^/?]+)/.exec(url)?.[1]
  return method !== undefined && LocalMethods.names.has(method.toLowerCase())
}

/** How long Telegram may take to answer a call passed on read whole. */
const passTimeout = Duration.minutes(2)

/** The largest body of a method Botrelay answers itself (getUpdates, setWebhook, ...). */
export const maxLocalBodyBytes = 1024 * 1024

/** The largest request body the proxy passes on: Telegram's 50 MB upload limit. */
export const maxBodyBytes = 50 * 1024 * 1024

/** Headers that describe one connection, not the message, and are never passed on. */
const hopByHop = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection"
])

/** How much more of an upload over the limit is read (and dropped) so the client sees the 413. */
const drainBytes = 16 * 1024 * 1024

/** Answers up to this size are read whole and sent on in one piece; larger ones are streamed. */
const smallAnswerBytes = 64 * 1024

/** Request headers a file download passes on. */
const downloadHeaders = ["range", "if-range", "if-none-match", "if-modified-since"] as const

class BodyTooLarge extends Data.TaggedError("BodyTooLarge")<{}> {}

const disabled = (bot: Bot.StoredBot) =>
  BotApiAnswer.error(
    403,
    `Forbidden: bot ${bot.id} is disabled in Botrelay; enable it with POST /api/bots/toggle-disabled?id=${bot.id}`
  )

/** A percent-encoded path segment decoded, or undefined when it is malformed. */
export const decode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

const methodPattern = /^[A-Za-z0-9_]{1,64}$/

/** Characters no decoded path segment may hold: separators and controls. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const unsafeInSegment = /[/\\\u0000-\u001f\u007f]/

/**
 * A path segment decoded, checked and percent-encoded again; undefined when it is malformed, empty,
 * `.`, `..`, or holds `/`, `\\` or a control character once decoded.
 */
const safeSegment = (segment: string): string | undefined => {
  const decoded = decode(segment)
  if (decoded === undefined || decoded === "" || decoded === "." || decoded === ".." || unsafeInSegment.test(decoded)) {
    return undefined
  }
  return encodeURIComponent(decoded)
}

/**
 * A file path under `file/bot<token>/` rebuilt from its segments, each decoded, checked and encoded
 * again, so nothing in it can climb out of the bot's files; undefined when a segment is unsafe.
 */
export const safeFilePath = (path: string): string | undefined => {
  const segments: Array<string> = []
  for (const segment of path.split("/")) {
    const safe = safeSegment(segment)
    if (safe === undefined) return undefined
    segments.push(safe)
  }
  return segments.join("/")
}

/** The bot's token as one URL path segment (`:` kept as it is). */
export const tokenSegment = (bot: Bot.StoredBot): string =>
  encodeURIComponent(Redacted.value(bot.token)).replaceAll("%3A", ":")

/** The headers of Telegram's answer the client gets: all but the hop-by-hop ones. */
const passedHeaders = (answer: Readonly<Record<string, string>>): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const name in answer) {
    if (!hopByHop.has(name)) headers[name] = answer[name]!
  }
  return headers
}

const isJsonOrForm = (contentType: string | undefined) =>
  contentType === undefined || /^\s*application\/(json|x-www-form-urlencoded)\b/i.test(contentType)

const isBodyLimit = (error: unknown) =>
  typeof error === "object" && error !== null && (error as { cause?: unknown }).cause instanceof Error &&
  ((error as { cause: Error }).cause.message === "maxBytes exceeded")

/** The description of the 502 for a call Telegram did not answer: the failure's code, never the URL or the token. */
const badGatewayDescription = (phase: "request" | "answer", code: string | undefined) =>
  `Bad Gateway: ${phase === "answer" ? "Telegram's answer could not be read" : "Telegram could not be reached"}${
    code === undefined ? "" : ` (${code})`
  }`

const clientFailure = (error: HttpClientError.HttpClientError) =>
  BotApiAnswer.error(
    502,
    badGatewayDescription(error._tag === "ResponseError" ? "answer" : "request", HttpExchange.errorCode(error.cause))
  )

/** The 502's description for a call read whole that Telegram did not answer. */
export const exchangeFailureDescription = (error: HttpExchange.HttpExchangeError) =>
  badGatewayDescription(error.reason === "Answer" || error.reason === "TooLarge" ? "answer" : "request", error.code)

/** A call whose body is read whole (JSON, form or none), as it is passed on. */
export interface WholeCall {
  readonly bot: Bot.StoredBot
  /** The method name as the client sent it. */
  readonly method: string
  /** The query string, with its `?`, or "". */
  readonly search: string
  readonly httpMethod: string
  readonly contentType: string | undefined
  readonly body: Uint8Array | undefined
}

/** Telegram's answer as the client gets it: hop-by-hop headers removed. */
export interface Relayed {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

/** Whether a method's call can be passed on read whole: not answered locally, JSON, form or no body. */
export const passesWhole = (method: string, contentType: string | undefined): boolean =>
  methodPattern.test(method) && !LocalMethods.names.has(method.toLowerCase()) && isJsonOrForm(contentType)

const decoder = new TextDecoder()

/** The call as it goes to the Bot API at `apiRoot`: method, query string, content type and body unchanged. */
export const upstreamRequest = (apiRoot: string, call: WholeCall): HttpExchange.Request => ({
  method: call.httpMethod,
  url: `${apiRoot}/bot${tokenSegment(call.bot)}/${call.method}${call.search}`,
  headers: call.contentType === undefined ? {} : { "content-type": call.contentType },
  body: call.body,
  timeout: passTimeout,
  maxBytes: maxBodyBytes
})

/** Telegram's answer as the client gets it. */
export const relayed = (answer: HttpExchange.Answer): Relayed => ({
  status: answer.status,
  headers: passedHeaders(answer.headers),
  body: answer.body
})

/** What to record in the bot's history of a call Telegram answered, or undefined when nothing. */
export const captured = (call: WholeCall, answer: HttpExchange.Answer): SentMessages.Call | undefined => {
  if (!SentMessages.keeps(call.bot, "tgapi") || answer.status !== 200) return undefined
  const method = call.method.toLowerCase()
  if (!SentMessages.captures(method)) return undefined
  const result = SentMessages.resultOf(decoder.decode(answer.body))
  if (Option.isNone(result)) return undefined
  const params = SentMessages.needsParams(method) ? CallParams.parse(call.search, call.body, call.contentType) : {}
  return { bot: call.bot, method, params, result: result.value }
}

/**
 * Passing on calls read whole, and capturing what calls sent for bots that keep history; shared by the
 * proxy's route and by hosts that serve the hottest calls closer to the socket.
 */
export const makeRelay = Effect.gen(function*() {
  const { apiRoot } = yield* Upstream
  const exchange = yield* HttpExchange.HttpExchange
  const sent = yield* SentMessages.SentMessages

  /** Records what the calls did in their bots' history; a failure is logged, never the client's. */
  const capture = (calls: ReadonlyArray<SentMessages.Call>) =>
    sent.capture(calls, "tgapi").pipe(
      Effect.catchAllCause((cause) =>
        Effect.logWarning("could not capture what calls through /tgapi sent", Cause.squash(cause)).pipe(
          Effect.annotateLogs({ bot_ids: [...new Set(calls.map((c) => c.bot.id))].join(","), calls: calls.length })
        )
      )
    )

  /** Passes the call on and captures what it sent; Telegram's answer, or why there is none. */
  const passWhole = (call: WholeCall): Effect.Effect<Relayed, HttpExchange.HttpExchangeError> =>
    Effect.gen(function*() {
      const answer = yield* exchange.exchange(upstreamRequest(apiRoot, call))
      const record = captured(call, answer)
      if (record !== undefined) yield* capture([record])
      return relayed(answer)
    })

  return { passWhole, capture, upstreamRequest: (call: WholeCall) => upstreamRequest(apiRoot, call) } as const
})

/** What the proxy runs on. */
export type Requirements =
  | HttpClient.HttpClient
  | SentMessages.SentMessages
  | Bots.Bots
  | Deliveries.Deliveries
  | LongPoll.LongPoll
  | Upstream
  | HttpExchange.HttpExchange

/** A call's request, as far as the proxy reads it. */
interface Call {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly bot: Bot.StoredBot
  /** The query string, with its `?`, or "". */
  readonly search: string
}

/**
 * The Bot API proxy under `/tgapi`: `bot<token>/<method>` and `file/bot<token>/<path>` for registered
 * bots only (unknown tokens get Telegram's 401, malformed paths its 404, disabled bots a 403, none
 * relayed). getUpdates, setWebhook, deleteWebhook, getWebhookInfo, logOut and close are answered by
 * Botrelay; every other call goes to the upstream Bot API unchanged (method, query string, content
 * type, body bytes; bodies other than JSON or form are streamed unless capture needs their
 * parameters) and its answer comes back unchanged. What the calls of bots with `manage_enabled`
 * send, edit or delete is captured in their history.
 */
export const make: Effect.Effect<
  Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest>,
  never,
  Requirements
> = Effect.gen(function*() {
  const bots = yield* Bots.Bots
  const { apiRoot } = yield* Upstream
  const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const { capture, passWhole } = yield* makeRelay
  const local = yield* LocalMethods.make

  /** Reads the whole body, up to `limit` bytes (413 beyond). */
  const readBody = (request: HttpServerRequest.HttpServerRequest, limit = maxBodyBytes) =>
    request.arrayBuffer.pipe(
      Effect.map((buffer) => new Uint8Array(buffer)),
      Effect.mapError((e) =>
        isBodyLimit(e) ? BotApiAnswer.tooLarge : BotApiAnswer.badRequest("the body could not be read")
      ),
      HttpIncomingMessage.withMaxBodySize(Option.some(limit))
    )

  const hasBody = (request: HttpServerRequest.HttpServerRequest) =>
    request.method !== "GET" && request.method !== "HEAD" &&
    (Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined)

  const execute = (outgoing: HttpClientRequest.HttpClientRequest) =>
    Effect.mapError(client.execute(outgoing), clientFailure)

  /** Telegram's answer for the client: read whole when it is small, streamed when large or of unknown length. */
  const relay = (response: HttpClientResponse.HttpClientResponse) => {
    const headers = passedHeaders(response.headers)
    return Number(response.headers["content-length"]) <= smallAnswerBytes
      ? response.arrayBuffer.pipe(
        Effect.map((buffer) =>
          HttpServerResponse.uint8Array(new Uint8Array(buffer), { status: response.status, headers })
        ),
        Effect.mapError(clientFailure)
      )
      : Effect.succeed(HttpServerResponse.stream(response.stream, { status: response.status, headers }))
  }

  /**
   * Passes on a call whose body streams in (uploads); a body that runs past the limit ends it with a 413.
   * The client's body is read to its end whatever Telegram does (past the limit, up to `drainBytes` more,
   * dropped), so the client reads the answer instead of a reset connection; and the fiber that writes
   * the body to Telegram never logs its failure, whose message holds the URL and so the token.
   */
  const streamed = (call: Call, method: string) =>
    Effect.gen(function*() {
      const { request } = call
      const overLimit = yield* Deferred.make<never, BodyTooLarge>()
      const done = yield* Deferred.make<void>()
      const takes = yield* Queue.bounded<Take.Take<Uint8Array, unknown>>(8)
      const pass = (take: Take.Take<Uint8Array, unknown>) => Effect.raceFirst(Queue.offer(takes, take), Deferred.await(done))
      let seen = 0
      const reader = yield* request.stream.pipe(
        Stream.takeWhile(() => seen <= maxBodyBytes + drainBytes),
        Stream.runForEachChunk((chunk) => {
          for (const part of chunk) seen += part.length
          if (seen <= maxBodyBytes) return pass(Take.chunk(chunk))
          return Deferred.fail(overLimit, new BodyTooLarge())
        }),
        Effect.matchCauseEffect({ onSuccess: () => pass(Take.end), onFailure: (cause) => pass(Take.failCause(cause)) }),
        Effect.fork
      )
      const declared = request.headers["content-length"]
      const body = Stream.flattenTake(Stream.fromQueue(takes))
      const outgoing = HttpClientRequest.make(request.method)(
        `${apiRoot}/bot${tokenSegment(call.bot)}/${method}${call.search}`
      ).pipe(HttpClientRequest.setBody(
        HttpBody.stream(body, request.headers["content-type"], declared === undefined ? undefined : Number(declared))
      ))
      return yield* Effect.raceFirst(
        execute(outgoing).pipe(Effect.withUnhandledErrorLogLevel(Option.none())),
        Deferred.await(overLimit)
      ).pipe(
        Effect.mapError((e) => e instanceof BodyTooLarge ? BotApiAnswer.tooLarge : e),
        Effect.ensuring(Deferred.succeed(done, undefined).pipe(Effect.zipRight(Fiber.await(reader))))
      )
    })

  /**
   * Passes a call to Telegram: a JSON, form or empty body is read whole and sent as the same bytes,
   * anything else (multipart uploads) is streamed, unless capture needs its parameters. What the call
   * sent is captured when the bot keeps history.
   */
  const forward = (call: Call, method: string) =>
    Effect.gen(function*() {
      const { bot, request } = call
      const contentType = request.headers["content-type"]
      const declared = request.headers["content-length"]
      if (declared !== undefined && Number(declared) > maxBodyBytes) return BotApiAnswer.tooLarge
      const lower = method.toLowerCase()
      const capturing = SentMessages.keeps(bot, "tgapi") && SentMessages.captures(lower)
      const needsParams = capturing && SentMessages.needsParams(lower)
      const withBody = hasBody(request)
      if (withBody && !isJsonOrForm(contentType) && !needsParams) {
        const response = yield* streamed(call, method)
        if (!capturing || response.status !== 200) return yield* relay(response)
        const answer = yield* response.arrayBuffer.pipe(
          Effect.map((buffer) => new Uint8Array(buffer)),
          Effect.mapError(clientFailure),
          HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes))
        )
        const result = SentMessages.resultOf(decoder.decode(answer))
        if (Option.isSome(result)) yield* capture([{ bot, method: lower, params: {}, result: result.value }])
        const headers = passedHeaders(response.headers)
        return HttpServerResponse.uint8Array(answer, { status: response.status, headers })
      }
      const body = withBody ? yield* readBody(request) : undefined
      const answer = yield* passWhole({
        bot,
        method,
        search: call.search,
        httpMethod: request.method,
        contentType,
        body
      }).pipe(Effect.mapError((e) => BotApiAnswer.error(502, exchangeFailureDescription(e))))
      return HttpServerResponse.uint8Array(answer.body, { status: answer.status, headers: answer.headers })
    })

  /** Streams a file download from Telegram, ranges included. */
  const download = (call: Call, path: string) =>
    Effect.gen(function*() {
      const { request } = call
      if (request.method !== "GET" && request.method !== "HEAD") return BotApiAnswer.notFound
      const filesRoot = `${apiRoot}/file/bot${tokenSegment(call.bot)}/`
      const url = `${filesRoot}${path}${call.search}`
      if (!URL.canParse(url) || !new URL(url).href.startsWith(new URL(filesRoot).href)) return BotApiAnswer.notFound
      const passed: Record<string, string> = {}
      for (const name of downloadHeaders) {
        const value = request.headers[name]
        if (value !== undefined) passed[name] = value
      }
      const outgoing = HttpClientRequest.make(request.method)(url).pipe(HttpClientRequest.setHeaders(passed))
      return yield* relay(yield* execute(outgoing))
    })

  /** Parses `bot<token>/<rest>` and finds the bot: the call, or the answer for a bad path, token or bot. */
  const resolve = (
    request: HttpServerRequest.HttpServerRequest,
    path: string,
    search: string
  ): Effect.Effect<readonly [Call, string], HttpServerResponse.HttpServerResponse> =>
    Effect.gen(function*() {
      const match = /^bot([^/]+)\/(.+)$/.exec(path)
      const token = match === null ? undefined : decode(match[1]!)
      if (match === null || token === undefined || token === "") return yield* Effect.fail(BotApiAnswer.notFound)
      const found = yield* bots.byToken(token).pipe(
        Effect.catchTag("StorageError", (e: Errors.StorageError) =>
          Effect.logError("could not look up a /tgapi bot", e.cause).pipe(
            Effect.zipRight(Effect.fail(BotApiAnswer.internalError))
          ))
      )
      if (Option.isNone(found)) return yield* Effect.fail(BotApiAnswer.unauthorized)
      const bot = found.value
      if (bot.disabled) return yield* Effect.fail(disabled(bot))
      return [{ request, bot, search }, match[2]!] as const
    })

  const method = (request: HttpServerRequest.HttpServerRequest, path: string, search: string) =>
    Effect.gen(function*() {
      const [call, name] = yield* resolve(request, path, search)
      if (!methodPattern.test(name)) return BotApiAnswer.notFound
      const answer = local.get(name.toLowerCase())
      if (answer === undefined) return yield* forward(call, name)
      if (Number(request.headers["content-length"] ?? 0) > maxLocalBodyBytes) return BotApiAnswer.tooLarge
      const bytes = hasBody(request) ? yield* readBody(request, maxLocalBodyBytes) : undefined
      return yield* answer(call.bot, CallParams.parse(search, bytes, request.headers["content-type"]))
    })

  /** Logs an unexpected failure with the token replaced by `<token>`; the client gets a bare 500. */
  const unexpected = (rest: string, cause: Cause.Cause<unknown>) => {
    const segment = /^(?:file\/)?bot([^/]+)/.exec(rest)?.[1] ?? ""
    const secrets = [segment, decode(segment) ?? ""].filter((s) => s !== "")
    return Effect.logError(
      "a /tgapi call failed",
      secrets.reduce((text, secret) => text.replaceAll(secret, "<token>"), Cause.pretty(cause))
    ).pipe(Effect.as(BotApiAnswer.internalError))
  }

  const file = (request: HttpServerRequest.HttpServerRequest, path: string, search: string) =>
    Effect.gen(function*() {
      const [call, rest] = yield* resolve(request, path, search)
      const safe = safeFilePath(rest)
      return safe === undefined ? BotApiAnswer.notFound : yield* download(call, safe)
    })

  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = request.url
    const query = url.indexOf("?")
    const path = query === -1 ? url : url.slice(0, query)
    const search = query === -1 ? "" : url.slice(query)
    if (!path.startsWith(`${prefix}/`)) return BotApiAnswer.notFound
    const rest = path.slice(prefix.length + 1)
    const answer = rest.startsWith("file/") ? file(request, rest.slice(5), search) : method(request, rest, search)
    return yield* answer.pipe(
      Effect.merge,
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : unexpected(rest, cause)
      )
    )
  })
})

/**
 * Serves the proxy under `/tgapi` in the API's router, next to the webhook ingress.
 * A call ends when its client goes.
 */
export const layer: Layer.Layer<never, never, Requirements> = HttpApiBuilder.Router.use((router) =>
  Effect.flatMap(make, (app) => router.mountApp(prefix, Effect.interruptible(app), { includePrefix: true }))
)
