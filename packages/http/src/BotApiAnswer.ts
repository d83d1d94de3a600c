import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

const json = (status: number, body: string) =>
  HttpServerResponse.text(body, { status, contentType: "application/json" })

/** `{"ok":true,"result":...}`, with Telegram's `description` when given. */
export const ok = (result: unknown, description?: string): HttpServerResponse.HttpServerResponse =>
  json(200, JSON.stringify(description === undefined ? { ok: true, result } : { ok: true, result, description }))

/** `{"ok":true,"result":<text>}` with `result` already JSON text, passed on as it is. */
export const okRaw = (result: string): HttpServerResponse.HttpServerResponse =>
  json(200, `{"ok":true,"result":${result}}`)

/** The JSON text of Telegram's error shape. */
export const errorBody = (errorCode: number, description: string): string =>
  JSON.stringify({ ok: false, error_code: errorCode, description })

/** Telegram's error shape, with the HTTP status equal to `error_code`. */
export const error = (errorCode: number, description: string): HttpServerResponse.HttpServerResponse =>
  json(errorCode, errorBody(errorCode, description))

/** What Telegram answers for a token it does not know. */
export const unauthorized = error(401, "Unauthorized")

/** What Telegram answers for a malformed path or an unknown method. */
export const notFound = error(404, "Not Found")

/** Our failure; the body says nothing more. */
export const internalError = error(500, "Internal Server Error")

/** A body over the proxy's limit. */
export const tooLarge = error(413, "Request Entity Too Large")

/** Telegram's `400 Bad Request: <reason>`. */
export const badRequest = (reason: string) => error(400, `Bad Request: ${reason}`)
