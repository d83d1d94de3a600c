import type { IncomingMessage, ServerResponse } from "node:http"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpClient from "@effect/platform/HttpClient"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Console from "@botrelay/console"
import { EventLog, Identity, LongPoll } from "@botrelay/core"
import { BotApiAnswer, App, ConsoleFiles, LiveEvents, RateLimit, RequestActor, RequestSpans, TgApi } from "@botrelay/http"
import { Effect, Layer, type Scope } from "effect"
import * as BodyGuard from "./BodyGuard.js"
import type { Services } from "./Botrelay.js"
import * as ProxyFastPath from "./ProxyFastPath.js"
import * as RequestLog from "./RequestLog.js"

/**
 * A Node request handler serving Botrelay's whole HTTP surface: `/api`, `/tgapi`, the webhook ingress and the console.
 * Requests outside its prefix go to `next` when there is one (express, koa), else get a 404.
 */
export interface Handler {
  (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void): void
  /** Whether a request URL (path and query) is under the handler's prefix. */
  readonly handles: (url: string) => boolean
}

/** Where /tgapi passes calls on to, and the keep-alive client it streams uploads and downloads with. */
export const proxyLayer = (apiRoot: string): Layer.Layer<HttpClient.HttpClient | TgApi.Upstream> =>
  Layer.mergeAll(
    NodeHttpClient.layerWithoutAgent.pipe(Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: true }))),
    TgApi.upstream(apiRoot)
  )

/**
 * When the instance stops, answers held long polls and ends live event streams first (cutting off those
 * whose clients stopped reading), so they do not hold up the shutdown.
 */
export const endHeldRequestsOnStop: Layer.Layer<never, never, LongPoll.LongPoll | EventLog.EventLog> = Layer
  .scopedDiscard(
    Effect.gen(function*() {
      const longPoll = yield* LongPoll.LongPoll
      const log = yield* EventLog.EventLog
      yield* Effect.addFinalizer(() => Effect.all([longPoll.shutdown, log.close], { concurrency: 2, discard: true }))
    })
  )

/** Closes the connection under a request: what cuts off a live event stream whose client stopped reading. */
const disconnect = Layer.succeed(LiveEvents.Disconnect, (request) => {
  NodeHttpServerRequest.toServerResponse(request).destroy()
})

/** `"/botrelay/"` → `"/botrelay"`; `""` and `"/"` → `""`. */
const normalize = (prefix: string | undefined) => {
  const trimmed = (prefix ?? "").replace(/\/+$/, "")
  if (trimmed !== "" && !trimmed.startsWith("/")) throw new TypeError(`the prefix must start with "/": ${prefix}`)
  return trimmed
}

/** The URL under the prefix, or undefined when the request is outside it. */
const within = (url: string, prefix: string): string | undefined => {
  if (prefix === "") return url
  if (!url.startsWith(prefix)) return undefined
  const rest = url.slice(prefix.length)
  return rest === "" ? "/" : rest[0] === "/" ? rest : rest[0] === "?" ? `/${rest}` : undefined
}

/**
 * The body a host's parser (express.json, body-parser, koa-bodyparser) already read, as bytes again:
 * undefined when nothing read it. JSON and form bodies are written back from their parsed form.
 */
const consumedBody = (req: IncomingMessage): Uint8Array | undefined => {
  if (!req.readableEnded) return undefined
  const body: unknown = (req as { body?: unknown }).body
  if (body === undefined || body === null) return new Uint8Array()
  if (body instanceof Uint8Array) return body
  if (typeof body === "string") return Buffer.from(body)
  const type = req.headers["content-type"] ?? ""
  return Buffer.from(
    /application\/x-www-form-urlencoded/i.test(type)
      ? new URLSearchParams(body as Record<string, string>).toString()
      : JSON.stringify(body)
  )
}

const notFound = (res: ServerResponse) => {
  res.writeHead(404, { "content-type": "application/json" })
  res.end(JSON.stringify({ error: "not found", code: "not_found" }))
}

