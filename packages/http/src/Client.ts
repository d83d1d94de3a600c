import type * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiClient from "@effect/platform/HttpApiClient"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Context, Effect, Layer, Redacted } from "effect"
import { Api } from "./Api.js"
import * as ApiError from "./ApiError.js"

/**
 * The typed client of the management API, one method per endpoint (`client.bots.list()`). Failures are the
 * contract's errors (`ApiError.NotFound`, `ApiError.Unauthorized`, ...), `HttpClientError` and `ParseError`.
 */
export type Client = typeof Api extends HttpApi.HttpApi<infer _Id, infer Groups, infer E, infer _R>
  ? HttpApiClient.Client<Groups, E, never>
  : never

/** Where the server is and the API key to call it with. */
export interface Options {
  /** The server's root, such as `http://127.0.0.1:8080`; paths start with `/api`. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string> | string
}

/** The typed client of the management API. */
export class BotrelayClient extends Context.Tag("@botrelay/http/BotrelayClient")<BotrelayClient, Client>() {}

const tagOfStatus = new Map<number, string>(Object.entries(ApiError.status).map(([tag, status]) => [status, tag]))

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Puts back the `_tag` the server leaves out of error bodies (`{ error, code, details? }`), chosen by the status,
 * so the contract's error schemas decode them.
 */
const restoreErrorTag = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.ResponseError> => {
  const tag = tagOfStatus.get(response.status)
  if (tag === undefined) return Effect.succeed(response)
  return Effect.map(response.text, (text) => {
    const body = parseJson(text)
    const tagged = isRecord(body) && !("_tag" in body) ? JSON.stringify({ ...body, _tag: tag }) : text
    const headers = new globalThis.Headers()
    for (const [name, value] of Object.entries(response.headers)) {
      if (name !== "content-length" && name !== "content-encoding") headers.set(name, value)
    }
    return HttpClientResponse.fromWeb(response.request, new Response(tagged, { status: response.status, headers }))
  })
}

/** A request whose URL holds a bot token (`/api/bots/validate?token=`): it gets no span, whose attributes hold the URL. */
const carriesToken = (request: HttpClientRequest.HttpClientRequest) =>
  request.urlParams.some(([name]) => name === "token")

/**
 * Builds the client on the `HttpClient` the host provides; every request carries `Authorization: Bearer <key>`.
 */
export const make = (options: Options): Effect.Effect<Client, never, HttpClient.HttpClient> => {
  const key = typeof options.apiKey === "string" ? Redacted.make(options.apiKey) : options.apiKey
  return HttpApiClient.make(Api, {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    transformClient: (client) =>
      client.pipe(
        HttpClient.mapRequest(HttpClientRequest.bearerToken(key)),
        HttpClient.transformResponse(Effect.flatMap(restoreErrorTag)),
        HttpClient.withTracerDisabledWhen(carriesToken)
      )
  })
}

/** The client as a layer, on the `HttpClient` the host provides. */
export const layer = (options: Options): Layer.Layer<BotrelayClient, never, HttpClient.HttpClient> =>
  Layer.effect(BotrelayClient, make(options))
