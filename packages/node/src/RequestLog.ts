import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Metrics } from "@botrelay/core"
import { type RequestActor, RouteTemplate } from "@botrelay/http"
import { Effect, FiberRef, FiberRefs, LogLevel, Runtime } from "effect"

/** The response header that names a request in logs: the client's `X-Request-Id` when sane, else a new UUID. */
export const header = "X-Request-Id"

/** What a client's request id may be. */
const saneId = /^[A-Za-z0-9._:@+=/-]{1,128}$/

/** The route whose requests are logged at debug: load balancers and monitors poll it. */
const quietRoute = "/api/health"

/**
 * Counts and logs each request once answered (or abandoned: status 499 when the client left before any
 * answer): `botrelay_http_requests_total` and `botrelay_http_request_duration_seconds` by method, route
 * template and status, and one log line `request` with `method`, `route`, `status`, `duration_ms`, `actor`
 * and `request_id` (at debug for `/api/health`). The route is the template (see `RouteTemplate`), so neither
 * a token in a path nor a query string ever reaches a label or a line. Returns the request's actor slot,
 * which the app's authentication fills (see `RequestActor`).
 */
export const make = (runtime: Runtime.Runtime<never>, options: { readonly console: boolean }) => {
  const run = Runtime.runSync(runtime)
  const level = FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentMinimumLogLevel)
  const logs = (route: string) => LogLevel.greaterThanEqual(route === quietRoute ? LogLevel.Debug : LogLevel.Info, level)
  return (req: IncomingMessage, res: ServerResponse, url: string): RequestActor.Slot => {
    const started = performance.now()
    const given = req.headers["x-request-id"]
    const requestId = typeof given === "string" && saneId.test(given) ? given : randomUUID()
    res.setHeader(header, requestId)
    const slot: RequestActor.Slot = { actor: "anonymous" }
    res.once("close", () => {
      const method = req.method ?? "GET"
      const route = RouteTemplate.of(method, url, options)
      const status = res.headersSent ? res.statusCode : 499
      const ms = performance.now() - started
      Metrics.unsafeHttpRequest(method, route, status, ms / 1000)
      if (!logs(route)) return
      run((route === quietRoute ? Effect.logDebug : Effect.logInfo)("request").pipe(
        Effect.annotateLogs({
          method,
          route,
          status,
          duration_ms: Math.round(ms * 10) / 10,
          actor: slot.actor,
          request_id: requestId
        })
      ))
    })
    return slot
  }
}
