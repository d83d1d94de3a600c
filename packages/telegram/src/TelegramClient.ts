import type * as HttpClient from "@effect/platform/HttpClient"
import { Context, Duration, Effect, Either, Layer, ParseResult, Redacted, Schema } from "effect"
import * as BotApi from "./BotApi.js"
import * as HttpExchange from "./HttpExchange.js"
import * as TelegramMetrics from "./TelegramMetrics.js"
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

type Token = Redacted.Redacted<string>

/** A Bot API client serving any number of bots: each call takes the bot's token. */
export interface Service {
  readonly getMe: (token: Token) => Effect.Effect<BotApi.User, TelegramError>
  /**
   * Fetches updates. Each comes back as its `update_id` and its JSON text exactly as Telegram sent
   * it. With `timeout: T` (a long poll) the call may take T + 15 seconds, or the client's timeout
   * if that is longer.
   */
  readonly getUpdates: (
    token: Token,
    params?: BotApi.GetUpdatesParams
  ) => Effect.Effect<ReadonlyArray<BotApi.RawUpdate>, TelegramError>
  /**
   * Calls getUpdates with the same parameters until an answer is not an empty list, and returns that answer as
   * `getUpdates` would (a batch, or its failure); `emptied` is called at each empty answer. Where the HTTP
   * client can call back without a fiber (`HttpExchange.send`), the empty answers are taken in its callbacks:
   * an idle bot's long polls then cost no fiber steps and keep little while they wait.
   */
  readonly pollUpdates: (
    token: Token,
    params: BotApi.GetUpdatesParams,
    emptied: () => void
  ) => Effect.Effect<ReadonlyArray<BotApi.RawUpdate>, TelegramError>
  readonly setWebhook: (token: Token, params: BotApi.SetWebhookParams) => Effect.Effect<true, TelegramError>
  readonly deleteWebhook: (token: Token, params?: BotApi.DeleteWebhookParams) => Effect.Effect<true, TelegramError>
  readonly getWebhookInfo: (token: Token) => Effect.Effect<BotApi.WebhookInfo, TelegramError>
  readonly sendMessage: (token: Token, params: BotApi.SendMessageParams) => Effect.Effect<BotApi.Message, TelegramError>
  readonly forwardMessage: (
    token: Token,
    params: BotApi.ForwardMessageParams
  ) => Effect.Effect<BotApi.Message, TelegramError>
  readonly copyMessage: (
    token: Token,
    params: BotApi.CopyMessageParams
  ) => Effect.Effect<BotApi.MessageId, TelegramError>
  /** The edited message, or `true` for an inline message. */
  readonly editMessageText: (
    token: Token,
    params: BotApi.EditMessageTextParams
  ) => Effect.Effect<BotApi.Message | true, TelegramError>
  readonly deleteMessage: (token: Token, params: BotApi.DeleteMessageParams) => Effect.Effect<true, TelegramError>
  readonly answerCallbackQuery: (
    token: Token,
    params: BotApi.AnswerCallbackQueryParams
  ) => Effect.Effect<true, TelegramError>
  /** File details; the download URL holds the token, so building it is left to the caller. */
  readonly getFile: (token: Token, params: BotApi.GetFileParams) => Effect.Effect<BotApi.File, TelegramError>
  /** Calls any method and returns its `result` undecoded. */
  readonly call: (
    token: Token,
    method: string,
    params?: Readonly<Record<string, unknown>>,
    options?: CallOptions
  ) => Effect.Effect<unknown, TelegramError>
  /**
   * Calls a method with one file uploaded as multipart/form-data and returns its `result` undecoded.
   * Parameters that are not strings are sent as JSON, as the Bot API reads them.
   */
  readonly upload: (
    token: Token,
    method: string,
    params: Readonly<Record<string, unknown>>,
    file: Upload
  ) => Effect.Effect<unknown, TelegramError>
  /** The bytes of a file `getFile` described, at most `maxBytes` (a larger file fails the call). */
  readonly download: (token: Token, filePath: string, maxBytes: number) => Effect.Effect<Uint8Array, TelegramError>
}

/** A file sent in a multipart call, as the parameter `field`. */
export interface Upload {
  readonly field: string
  readonly filename: string
  readonly contentType: string
  readonly bytes: Uint8Array
}

/** The Bot API client. */
export class TelegramClient extends Context.Tag("@botrelay/telegram/TelegramClient")<TelegramClient, Service>() {}

const defaultTimeout = Duration.seconds(30)

