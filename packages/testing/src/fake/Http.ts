import type * as Http from "node:http"
import { type Answer, statusOf } from "./Answer.js"

const tokenPattern = /^(\d+):[A-Za-z0-9_-]+$/

/** The token of a `/bot<token>/` path segment, or undefined when it is not shaped like one. */
export const decodeToken = (raw: string): string | undefined => {
  try {
    const token = decodeURIComponent(raw)
    return tokenPattern.test(token) ? token : undefined
  } catch {
    return undefined
  }
}

/** Writes an answer as Telegram does: `{ ok: true, result }`, or `{ ok: false, ... }` with the error's status. */
export const sendJson = (res: Http.ServerResponse, result: Answer) => {
  if (res.destroyed || res.headersSent) return
  const body = JSON.stringify("ok" in result ? result : { ok: false, ...result })
  res.writeHead(statusOf(result), { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
}
