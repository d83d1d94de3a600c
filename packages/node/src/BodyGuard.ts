import type { IncomingMessage, ServerResponse } from "node:http"
import { Readable } from "node:stream"
import { BotApiAnswer, App, MediaUpload, TgApi } from "@botrelay/http"

/** Limits on the bodies the app reads whole. */
export interface Options {
  /** The largest body read; a larger one is answered 413 once the client has sent it. */
  readonly maxBytes: number
  /** How long the client may take to send the body (408 after). */
  readonly timeoutMs: number
}

/** The body limits of `/api`, the webhook ingress and the methods /tgapi answers itself. */
export const defaults: Options = { maxBytes: App.maxBodyBytes, timeoutMs: 30_000 }

/** How much more of an over-long body is read (and dropped) so the client sees the 413 before the connection closes. */
const drainBytes = 16 * 1024 * 1024

/** A request that reads `body` in place of its consumed stream. */
export const replayed = (req: IncomingMessage, body: Uint8Array): IncomingMessage => {
  const { "transfer-encoding": _, ...headers } = req.headers
  return Object.assign(Readable.from(body.length === 0 ? [] : [body]), {
    headers: { ...headers, "content-length": String(body.length) },
    rawHeaders: [],
    method: req.method,
    url: req.url,
    httpVersion: req.httpVersion,
    httpVersionMajor: req.httpVersionMajor,
    httpVersionMinor: req.httpVersionMinor,
    socket: req.socket,
    connection: req.socket,
    complete: true,
    aborted: false
  }) as unknown as IncomingMessage
}

const hasBody = (req: IncomingMessage) =>
  req.method !== "GET" && req.method !== "HEAD" &&
  (req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0)

/** The failure answer in the shape the path's clients read: Bot API errors under /tgapi, API errors elsewhere. */
const refuse = (req: IncomingMessage, res: ServerResponse, status: 408 | 413, maxBytes: number) => {
  if (res.headersSent || res.destroyed) return
  const body = TgApi.isProxyUrl(req.url ?? "")
    ? BotApiAnswer.errorBody(status, status === 413 ? "Request Entity Too Large" : "Request Timeout")
    : JSON.stringify(
      status === 413
        ? { error: `request body is larger than ${maxBytes} bytes`, code: "payload_too_large" }
        : { error: "the request body did not arrive in time", code: "request_timeout" }
    )
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" })
  res.end(body)
}

/**
 * Reads, before the app does, the body of every request the app reads whole (all but the calls /tgapi
 * passes on, whose bodies stream to Telegram): at most `maxBytes`, within `timeoutMs`. A body over the
 * limit is answered 413 after the client has sent it (up to 16 MiB more, then the connection is cut), so
 * clients that send chunked bodies see the answer rather than a reset; a slow body is answered 408.
 * Returns false for requests it leaves alone; otherwise `next` gets a request that replays the body.
 */
export const make = (options: Options = defaults) =>
(req: IncomingMessage, res: ServerResponse, next: (req: IncomingMessage) => void): boolean => {
  const url = req.url ?? "/"
  if (!hasBody(req) || (TgApi.isProxyUrl(url) && !TgApi.isLocalCall(url))) return false
  if (MediaUpload.isUpload(req.method ?? "", url, req.headers["content-type"])) return false
  if (Number(req.headers["content-length"] ?? 0) > options.maxBytes) {
    refuse(req, res, 413, options.maxBytes)
    return true
  }
  const chunks: Array<Buffer> = []
  let seen = 0
  const timer = setTimeout(() => refuse(req, res, 408, options.maxBytes), options.timeoutMs)
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length
    if (seen <= options.maxBytes) chunks.push(chunk)
    else if (seen > options.maxBytes + drainBytes) req.destroy()
  })
  req.once("error", () => clearTimeout(timer))
  req.once("close", () => clearTimeout(timer))
  req.once("end", () => {
    clearTimeout(timer)
    if (res.headersSent) return
    if (seen > options.maxBytes) refuse(req, res, 413, options.maxBytes)
    else next(replayed(req, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
  })
  return true
}