/** How long an upload or a download may take at least: files go up to 50 MB and 20 MB. */
const fileTimeout = Duration.minutes(2)

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

const summarizeIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 3)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

const encodeToken = (token: string) => encodeURIComponent(token).replace(/%3A/gi, ":")

const quote = 0x22
const backslash = 0x5c
const comma = 0x2c
const openBrace = 0x7b
const closeBrace = 0x7d
const openBracket = 0x5b
const closeBracket = 0x5d

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d

const skipSpace = (text: string, at: number) => {
  while (isSpace(text.charCodeAt(at))) at++
  return at
}

/** The end (exclusive) of the JSON string whose opening quote is at `at`: the next quote no backslash escapes. */
const stringEnd = (text: string, at: number): number => {
  let i = text.indexOf("\"", at + 1)
  while (i !== -1) {
    let backslashes = 0
    while (text.charCodeAt(i - 1 - backslashes) === backslash) backslashes++
    if (backslashes % 2 === 0) return i + 1
    i = text.indexOf("\"", i + 1)
  }
  return text.length
}

/** The end (exclusive) of the JSON value starting at `at`, in text already known to be valid JSON. */
const valueEnd = (text: string, at: number): number => {
  const first = text.charCodeAt(at)
  if (first === quote) return stringEnd(text, at)
  if (first === openBrace || first === openBracket) {
    let depth = 0
    for (let i = at; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === quote) i = stringEnd(text, i) - 1
      else if (c === openBrace || c === openBracket) depth++
      else if ((c === closeBrace || c === closeBracket) && --depth === 0) return i + 1
    }
    return text.length
  }
  let i = at
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (isSpace(c) || c === comma || c === closeBrace || c === closeBracket) break
    i++
  }
  return i
}

/**
 * The exact text of each element of the top-level `result` array of a Bot API answer, or undefined
 * when there is none. `text` must already have parsed as JSON. The last `result` key wins, as with
 * `JSON.parse`.
 */
const resultElements = (text: string): Array<string> | undefined => {
  let at = skipSpace(text, 0)
  if (text.charCodeAt(at) !== openBrace) return undefined
  at = skipSpace(text, at + 1)
  let result: number | undefined
  while (text.charCodeAt(at) === quote) {
    const keyEnd = valueEnd(text, at)
    const key: unknown = JSON.parse(text.slice(at, keyEnd))
    at = skipSpace(text, skipSpace(text, keyEnd) + 1)
    if (key === "result") result = at
    at = skipSpace(text, valueEnd(text, at))
    if (text.charCodeAt(at) === comma) at = skipSpace(text, at + 1)
  }
  if (result === undefined || text.charCodeAt(result) !== openBracket) return undefined
  const elements: Array<string> = []
  at = skipSpace(text, result + 1)
  while (at < text.length && text.charCodeAt(at) !== closeBracket) {
    const end = valueEnd(text, at)
    elements.push(text.slice(at, end))
    at = skipSpace(text, end)
    if (text.charCodeAt(at) === comma) at = skipSpace(text, at + 1)
  }
  return elements
}

const UpdateIds = Schema.Array(Schema.Struct({ update_id: Schema.Int }))
const decodeUpdateIds = Schema.decodeUnknownEither(UpdateIds)

/** `UpdateIds.is`, by hand: every getUpdates answer is checked, and the schema's check costs a microsecond an update. */
const isUpdateIds = (result: unknown): result is typeof UpdateIds.Type =>
  Array.isArray(result) &&
  result.every((update: unknown) =>
    typeof update === "object" && update !== null && Number.isSafeInteger((update as { update_id?: unknown }).update_id)
  )

/** How long a long poll of `seconds` may take: the poll itself plus 15 seconds. */
const pollTimeout = (seconds: number | undefined, timeout: Duration.Duration): Duration.Duration =>
  seconds === undefined || seconds <= 0 ? timeout : Duration.max(timeout, Duration.seconds(seconds + 15))

/** Whether a Bot API answer is a success with an empty list: `{"ok":true,"result":[]}`, however spaced. */
const isEmptyResult = (text: string): boolean => {
  if (text === "{\"ok\":true,\"result\":[]}") return true
  if (text.length > 256) return false
  try {
    const json = JSON.parse(text) as { readonly ok?: unknown; readonly result?: unknown } | null
    return json !== null && json.ok === true && Array.isArray(json.result) && json.result.length === 0
  } catch {
    return false
  }
}

interface Answered {
  readonly status: number
  readonly text: string
  readonly result: unknown
}

