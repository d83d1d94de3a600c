import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Multipart from "@effect/platform/Multipart"
import { Media, Messages } from "@botrelay/core"
// In scope so that the inferred types can name the services the handlers need.
import type { AuditLog as _AuditLog } from "@botrelay/core"
import { HttpExchange, TelegramClient, TelegramError } from "@botrelay/telegram"
import { Chunk, Data, Deferred, Effect, Either, Option, ParseResult, Schema, Stream } from "effect"
import { requireTarget } from "./Access.js"
import * as ApiError from "./ApiError.js"
import * as TgApi from "./TgApi.js"

/** The path of the endpoint whose multipart bodies stream through instead of being read whole. */
export const path = "/api/messages/send-media"

/** The most the text fields of an upload may take together; the file is counted apart. */
const maxFieldBytes = 64 * 1024

/** The largest body an upload may have: the file at Telegram's limit, and its fields. */
export const maxBodyBytes = Media.maxUploadBytes + maxFieldBytes

/**
 * Whether a request is a multipart `POST /api/messages/send-media`, whose body is streamed to Telegram
 * rather than read whole, so the API's 1 MiB body limit does not apply to it (its own is 50 MB).
 */
export const isUpload = (method: string, url: string, contentType: string | undefined): boolean => {
  if (method !== "POST" || contentType === undefined || !/^\s*multipart\/form-data\b/i.test(contentType)) return false
  const query = url.indexOf("?")
  return (query === -1 ? url : url.slice(0, query)).replace(/(.)\/+$/, "$1") === path
}

/** Why an upload ended before Telegram answered, besides Telegram and the bot. */
export class UploadFailure extends Data.TaggedError("UploadFailure")<{
  readonly reason: "TooLarge" | "NoFile" | "PartAfterFile" | "Unreadable"
}> {}

/** The answer to an upload that failed on our side: 413 over Telegram's limit (not among the contract's errors), else a 400. */
export const refusal = (failure: UploadFailure): Effect.Effect<HttpServerResponse.HttpServerResponse, ApiError.BadRequest> => {
  switch (failure.reason) {
    case "TooLarge":
      return Effect.succeed(HttpServerResponse.unsafeJson({
        error: `the upload is larger than ${Media.maxUploadBytes} bytes (50 MB), the most Telegram takes from a bot`,
        code: "payload_too_large"
      }, { status: 413 }))
    case "NoFile":
      return Effect.fail(
        new ApiError.BadRequest({
          error: "invalid request: a multipart send-media needs a file part named file (or send JSON with file_id or url)",
          code: "invalid_request",
          details: [{ path: "file", message: "a file part named file is required" }]
        })
      )
    case "PartAfterFile":
      return Effect.fail(
        new ApiError.BadRequest({
          error: "invalid request: the file part must come last, after bot_id, chat_id, type and the other fields",
          code: "invalid_request",
          details: [{ path: "file", message: "the file part must be the last part" }]
        })
      )
    case "Unreadable":
      return Effect.fail(
        new ApiError.BadRequest({ error: "invalid request: the multipart body could not be read", code: "invalid_request" })
      )
  }
}

const decodeForm = Schema.decodeUnknown(Media.MediaSendForm, { errors: "all" })

/** The 400 for fields that break the form's schema. */
const invalidFields = (error: ParseResult.ParseError) =>
  ApiError.invalidRequest(
    ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
      path: issue.path.map(String).join("."),
      message: issue.message
    }))
  )

const badGateway = (error: HttpClientError.HttpClientError, method: string) =>
  new TelegramError.TelegramTransportError({
    reason: error._tag === "RequestError" &&
        (error.reason !== "Transport" || HttpExchange.notConnected(HttpExchange.errorCode(error.cause)))
      ? "Unsent"
      : "Transport",
    method,
    description: `${error._tag === "ResponseError" ? "the answer could not be read" : "Telegram could not be reached"}${
      HttpExchange.errorCode(error.cause) === undefined ? "" : ` (${HttpExchange.errorCode(error.cause)})`
    }`
  })

/**
 * Handles a multipart `POST /api/messages/send-media`: reads the text fields (they must come before the
 * `file` part), checks them and the key's scope, then streams the file to Telegram as the media of the
 * send, part by part as it arrives, never whole in memory. The file's bytes go out unchanged; a part after
 * the file, or a file over 50 MB, ends the call to Telegram unsent (a 400, a 413).
 */
