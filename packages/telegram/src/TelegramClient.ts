import type { HttpClientError } from "@effect/platform"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Duration, Effect, Layer, ParseResult, Redacted, Schema } from "effect"
import * as BotApi from "./BotApi.js"
import type { TelegramError } from "./TelegramError.js"
import { TelegramApiError, TelegramTransportError } from "./TelegramError.js"

/** How to reach the Bot API. */
export interface Options {
  /** e.g. `https://api.telegram.org`; a trailing slash is removed. */
  readonly apiRoot: string
  /** How long a call may take, answer included. Defaults to 30 seconds. */
  readonly timeout?: Duration.DurationInput
}

/** Per-call settings. */
export interface CallOptions {
  /** Overrides the client's timeout, e.g. for long polling. */
  readonly timeout?: Duration.DurationInput
}

/** A Bot API client serving any number of bots: each call takes the bot's token. */
export interface Service {
  readonly getMe: (token: Redacted.Redacted<string>) => Effect.Effect<BotApi.User, TelegramError>
  readonly sendMessage: (
    token: Redacted.Redacted<string>,
    params: BotApi.SendMessageParams
  ) => Effect.Effect<BotApi.Message, TelegramError>
  /** Calls any method and returns its `result` undecoded. */
  readonly call: (
    token: Redacted.Redacted<string>,
    method: string,
    params?: Readonly<Record<string, unknown>>,
    options?: CallOptions
  ) => Effect.Effect<unknown, TelegramError>
}

/** The Bot API client. */
export class TelegramClient extends Context.Tag("@botrelay/telegram/TelegramClient")<TelegramClient, Service>() {}

const defaultTimeout = Duration.seconds(30)

const Envelope = Schema.Struct({
  ok: Schema.Boolean,
  result: Schema.optionalWith(Schema.Unknown, { exact: true }),
  error_code: Schema.optionalWith(Schema.Number, { exact: true }),
  description: Schema.optionalWith(Schema.String, { exact: true }),
  parameters: Schema.optionalWith(
    Schema.Struct({
      retry_after: Schema.optionalWith(Schema.Number, { exact: true }),
      migrate_to_chat_id: Schema.optionalWith(Schema.Number, { exact: true })
    }),
    { exact: true }
  )
})
const decodeEnvelope = Schema.decodeUnknownEither(Envelope)

const errorCode = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; typeof current === "object" && current !== null && depth < 4; depth++) {
    const code = (current as { readonly code?: unknown }).code
    if (typeof code === "string" && /^[A-Z][A-Z0-9_]{1,63}$/.test(code)) return code
    current = (current as { readonly cause?: unknown }).cause
  }
  return undefined
}

const describeHttpError = (error: HttpClientError.HttpClientError): string => {
  switch (error._tag) {
    case "RequestError": {
      if (error.reason === "InvalidUrl") return "the apiRoot does not form a valid URL"
      if (error.reason === "Encode") return "the request body could not be sent"
      const code = errorCode(error.cause)
      return code === undefined ? "the request failed" : `the request failed (${code})`
    }
    case "ResponseError": {
      const code = errorCode(error.cause)
      return code === undefined
        ? `the answer (HTTP ${error.response.status}) could not be read`
        : `the answer (HTTP ${error.response.status}) could not be read (${code})`
    }
  }
}

const summarizeIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 3)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

const encodeToken = (token: string) => encodeURIComponent(token).replace(/%3A/gi, ":")

/** Builds a client on the ambient `HttpClient`, with its spans (which carry the URL, hence the token) turned off. */
export const make = (options: Options): Effect.Effect<Service, never, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    const apiRoot = options.apiRoot.replace(/\/+$/, "")
    const timeout = Duration.decode(options.timeout ?? defaultTimeout)
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))

    const execute = <A, I>(
      token: Redacted.Redacted<string>,
      method: string,
      params: Readonly<Record<string, unknown>>,
      result: Schema.Schema<A, I>,
      callTimeout: Duration.Duration
    ): Effect.Effect<A, TelegramError> => {
      const fail = (reason: TelegramTransportError["reason"], description: string) =>
        new TelegramTransportError({ reason, method, description })
      return HttpClientRequest.post(`${apiRoot}/bot${encodeToken(Redacted.value(token))}/${encodeURIComponent(method)}`)
        .pipe(
          HttpClientRequest.acceptJson,
          HttpClientRequest.bodyJson(params),
          Effect.orDie,
          Effect.flatMap(client.execute),
          Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
          Effect.mapError((error) => fail("Transport", describeHttpError(error))),
          Effect.timeoutFail({
            duration: callTimeout,
            onTimeout: () => fail("Timeout", `no answer within ${Duration.format(callTimeout)}`)
          }),
          Effect.flatMap(({ status, text }): Effect.Effect<A, TelegramError> => {
            let json: unknown
            try {
              json = JSON.parse(text)
            } catch {
              return Effect.fail(fail("Decode", `the answer (HTTP ${status}) is not JSON`))
            }
            const envelope = decodeEnvelope(json)
            if (envelope._tag === "Left") {
              return Effect.fail(fail("Decode", `the answer (HTTP ${status}) is not a Bot API response`))
            }
            const body = envelope.right
            if (!body.ok) {
              return Effect.fail(
                new TelegramApiError({
                  method,
                  error_code: body.error_code ?? status,
                  description: body.description ?? `HTTP ${status}`,
                  retry_after: body.parameters?.retry_after,
                  migrate_to_chat_id: body.parameters?.migrate_to_chat_id
                })
              )
            }
            if (!("result" in body)) {
              return Effect.fail(fail("Decode", `the answer (HTTP ${status}) has no result`))
            }
            return Schema.decodeUnknown(result)(body.result).pipe(
              Effect.mapError((error) => fail("Decode", `unexpected result: ${summarizeIssues(error)}`))
            )
          })
        )
    }

    const traced = (name: string, method: string) =>
      Effect.withSpan(`TelegramClient.${name}`, {
        kind: "client",
        captureStackTrace: false,
        attributes: { "telegram.method": method }
      })

    return TelegramClient.of({
      getMe: (token) => execute(token, "getMe", {}, BotApi.User, timeout).pipe(traced("getMe", "getMe")),
      sendMessage: (token, params) =>
        execute(token, "sendMessage", params, BotApi.Message, timeout).pipe(traced("sendMessage", "sendMessage")),
      call: (token, method, params = {}, callOptions) =>
        execute(
          token,
          method,
          params,
          Schema.Unknown,
          callOptions?.timeout === undefined ? timeout : Duration.decode(callOptions.timeout)
        ).pipe(traced("call", method))
    })
  })

/** The client as a layer. */
export const layer = (options: Options): Layer.Layer<TelegramClient, never, HttpClient.HttpClient> =>
  Layer.effect(TelegramClient, make(options))
