import type { HttpClientError } from "@effect/platform"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Data, Duration, Effect, Layer } from "effect"

/** One POST: `body` sent to `url` with `headers` (content type included), answered within `timeout`. */
export interface Request {
  readonly url: string
  readonly body: string
  readonly headers: Readonly<Record<string, string>>
  readonly timeout: Duration.Duration
}

/** The answer, read whole. */
export interface Answer {
  readonly status: number
  readonly body: string
  readonly contentType: string | undefined
}

/**
 * A POST that got no answer: "Transport" (connection or read failure) or "Timeout". The description
 * never holds the URL, which may carry a bot token.
 */
export class HttpPostError extends Data.TaggedError("HttpPostError")<{
  readonly reason: "Transport" | "Timeout"
  readonly description: string
}> {}

/** How Botrelay POSTs: Bot API calls and updates forwarded to backends. */
export interface Service {
  readonly post: (request: Request) => Effect.Effect<Answer, HttpPostError>
}

/** How Botrelay POSTs. The platform's `HttpClient` works everywhere; hosts may provide a leaner one. */
export class HttpPost extends Context.Tag("@botrelay/telegram/HttpPost")<HttpPost, Service>() {}

/** The failure's error code (`ECONNREFUSED`...), looked for along its causes. */
export const errorCode = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 4; depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]{1,63}$/.test(code)) return code
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

/** "the request failed (ECONNREFUSED)": what a failed connection is called. */
export const requestFailed = (cause: unknown): HttpPostError => {
  const code = errorCode(cause)
  return new HttpPostError({
    reason: "Transport",
    description: code === undefined ? "the request failed" : `the request failed (${code})`
  })
}

/** "no answer within 10s". */
export const timedOut = (timeout: Duration.Duration): HttpPostError =>
  new HttpPostError({ reason: "Timeout", description: `no answer within ${Duration.format(timeout)}` })

const describe = (error: HttpClientError.HttpClientError): HttpPostError => {
  switch (error._tag) {
    case "RequestError": {
      if (error.reason === "InvalidUrl") {
        return new HttpPostError({ reason: "Transport", description: "the URL is not valid" })
      }
      if (error.reason === "Encode") {
        return new HttpPostError({ reason: "Transport", description: "the request body could not be sent" })
      }
      return requestFailed(error.cause)
    }
    case "ResponseError": {
      const code = errorCode(error.cause)
      const status = `the answer (HTTP ${error.response.status}) could not be read`
      return new HttpPostError({ reason: "Transport", description: code === undefined ? status : `${status} (${code})` })
    }
  }
}

/** POSTs over the platform's `HttpClient`, with its spans (which carry the URL) turned off. */
export const fromHttpClient: Effect.Effect<Service, never, HttpClient.HttpClient> = Effect.map(
  HttpClient.HttpClient,
  (platformClient) => {
    const client = platformClient.pipe(HttpClient.withTracerDisabledWhen(() => true))
    return {
      post: ({ body, headers, timeout, url }) =>
        HttpClientRequest.post(url).pipe(
          HttpClientRequest.setHeaders(headers),
          HttpClientRequest.bodyText(body, headers["content-type"]),
          client.execute,
          Effect.flatMap((response) =>
            Effect.map(response.text, (text): Answer => ({
              status: response.status,
              body: text,
              contentType: response.headers["content-type"]
            }))
          ),
          Effect.mapError(describe),
          Effect.timeoutFail({ duration: timeout, onTimeout: () => timedOut(timeout) })
        )
    }
  }
)

/** `HttpPost` over the platform's `HttpClient`. */
export const layer: Layer.Layer<HttpPost, never, HttpClient.HttpClient> = Layer.effect(HttpPost, fromHttpClient)