const jsonHeaders = { "content-type": "application/json", accept: "application/json" }

const encoder = new TextEncoder()

/** A bare media type (`image/jpeg`); anything else in a part header could break the body. */
const mediaType = /^[\w.+-]+\/[\w.+-]+$/

const quoted = (value: string) => value.replace(/["\\\r\n]/g, (c) => encodeURIComponent(c))

/** A fresh multipart boundary. */
export const makeBoundary = (): string => `botrelay${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`

/**
 * The start of a multipart/form-data body: a part per parameter (strings as they are, other values as
 * JSON, as the Bot API reads them), then the head of the file's part. The file's bytes follow it, then
 * `multipartTail`.
 */
export const multipartHead = (
  params: Readonly<Record<string, unknown>>,
  file: Omit<Upload, "bytes">,
  boundary: string
): Uint8Array => {
  let head = ""
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue
    const text = typeof value === "string" ? value : JSON.stringify(value)
    head += `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"\r\n\r\n${text}\r\n`
  }
  head += `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(file.field)}"; filename="${
    quoted(file.filename)
  }"\r\ncontent-type: ${mediaType.test(file.contentType) ? file.contentType : "application/octet-stream"}\r\n\r\n`
  return encoder.encode(head)
}

/** The end of a multipart body `multipartHead` began, after the file's bytes. */
export const multipartTail = (boundary: string): Uint8Array => encoder.encode(`\r\n--${boundary}--\r\n`)

/** A multipart/form-data body of the parameters and the file, its parts delimited by `boundary`. */
const multipart = (params: Readonly<Record<string, unknown>>, file: Upload, boundary: string): Uint8Array => {
  const parts = [multipartHead(params, file, boundary), file.bytes, multipartTail(boundary)]
  const body = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
  let at = 0
  for (const part of parts) {
    body.set(part, at)
    at += part.length
  }
  return body
}

/**
 * The `result` of a Bot API answer (HTTP `status`, body `text`) to a call of `method`: Telegram's error
 * when it answered `ok: false`, a `Decode` failure when the answer is not a Bot API response.
 */
export const resultOf = (method: string, status: number, text: string): Effect.Effect<unknown, TelegramError> => {
  const fail = (description: string) => Effect.fail(new TelegramTransportError({ reason: "Decode", method, description }))
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return fail(`the answer (HTTP ${status}) is not JSON`)
  }
  const envelope = decodeEnvelope(json)
  if (envelope._tag === "Left") return fail(`the answer (HTTP ${status}) is not a Bot API response`)
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
  return "result" in body ? Effect.succeed(body.result) : fail(`the answer (HTTP ${status}) has no result`)
}

/** `pollUpdates` made of a client's `getUpdates`: each empty answer takes a round of the calling fiber. */
export const pollingWith = (getUpdates: Service["getUpdates"]): Service["pollUpdates"] => (token, params, emptied) => {
  const loop: Effect.Effect<ReadonlyArray<BotApi.RawUpdate>, TelegramError> = Effect.flatMap(
    getUpdates(token, params),
    (updates) => updates.length > 0 ? Effect.succeed(updates) : Effect.suspend(() => (emptied(), loop))
  )
  return loop
}

