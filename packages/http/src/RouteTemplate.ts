import * as HttpApi from "@effect/platform/HttpApi"
import { Api } from "./Api.js"
import * as TgApi from "./TgApi.js"

/** The template of requests no route takes. */
export const unmatched = "unmatched"

/** The template of the console's pages and files. */
export const consolePages = "/{console}"

const apiPaths = (() => {
  const paths = new Set<string>(["/api/openapi.json", "/metrics"])
  HttpApi.reflect(Api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      paths.add(endpoint.path)
    }
  })
  return paths
})()

const patterns: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\/tgapi\/bot[^/]+\/[^/]+$/, `${TgApi.prefix}/bot{token}/{method}`],
  [/^\/tgapi\/file\/bot[^/]+\/.+$/, `${TgApi.prefix}/file/bot{token}/{path}`],
  [/^\/telegram\/webhook\/[^/]+$/, "/telegram/webhook/{bot_id}"]
]

/**
 * What metrics, logs and spans name a request by, never its raw path (paths carry bot tokens): an API
 * endpoint's path, `/metrics`, `/tgapi/bot{token}/{method}`, `/tgapi/file/bot{token}/{path}`,
 * `/telegram/webhook/{bot_id}`, `/{console}` for a GET outside these when the console is served, else
 * `unmatched`. `url` is the request's path with an optional query string.
 */
export const of = (method: string, url: string, options: { readonly console?: boolean } = {}): string => {
  const query = url.indexOf("?")
  const path = (query === -1 ? url : url.slice(0, query)).replace(/(.)\/+$/, "$1")
  if (apiPaths.has(path)) return path
  for (const [pattern, template] of patterns) if (pattern.test(path)) return template
  if (options.console === true && (method === "GET" || method === "HEAD") && !path.startsWith("/api")) return consolePages
  return unmatched
}
