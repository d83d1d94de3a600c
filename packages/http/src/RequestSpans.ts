import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpTraceContext from "@effect/platform/HttpTraceContext"
import type * as HttpApp from "@effect/platform/HttpApp"
import { Context, Effect, Option } from "effect"
import * as RouteTemplate from "./RouteTemplate.js"

/** Whether requests get spans; off unless a host that exports traces turns it on. */
export class Enabled extends Context.Reference<Enabled>()("@botrelay/http/RequestSpans/Enabled", {
  defaultValue: () => false
}) {}

/**
 * Wraps an app so each request gets a server span `"{METHOD} {route}"` (see RouteTemplate) with
 * `http.request.method`, `http.route` and `http.response.status_code` (and `error.type` on a 5xx) and nothing
 * of its URL (URLs carry tokens), the child of a W3C `traceparent` the request carries. `console`: whether console pages are served.
 */
export const traced = <E, R>(app: HttpApp.Default<E, R>, options: { readonly console: boolean }): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const route = RouteTemplate.of(request.method, request.url, options)
    const parent = HttpTraceContext.fromHeaders(request.headers)
    return Effect.tap(app, (response) =>
      Effect.annotateCurrentSpan(
        response.status >= 500
          ? { "http.response.status_code": response.status, "error.type": String(response.status) }
          : { "http.response.status_code": response.status }
      )).pipe(
      Effect.withSpan(`${request.method} ${route}`, {
        kind: "server",
        captureStackTrace: false,
        attributes: { "http.request.method": request.method, "http.route": route },
        ...(Option.isSome(parent) ? { parent: parent.value } : { root: true })
      })
    )
  })