/** A client that makes its calls with `http`. */
export const makeWith = (options: Options, http: HttpExchange.Service): Service => {
  const apiRoot = options.apiRoot.replace(/\/+$/, "")
  const timeout = Duration.decode(options.timeout ?? defaultTimeout)

  const transport = (method: string, reason: TelegramTransportError["reason"], description: string) =>
    new TelegramTransportError({ reason, method, description })

  /**
   * Sends the call and reads its answer with `read`. One step waits for the answer and then records the call,
   * maps its failure and reads its result, so a long poll keeps as little as possible while it waits. A call
   * interrupted before its answer is not recorded.
   */
  const request = <A>(
    token: Token,
    method: string,
    params: Readonly<Record<string, unknown>>,
    callTimeout: Duration.Duration,
    read: (answered: Answered) => Effect.Effect<A, TelegramError>,
    file?: Upload
  ): Effect.Effect<A, TelegramError> => {
    const boundary = file === undefined ? "" : makeBoundary()
    let body: string | Uint8Array
    try {
      body = file === undefined ? JSON.stringify(params) : multipart(params, file, boundary)
    } catch {
      return Effect.fail(transport(method, "Unsent", "the request body could not be sent"))
    }
    const exchange = http.exchange(call(
      token,
      method,
      body,
      callTimeout,
      file === undefined
        ? jsonHeaders
        : { "content-type": `multipart/form-data; boundary=${boundary}`, accept: "application/json" }
    ))
    return Effect.suspend(() => {
      const started = performance.now()
      return Effect.matchEffect(exchange, {
        onFailure: (error) => failed(method, started, error),
        onSuccess: (answer) => succeeded(method, started, answer, HttpExchange.text(answer), read)
      })
    })
  }

  const call = (
    token: Token,
    method: string,
    body: string | Uint8Array,
    callTimeout: Duration.Duration,
    headers: Readonly<Record<string, string>>
  ): HttpExchange.Request => ({
    method: "POST",
    url: `${apiRoot}/bot${encodeToken(Redacted.value(token))}/${encodeURIComponent(method)}`,
    headers,
    body,
    timeout: callTimeout
  })

  /** A call that got no answer, begun at `started` (`performance.now()`): recorded, and failed as a transport error. */
  const failed = (method: string, started: number, error: HttpExchange.HttpExchangeError) => {
    TelegramMetrics.unsafeRecord(method, undefined, (performance.now() - started) / 1000)
    return Effect.fail(transport(
      method,
      error.reason === "Timeout" ? "Timeout" : HttpExchange.neverSent(error) ? "Unsent" : "Transport",
      error.description
    ))
  }

  /** A call answered with `text`: recorded, and its result read. */
  const succeeded = <A>(
    method: string,
    started: number,
    answer: HttpExchange.Answer,
    text: string,
    read: (answered: Answered) => Effect.Effect<A, TelegramError>
  ) => {
    TelegramMetrics.unsafeRecord(method, answer.status, (performance.now() - started) / 1000)
    return Effect.flatMap(resultOf(method, answer.status, text), (result) => read({ status: answer.status, text, result }))
  }

  const execute = <A, I>(
    token: Token,
    method: string,
    params: Readonly<Record<string, unknown>>,
    result: Schema.Schema<A, I>,
    callTimeout: Duration.Duration = timeout
  ): Effect.Effect<A, TelegramError> =>
    request(token, method, params, callTimeout, (answered) =>
      Schema.decodeUnknown(result)(answered.result).pipe(
        Effect.mapError((error) => transport(method, "Decode", `unexpected result: ${summarizeIssues(error)}`))
      ))

  /**
   * The call in a span of its own. Nothing inside makes spans, so the span is not made their parent: that
   * would copy the fiber's whole context for every call, and keep the copy for a long poll's 30 s.
   */
  const traced = (name: string, method: string = name) => <A, E, R>(call: Effect.Effect<A, E, R>) =>
    Effect.useSpan(`TelegramClient.${name}`, {
      kind: "client",
      captureStackTrace: false,
      attributes: { "telegram.method": method }
    }, () => call)

  const True = Schema.Literal(true)

  /**
   * Each update's text is cut out of the answer as it came (not re-serialised), so nothing in it
   * (unknown fields, number formatting, escapes, big integers) can change on the way through.
   */
  const readUpdates = ({ result, text }: Answered): Effect.Effect<ReadonlyArray<BotApi.RawUpdate>, TelegramError> => {
    if (!isUpdateIds(result)) {
      const issues = Either.match(decodeUpdateIds(result), { onLeft: summarizeIssues, onRight: () => "not a list of updates" })
      return Effect.fail(transport("getUpdates", "Decode", `unexpected result: ${issues}`))
    }
    const payloads = resultElements(text)
    return payloads === undefined || payloads.length !== result.length
      ? Effect.fail(transport("getUpdates", "Decode", "the updates could not be separated"))
      : Effect.succeed(result.map(({ update_id }, i) => ({ update_id, payload: payloads[i]! })))
  }

  /** No span: an idle bot's long poll lasts its timeout, so its span would say nothing (the metrics count every call). */
  const getUpdates = (token: Token, params: BotApi.GetUpdatesParams = {}) =>
    request(token, "getUpdates", params, pollTimeout(params.timeout, timeout), readUpdates)

  const pollUpdates = (token: Token, params: BotApi.GetUpdatesParams, emptied: () => void) => {
    const send = http.send
    if (send === undefined) return pollingWith(getUpdates)(token, params, emptied)
    let body: string
    try {
      body = JSON.stringify(params)
    } catch {
      return Effect.fail(transport("getUpdates", "Unsent", "the request body could not be sent"))
    }
    const sent = call(token, "getUpdates", body, pollTimeout(params.timeout, timeout), jsonHeaders)
    return Effect.async<ReadonlyArray<BotApi.RawUpdate>, TelegramError>((resume) => {
      let cancel: () => void
      const round = () => {
        const started = performance.now()
        cancel = send(sent, (failure, answer) => {
          if (failure !== undefined) return resume(failed("getUpdates", started, failure))
          const text = HttpExchange.text(answer!)
          if (answer!.status === 200 && isEmptyResult(text)) {
            TelegramMetrics.unsafeRecord("getUpdates", 200, (performance.now() - started) / 1000)
            emptied()
            return round()
          }
          resume(succeeded("getUpdates", started, answer!, text, readUpdates))
        })
      }
      round()
      return Effect.sync(() => cancel())
    })
  }

  return {
    getMe: (token) => execute(token, "getMe", {}, BotApi.User).pipe(traced("getMe")),
    getUpdates,
    pollUpdates,
    setWebhook: (token, { secret_token, ...params }) =>
      execute(token, "setWebhook", {
        ...params,
        ...(secret_token === undefined ? {} : { secret_token: Redacted.value(secret_token) })
      }, True).pipe(traced("setWebhook")),
    deleteWebhook: (token, params = {}) =>
      execute(token, "deleteWebhook", params, True).pipe(traced("deleteWebhook")),
    getWebhookInfo: (token) =>
      execute(token, "getWebhookInfo", {}, BotApi.WebhookInfo).pipe(traced("getWebhookInfo")),
    sendMessage: (token, params) => execute(token, "sendMessage", params, BotApi.Message).pipe(traced("sendMessage")),
    forwardMessage: (token, params) =>
      execute(token, "forwardMessage", params, BotApi.Message).pipe(traced("forwardMessage")),
    copyMessage: (token, params) =>
      execute(token, "copyMessage", params, BotApi.MessageId).pipe(traced("copyMessage")),
    editMessageText: (token, params) =>
      execute(token, "editMessageText", params, Schema.Union(BotApi.Message, True)).pipe(traced("editMessageText")),
    deleteMessage: (token, params) => execute(token, "deleteMessage", params, True).pipe(traced("deleteMessage")),
    answerCallbackQuery: (token, params) =>
      execute(token, "answerCallbackQuery", params, True).pipe(traced("answerCallbackQuery")),
    getFile: (token, params) => execute(token, "getFile", params, BotApi.File).pipe(traced("getFile")),
    call: (token, method, params = {}, callOptions) =>
      execute(
        token,
        method,
        params,
        Schema.Unknown,
        callOptions?.timeout === undefined ? timeout : Duration.decode(callOptions.timeout)
      ).pipe(traced("call", method)),
    upload: (token, method, params, file) =>
      request(token, method, params, Duration.max(timeout, fileTimeout), (answered) => Effect.succeed(answered.result), file)
        .pipe(traced("upload", method)),
    download: (token, filePath, maxBytes) =>
      http.exchange({
        method: "GET",
        url: `${apiRoot}/file/bot${encodeToken(Redacted.value(token))}/${
          filePath.split("/").map(encodeURIComponent).join("/")
        }`,
        headers: {},
        timeout: Duration.max(timeout, fileTimeout),
        maxBytes
      }).pipe(
        Effect.mapError((error) =>
          transport("download", error.reason === "Timeout" ? "Timeout" : "Transport", error.description)
        ),
        Effect.flatMap((answer) =>
          answer.status === 200
            ? Effect.succeed(answer.body)
            : Effect.fail(
              new TelegramApiError({
                method: "download",
                error_code: answer.status,
                description: `the file could not be downloaded (HTTP ${answer.status})`
              })
            )
        ),
        traced("download")
      )
  }
}

/** A client on the ambient `HttpClient`. */
export const make = (options: Options): Effect.Effect<Service, never, HttpClient.HttpClient> =>
  Effect.map(HttpExchange.make, (http) => makeWith(options, http))

/** The client as a layer, on the ambient `HttpClient`. */
export const layer = (options: Options): Layer.Layer<TelegramClient, never, HttpClient.HttpClient> =>
  Layer.effect(TelegramClient, make(options))

/** The client as a layer, on the ambient `HttpExchange` (a host's leaner HTTP client). */
export const layerHttpExchange = (options: Options): Layer.Layer<TelegramClient, never, HttpExchange.HttpExchange> =>
  Layer.effect(TelegramClient, Effect.map(HttpExchange.HttpExchange, (http) => makeWith(options, http)))
