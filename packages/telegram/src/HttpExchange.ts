import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Context, Data, Duration, Effect, Layer, Stream } from "effect"

/**
 * One request, sent whole: any method, lower-case header names, a body of text, bytes or nothing. A body
 * without a content type may go out as `application/octet-stream`.
 */
export interface Request {
  readonly method: string
  /** The full URL; it may hold a bot token, so it never goes into an error or a log. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** Text is sent as UTF-8. */
  readonly body?: string | Uint8Array | undefined
  /** How long the call may take, answer included; no limit without one. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The largest answer body read; a larger one fails the call. No limit without one. */
  readonly maxBytes?: number | undefined
  /**
   * Which addresses the call may connect to. `"public"`: only public ones (`IpAddress.isPublic`) that
   * are not the host's own, checked on the resolved address when connecting, so a name that resolves
   * elsewhere later (DNS rebinding) is still refused; a refused call fails with `addressNotAllowed`.
   * Any address without it. A client that cannot see the address it connects to refuses such calls.
   */
  readonly addresses?: "public" | undefined
}

/** The whole answer: status, headers (lower-case names) and body bytes. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

const decoder = new TextDecoder()

/** The answer's body as UTF-8 text. */
export const text = (answer: Answer): string => decoder.decode(answer.body)

/**
 * No answer: the request could not be sent ("Request"), its answer broke off ("Answer") or was larger
 * than `maxBytes` ("TooLarge"), or none came in time ("Timeout"). `code` is the system error code
 * (`ECONNREFUSED`...) when there is one. `description` is a sentence, e.g. "the request failed
 * (ECONNREFUSED)"; nothing here holds the URL.
 */
export class HttpExchangeError extends Data.TaggedError("HttpExchangeError")<{
  readonly reason: "Request" | "Answer" | "TooLarge" | "Timeout"
  readonly code: string | undefined
  readonly description: string
}> {}

/** Called once with the answer or the failure, unless the call was cancelled first. */
export type Callback = (failure: HttpExchangeError | undefined, answer: Answer | undefined) => void

/** Sends a request and reads its answer whole. */
export interface Service {
  readonly exchange: (request: Request) => Effect.Effect<Answer, HttpExchangeError>
  /**
   * The same call without a fiber, where the client has such a form: it calls back once, and the returned function
   * cancels the call. Loops of calls that seldom need a fiber (a bot's empty long polls) run on it.
   */
  readonly send?: ((request: Request, callback: Callback) => () => void) | undefined
}

/**
 * How Botrelay makes the HTTP calls it reads whole: Bot API calls, updates forwarded to backends and
 * calls passed on by the /tgapi proxy. The platform's `HttpClient` works everywhere; hosts may provide
 * a leaner one.
 */
export class HttpExchange extends Context.Tag("@botrelay/telegram/HttpExchange")<HttpExchange, Service>() {}

/** The failure's error code (`ECONNREFUSED`...), looked for along its causes. */
export const errorCode = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 4; depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]{1,63}$/.test(code)) return code
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

const withCode = (sentence: string, code: string | undefined) => code === undefined ? sentence : `${sentence} (${code})`

/** The error codes of a connection that was never made. */
const connectCodes: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ADDRESS_NOT_ALLOWED"
])

/** Whether a system error code (`ECONNREFUSED`...) says that no connection was made. */
export const notConnected = (code: string | undefined): boolean => code !== undefined && connectCodes.has(code)

/**
 * Whether the failed request surely never reached the server: no connection was made (refused, no such
 * host, an address the policy refuses). A connection that broke after it was made may have carried the request.
 */
export const neverSent = (error: HttpExchangeError): boolean => error.reason === "Request" && notConnected(error.code)

/** The URL could not be parsed. */
export const invalidUrl = (cause: unknown): HttpExchangeError =>
  new HttpExchangeError({ reason: "Request", code: errorCode(cause), description: "the URL is not valid" })

/** "the request failed (ECONNREFUSED)": what a failed connection is called. */
export const requestFailed = (cause: unknown): HttpExchangeError => {
  const code = errorCode(cause)
  return new HttpExchangeError({ reason: "Request", code, description: withCode("the request failed", code) })
}