/** The answer once the instance is stopped, in the shape the path's clients read. */
const stopped = (req: IncomingMessage, res: ServerResponse) => {
  const body = TgApi.isProxyUrl(req.url ?? "")
    ? BotApiAnswer.errorBody(503, "Service Unavailable: this Botrelay instance is stopped")
    : JSON.stringify({ error: "this Botrelay instance is stopped", code: "unavailable" })
  res.writeHead(503, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}

/**
 * Builds the handler on the instance's services: the HTTP app (with its 1 MiB body limit, the /api rate
 * limits of `RateLimit.Limits`, and a span per
 * request named by its route template when `RequestSpans.Enabled`, never the platform's, whose URLs would
 * carry tokens) behind the /tgapi fast path and the body guard,
 * under `prefix`. Everything it answers carries the instance id (`X-Botrelay-Instance`) and the request id
 * (`X-Request-Id`), and is counted and logged once answered (see RequestLog). The standalone server's request
 * listener is this handler too.
 */
export const make = (options: {
  readonly prefix?: string | undefined
  /** Limits on the bodies read whole; `BodyGuard.defaults` when unset. */
  readonly body?: BodyGuard.Options | undefined
  /** Whether the hottest /tgapi calls are served before the app (see ProxyFastPath); true by default. */
  readonly fastPath?: boolean | undefined
  /** The web console's build folder, served at the prefix; `@botrelay/console`'s by default, false for none. */
  readonly console?: string | false | undefined
}): Effect.Effect<Handler, never, Scope.Scope | Services | HttpClient.HttpClient | TgApi.Upstream> =>
  Effect.gen(function*() {
    const prefix = normalize(options.prefix)
    const app = yield* HttpApiBuilder.httpApp.pipe(
      Effect.provide(
        Layer.mergeAll(App.layer, HttpApiBuilder.Router.Live, HttpApiBuilder.Middleware.layer).pipe(
          Layer.provide(disconnect),
          Layer.provide(
            options.console === false
              ? Layer.empty
              : ConsoleFiles.layer(options.console ?? Console.root, prefix).pipe(Layer.provide(NodeContext.layer))
          )
        )
      )
    )
    const limited = yield* RateLimit.limited(app, yield* RateLimit.Limits, App.render)
    const spans = yield* RequestSpans.Enabled
    const served = spans ? RequestSpans.traced(limited, { console: options.console !== false }) : limited
    const serve = yield* NodeHttpServer.makeHandler(App.withBodyLimit(served)).pipe(
      HttpMiddleware.withTracerDisabledWhenEffect(() => true),
      Effect.provide(NodeHttpServer.layerContext)
    )
    let running = true
    yield* Effect.addFinalizer(() => Effect.sync(() => void (running = false)))
    const fast = options.fastPath === false ? () => false : yield* ProxyFastPath.make
    const guard = BodyGuard.make(options.body)
    const instance = (yield* Identity.Identity).id
    const logged = RequestLog.make(yield* Effect.runtime<never>(), { console: options.console !== false })
    const handler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => {
      const url = within(req.url ?? "/", prefix)
      if (url === undefined && next !== undefined) return next()
      res.setHeader(Identity.header, instance)
      const slot = logged(req, res, url ?? req.url ?? "/")
      if (url === undefined) return notFound(res)
      const consumed = consumedBody(req)
      const request = consumed === undefined ? req : BodyGuard.replayed(req, consumed)
      request.url = url
      RequestActor.attach(request, slot)
      if (!running) return stopped(request, res)
      const serveRead = (read: IncomingMessage) => {
        RequestActor.attach(read, slot)
        serve(read, res)
      }
      if (!fast(request, res) && !guard(request, res, serveRead)) serve(request, res)
    }
    return Object.assign(handler, { handles: (url: string) => within(url, prefix) !== undefined })
  })
