import * as FileSystem from "@effect/platform/FileSystem"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Path from "@effect/platform/Path"
import { Context, Effect, Layer, Option } from "effect"

/** A built console file: its bytes, and its gzip-compressed bytes when the build wrote `<file>.gz`. */
interface File {
  readonly bytes: Uint8Array
  readonly gzip: Uint8Array | undefined
  readonly type: string
  readonly etag: string
}

/** The console's static files, held in memory, served at `/` (or under the embed prefix). */
export class ConsoleFiles extends Context.Tag("@botrelay/http/ConsoleFiles")<ConsoleFiles, {
  /** The answer to a GET or HEAD the API does not route: a file, index.html for any other page, or none. */
  readonly respond: (request: HttpServerRequest.HttpServerRequest) => Option.Option<HttpServerResponse.HttpServerResponse>
}>() {}

const types: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  webp: "image/webp",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8",
  webmanifest: "application/manifest+json"
}

const typeOf = (path: string) => types[path.slice(path.lastIndexOf(".") + 1)] ?? "application/octet-stream"

/** FNV-1a over the bytes: a strong-enough validator for files that change only with a new build. */
const etagOf = (bytes: Uint8Array) => {
  let hash = 0x811c9dc5
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193)
  return `"${(hash >>> 0).toString(36)}-${bytes.length.toString(36)}"`
}

/**
 * Paths the console never answers: the API, the Bot API proxy, webhooks, metrics, and Telegram's own
 * `/bot<token>/<method>` (a client pointed at the root instead of /tgapi gets a JSON 404, not a page).
 */
const reserved = /^\/+(?:(?:api|tgapi|telegram|metrics)(?:\/|$)|bot\d+:)/

const immutable = "public, max-age=31536000, immutable"

const headersOf = (path: string, file: File, gzip: boolean): Record<string, string> => ({
  "content-type": file.type,
  "cache-control": path.startsWith("/assets/") ? immutable : "no-cache",
  etag: file.etag,
  vary: "accept-encoding",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "content-security-policy": "frame-ancestors 'none'",
  ...(gzip ? { "content-encoding": "gzip" } : {})
})

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * The console from its files (paths relative to the build folder, `index.html` among them), under
 * `prefix` (`""` at the root, `"/botrelay"` when embedded): index.html gets `<base href="<prefix>/">`,
 * so its relative asset URLs and the app's routes resolve under the prefix.
 */
export const make = (
  files: Iterable<readonly [string, Uint8Array]>,
  prefix = ""
): Context.Tag.Service<ConsoleFiles> => {
  const byPath = new Map<string, File>()
  const all = new Map([...files].map(([path, bytes]) => [`/${path.replace(/^\/+/, "")}`, bytes]))
  for (const [path, raw] of all) {
    if (path.endsWith(".gz")) continue
    const bytes = path === "/index.html"
      ? encoder.encode(decoder.decode(raw).replace(/<base href="[^"]*"\s*\/?>/, `<base href="${prefix}/" />`))
      : raw
    const gzip = path === "/index.html" ? undefined : all.get(`${path}.gz`)
    byPath.set(path, { bytes, gzip, type: typeOf(path), etag: etagOf(bytes) })
  }
  const index = byPath.get("/index.html")
  return {
    respond: (request) => {
      if (index === undefined || (request.method !== "GET" && request.method !== "HEAD")) return Option.none()
      const path = request.url.split("?", 1)[0]!
      if (reserved.test(path)) return Option.none()
      const found = byPath.get(path)
      const [servedPath, file] = found === undefined || path === "/" ? ["/index.html", index] : [path, found]
      if (request.headers["if-none-match"] === file.etag) {
        return Option.some(HttpServerResponse.empty({ status: 304, headers: headersOf(servedPath, file, false) }))
      }
      const gzip = /\bgzip\b/.test(request.headers["accept-encoding"] ?? "") ? file.gzip : undefined
      const body = gzip ?? file.bytes
      const headers = headersOf(servedPath, file, gzip !== undefined)
      return Option.some(
        request.method === "HEAD"
          ? HttpServerResponse.empty({ status: 200, headers: { ...headers, "content-length": String(body.length) } })
          : HttpServerResponse.uint8Array(body, { status: 200, headers, contentType: file.type })
      )
    }
  }
}

/** The console read from a build folder (`@botrelay/console`'s `root`); none when the folder holds no index.html. */
export const fromDirectory = (
  root: string,
  prefix = ""
): Effect.Effect<Option.Option<Context.Tag.Service<ConsoleFiles>>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const names = yield* fs.readDirectory(root, { recursive: true })
    const files: Array<readonly [string, Uint8Array]> = []
    for (const name of names) {
      const full = path.join(root, name)
      if ((yield* fs.stat(full)).type !== "File") continue
      files.push([name.split(path.sep).join("/"), yield* fs.readFile(full)])
    }
    return files.some(([name]) => name === "index.html") ? Option.some(make(files, prefix)) : Option.none()
  }).pipe(Effect.orElseSucceed(() => Option.none()))

/** Serves the console from a build folder when it is built; logs a warning and serves none when it is not. */
export const layer = (
  root: string,
  prefix = ""
): Layer.Layer<never, never, FileSystem.FileSystem | Path.Path> =>
  Layer.unwrapEffect(
    fromDirectory(root, prefix).pipe(
      Effect.flatMap(Option.match({
        onNone: () =>
          Effect.as(
            Effect.logWarning("the console is not built (run pnpm build); / answers 404"),
            Layer.empty
          ),
        onSome: (files) => Effect.succeed(Layer.succeed(ConsoleFiles, files))
      }))
    )
  )