export const make = Effect.gen(function*() {
  const { apiRoot } = yield* TgApi.Upstream
  const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const messages = yield* Messages.Messages

  return (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) {
        return yield* Effect.fail(new UploadFailure({ reason: "TooLarge" }))
      }
      const parts = request.multipartStream.pipe(
        Stream.mapError(() => new UploadFailure({ reason: "Unreadable" })),
        Multipart.withLimitsStream({
          maxParts: Option.some(64),
          maxFieldSize: maxFieldBytes,
          maxFileSize: Option.none(),
          maxTotalSize: Option.some(maxBodyBytes + 16 * 1024)
        })
      )
      const pull = yield* Stream.toPull(parts)
      /** The next parts, or none at the end of the body. */
      const next = pull.pipe(
        Effect.map(Option.some),
        Effect.catchAll(Option.match({ onNone: () => Effect.succeedNone, onSome: Effect.fail }))
      )
      let file: Multipart.File | undefined
      let after: ReadonlyArray<Multipart.Part> = []
      let started = false

      /**
       * Reads the rest of the body, dropping it, so the client gets the answer rather than a reset
       * connection; the multipart limits bound it. A file already streaming cannot be read again.
       */
      const drain = Effect.gen(function*() {
        const files = [...(file !== undefined && !started ? [file] : []), ...after].filter(Multipart.isFile)
        for (const part of files) yield* Stream.runDrain(part.content)
        while (true) {
          const chunk = yield* next
          if (Option.isNone(chunk)) return
          for (const part of chunk.value) if (part._tag === "File") yield* Stream.runDrain(part.content)
        }
      }).pipe(Effect.ignore)

      return yield* Effect.gen(function*() {
        const fields: Record<string, string> = {}
        while (file === undefined) {
          const chunk = yield* next
          if (Option.isNone(chunk)) return yield* Effect.fail(new UploadFailure({ reason: "NoFile" }))
          const items = Chunk.toReadonlyArray(chunk.value)
          for (let i = 0; i < items.length; i++) {
            const part = items[i]!
            if (part._tag === "Field") {
              fields[part.key] = part.value
              continue
            }
            file = part
            after = items.slice(i + 1)
            if (part.key !== "file") return yield* Effect.fail(new UploadFailure({ reason: "NoFile" }))
            break
          }
        }
        const input = yield* decodeForm(fields).pipe(Effect.mapError(invalidFields))
        yield* requireTarget(input.bot_id, input.chat_id, "reply")
        const upload = file
        const failed = yield* Deferred.make<never, UploadFailure>()

        /** Fails unless the body ends after the file: parts after it would be sent nowhere. */
        const rest = Stream.fromEffect(
          Effect.gen(function*() {
            if (after.length > 0) return yield* Effect.fail(new UploadFailure({ reason: "PartAfterFile" }))
            const more = yield* next
            if (Option.isSome(more)) {
              after = Chunk.toReadonlyArray(more.value)
              return yield* Effect.fail(new UploadFailure({ reason: "PartAfterFile" }))
            }
          })
        ).pipe(Stream.drain)

        const send: Messages.FileUpload<UploadFailure>["send"] = (bot, method, params, field) =>
          Effect.gen(function*() {
            const boundary = TelegramClient.makeBoundary()
            let seen = 0
            const content = Stream.suspend(() => {
              started = true
              return upload.content
            }).pipe(
              Stream.mapError(() => new UploadFailure({ reason: "Unreadable" })),
              Stream.mapChunksEffect((chunk) => {
                for (const bytes of chunk) seen += bytes.length
                return seen > Media.maxUploadBytes
                  ? Effect.fail(new UploadFailure({ reason: "TooLarge" }))
                  : Effect.succeed(chunk)
              })
            )
            const body = Stream.make(
              TelegramClient.multipartHead(
                params,
                { field, filename: upload.name, contentType: upload.contentType },
                boundary
              )
            ).pipe(
              Stream.concat(content),
              Stream.concat(rest),
              Stream.concat(Stream.make(TelegramClient.multipartTail(boundary))),
              Stream.tapError((e) => Deferred.fail(failed, e))
            )
            const outgoing = HttpClientRequest.post(`${apiRoot}/bot${TgApi.tokenSegment(bot)}/${method}`).pipe(
              HttpClientRequest.setHeader("accept", "application/json"),
              HttpClientRequest.setBody(HttpBody.stream(body, `multipart/form-data; boundary=${boundary}`))
            )
            const answer = client.execute(outgoing).pipe(
              Effect.flatMap((response) => Effect.map(response.text, (text) => [response.status, text] as const)),
              Effect.mapError((e) => badGateway(e, method)),
              Effect.withUnhandledErrorLogLevel(Option.none())
            )
            const outcome = yield* Effect.either(Effect.raceFirst(answer, Deferred.await(failed)))
            if (Either.isLeft(outcome)) {
              const bodyFailure = yield* Deferred.poll(failed)
              return yield* Option.isSome(bodyFailure) ? bodyFailure.value : Effect.fail(outcome.left)
            }
            const [status, text] = outcome.right
            return yield* TelegramClient.resultOf(method, status, text)
          })

        return yield* messages.uploadMedia(input, { send })
      }).pipe(
        Effect.tapError((e) => e._tag === "UploadFailure" && e.reason === "TooLarge" ? Effect.void : drain)
      )
    }).pipe(Effect.scoped)
})
