import { HttpBody, HttpClient, type HttpClientError, HttpClientRequest } from "@effect/platform"
import { HttpPost } from "@botrelay/telegram"
import { Context, Data, Effect, Layer, Stream } from "effect"

/** One request sent whole: a Bot API call the proxy passes on. */
export interface Request {
  readonly method: string
  /** The full URL; it holds the bot token, so it never goes into an error or a log. */
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array | undefined
}

/** The whole answer: status, headers (lower-case names) and body bytes. */
export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: Uint8Array
}

/**
 * No answer: the request could not be sent ("request"), or its answer broke off or was larger than
 * `maxBytes` ("answer"). `code` is the system error code (`ECONNREFUSED`...) when there is one; nothing
 * here holds the URL.
 */
export class ExchangeError extends Data.TaggedError("ExchangeError")<{
  readonly phase: "request" | "answer"
  readonly code: string | undefined
}> {}

/** Sends a request and reads its answer whole, up to `maxBytes`. */
export interface Service {
  readonly exchange: (request: Request, maxBytes: number) => Effect.Effect<Answer, ExchangeError>
}

/**
 * How the /tgapi proxy makes the calls it reads whole (JSON and form calls, whose answers are small).
 * The platform's `HttpClient` works everywhere; hosts may provide a leaner one.
 */
export class Exchange extends Context.Tag("@botrelay/http/Exchange")<Exchange, Service>() {}

const failure = (phase: ExchangeError["phase"]) => (error: HttpClientError.HttpClientError) =>
  new ExchangeError({ phase, code: HttpPost.errorCode(error.cause) })

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

/** Over the platform's `HttpClient`, with its spans (which carry the URL) turned off. */
export const fromHttpClient: Effect.Effect<Service, never, HttpClient.HttpClient> = Effect.map(
  HttpClient.HttpClient,
  (platformClient) => {
    const client = platformClient.pipe(HttpClient.withTracerDisabledWhen(() => true))
    return {
      exchange: (request, maxBytes) =>
        HttpClientRequest.make(request.method as "POST")(request.url).pipe(
          HttpClientRequest.setHeaders(request.headers),
          HttpClientRequest.setBody(
            request.body === undefined
              ? HttpBody.empty
              : HttpBody.raw(request.body, {
                contentType: request.headers["content-type"],
                contentLength: request.body.length
              })
          ),
          client.execute,
          Effect.mapError(failure("request")),
          Effect.flatMap((response) =>
            response.stream.pipe(
              Stream.mapError(failure("answer")),
              Stream.runFoldEffect({ parts: [] as Array<Uint8Array>, size: 0 }, (read, part) => {
                read.size += part.length
                read.parts.push(part)
                return read.size > maxBytes
                  ? Effect.fail(new ExchangeError({ phase: "answer", code: undefined }))
                  : Effect.succeed(read)
              }),
              Effect.map(({ parts, size }): Answer => ({
                status: response.status,
                headers: response.headers,
                body: concat(parts, size)
              }))
            )
          )
        )
    }
  }
)

/** `Exchange` over the platform's `HttpClient`. */
export const layer: Layer.Layer<Exchange, never, HttpClient.HttpClient> = Layer.effect(Exchange, fromHttpClient)