/** "the answer (HTTP 200) could not be read (ECONNRESET)". */
export const answerFailed = (status: number, cause: unknown): HttpExchangeError => {
  const code = errorCode(cause)
  return new HttpExchangeError({
    reason: "Answer",
    code,
    description: withCode(`the answer (HTTP ${status}) could not be read`, code)
  })
}

/** "the answer (HTTP 200) is larger than 65536 bytes". */
export const tooLarge = (status: number, maxBytes: number): HttpExchangeError =>
  new HttpExchangeError({
    reason: "TooLarge",
    code: undefined,
    description: `the answer (HTTP ${status}) is larger than ${maxBytes} bytes`
  })

/** The code of a call refused by its `addresses` policy. */
export const addressNotAllowedCode = "ADDRESS_NOT_ALLOWED"

/** The call would have connected to an address its `addresses` policy refuses. */
export const addressNotAllowed: HttpExchangeError = new HttpExchangeError({
  reason: "Request",
  code: addressNotAllowedCode,
  description: "the backend address is not allowed by the backend URL policy"
})

/** This client cannot see the address it would connect to, so it refuses calls with an `addresses` policy. */
export const addressUncheckable: HttpExchangeError = new HttpExchangeError({
  reason: "Request",
  code: addressNotAllowedCode,
  description: "the backend address cannot be checked against the backend URL policy by this HTTP client"
})

/** "no answer within 10s". */
export const timedOut = (timeout: Duration.DurationInput): HttpExchangeError =>
  new HttpExchangeError({
    reason: "Timeout",
    code: undefined,
    description: `no answer within ${Duration.format(Duration.decode(timeout))}`
  })

const requestFailure = (error: HttpClientError.RequestError): HttpExchangeError => {
  switch (error.reason) {
    case "InvalidUrl":
      return invalidUrl(error.cause)
    case "Encode":
      return new HttpExchangeError({
        reason: "Request",
        code: errorCode(error.cause),
        description: "the request body could not be sent"
      })
    case "Transport":
      return requestFailed(error.cause)
  }
}

const failure = (error: HttpClientError.HttpClientError): HttpExchangeError =>
  error._tag === "RequestError" ? requestFailure(error) : answerFailed(error.response.status, error.cause)

const concat = (parts: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (parts.length === 1) return parts[0]!
  const whole = new Uint8Array(size)
  let at = 0
  for (const part of parts) {
    whole.set(part, at)
    at += part.length
  }
  return whole
}

const encoder = new TextEncoder()

/**
 * Over the platform's `HttpClient`, with its spans (which carry the URL) turned off. It cannot see the
 * address it connects to, so calls with an `addresses` policy fail with `addressUncheckable`.
 */
export const make: Effect.Effect<Service, never, HttpClient.HttpClient> = Effect.map(
  HttpClient.HttpClient,
  (platformClient) => {
    const client = platformClient.pipe(HttpClient.withTracerDisabledWhen(() => true))
    return {
      exchange: ({ addresses, body, headers, maxBytes = Infinity, method, timeout, url }) => {
        if (addresses !== undefined) return Effect.fail(addressUncheckable)
        const bytes = typeof body === "string" ? encoder.encode(body) : body
        const call = HttpClientRequest.make(method as HttpClientRequest.HttpClientRequest["method"])(url).pipe(
          HttpClientRequest.setHeaders(headers),
          HttpClientRequest.setBody(
            bytes === undefined ? HttpBody.empty : HttpBody.uint8Array(bytes, headers["content-type"])
          ),
          client.execute,
          Effect.flatMap((response) =>
            response.stream.pipe(
              Stream.runFoldEffect({ parts: [] as Array<Uint8Array>, size: 0 }, (read, part) => {
                read.size += part.length
                read.parts.push(part)
                return read.size > maxBytes ? Effect.fail(tooLarge(response.status, maxBytes)) : Effect.succeed(read)
              }),
              Effect.map(({ parts, size }): Answer => ({
                status: response.status,
                headers: response.headers,
                body: concat(parts, size)
              }))
            )
          ),
          Effect.mapError((error) => error._tag === "HttpExchangeError" ? error : failure(error))
        )
        return timeout === undefined
          ? call
          : Effect.timeoutFail(call, { duration: timeout, onTimeout: () => timedOut(timeout) })
      }
    }
  }
)

/** `HttpExchange` over the platform's `HttpClient`. */
export const layer: Layer.Layer<HttpExchange, never, HttpClient.HttpClient> = Layer.effect(HttpExchange, make)
