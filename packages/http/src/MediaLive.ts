import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Media as MediaSchemas, MediaFiles } from "@botrelay/core"
// In scope so that the inferred types can name the services the handlers need.
import type { AuditLog as _AuditLog } from "@botrelay/core"
import { HttpExchange, TelegramError } from "@botrelay/telegram"
import { Effect, Option, Stream } from "effect"
import { forbidden, mayInChat, mayOnBot, orDomain, requireBot } from "./Access.js"
import { Api, Caller } from "./Api.js"
import * as ApiError from "./ApiError.js"
import * as TgApi from "./TgApi.js"

/**
 * Media types a browser may be given for a file from a chat: images, audio, video and PDF. Anything else
 * (HTML, SVG, scripts...) goes out as `application/octet-stream`, so a file cannot run as a page of this origin.
 */
const typesByExtension: Readonly<Record<string, string>> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  mp4: "video/mp4",
  m4v: "video/mp4",
  mov: "video/quicktime",
  webm: "video/webm",
  mp3: "audio/mpeg",
  m4a: "audio/mp4",
  ogg: "audio/ogg",
  oga: "audio/ogg",
  opus: "audio/ogg",
  wav: "audio/wav",
  flac: "audio/flac",
  pdf: "application/pdf",
  tgs: "application/x-tgsticker"
}

/** The media type of each of Telegram's file folders, for paths without a known extension. */
const typesByFolder: Readonly<Record<string, string>> = {
  photos: "image/jpeg",
  voice: "audio/ogg",
  videos: "video/mp4",
  animations: "video/mp4",
  video_notes: "video/mp4",
  stickers: "image/webp",
  music: "audio/mpeg"
}

/** The `Content-Type` of a file by its path at Telegram: its extension, else its folder, else bytes. */
export const contentTypeOf = (filePath: string): string => {
  const extension = /\.([A-Za-z0-9]{1,8})$/.exec(filePath)?.[1]?.toLowerCase()
  return (extension === undefined ? undefined : typesByExtension[extension]) ??
    typesByFolder[filePath.split("/")[0] ?? ""] ??
    "application/octet-stream"
}

/** Request headers passed on to Telegram's file endpoint. */
const passedOn = ["range", "if-range"] as const

/** Headers of Telegram's answer passed back. */
const passedBack = ["content-length", "content-range", "etag", "last-modified"] as const

const unreachable = (description: string) =>
  new TelegramError.TelegramTransportError({ reason: "Transport", method: "download", description })

/**
 * `GET /api/media`: the file of a message in the bot's history, streamed from Telegram's file endpoint
 * as it comes, never whole in memory. `Range` (and `If-Range`) go on to Telegram: a satisfiable range is
 * a 206 with `Content-Range`, an unsatisfiable one a 416. `Content-Type` follows the file's path (see
 * `contentTypeOf`), `Content-Length` is Telegram's, and `Cache-Control` is `private`.
 */
export const layer = HttpApiBuilder.group(Api, "media", (handlers) =>
  Effect.gen(function*() {
    const files = yield* MediaFiles.MediaFiles
    const { apiRoot } = yield* TgApi.Upstream
    const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))

    const download = (botId: number, fileId: string) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const { bot, file_path } = yield* files.locate(botId, fileId)
        const path = TgApi.safeFilePath(file_path)
        if (path === undefined) return yield* Effect.fail(new MediaSchemas.FileNotFound({ bot_id: botId, file_id: fileId }))
        const headers: Record<string, string> = {}
        for (const name of passedOn) {
          const value = request.headers[name]
          if (value !== undefined) headers[name] = value
        }
        const response = yield* client.execute(
          HttpClientRequest.get(`${apiRoot}/file/bot${TgApi.tokenSegment(bot)}/${path}`).pipe(
            HttpClientRequest.setHeaders(headers)
          )
        ).pipe(
          Effect.mapError((e) => unreachable(`Telegram could not be reached (${HttpExchange.errorCode(e.cause) ?? "no answer"})`)),
          Effect.withUnhandledErrorLogLevel(Option.none())
        )
        const status = response.status
        if (status !== 200 && status !== 206) {
          yield* Effect.ignore(response.arrayBuffer)
          if (status === 416) {
            const range = response.headers["content-range"]
            return HttpServerResponse.unsafeJson(
              { error: "the requested range is outside the file", code: "range_not_satisfiable" },
              { status: 416, headers: range === undefined ? {} : { "content-range": range } }
            )
          }
          if (status === 404) return yield* Effect.fail(new MediaSchemas.FileNotFound({ bot_id: botId, file_id: fileId }))
          return yield* Effect.fail(
            new ApiError.BadGateway({
              error: `Telegram answered the download with HTTP ${status}`,
              code: "telegram_error"
            })
          )
        }
        const answer: Record<string, string> = {
          "content-type": contentTypeOf(file_path),
          "cache-control": "private",
          "accept-ranges": "bytes",
          "x-content-type-options": "nosniff"
        }
        for (const name of passedBack) {
          const value = response.headers[name]
          if (value !== undefined) answer[name] = value
        }
        return HttpServerResponse.stream(
          response.stream.pipe(Stream.mapError((e) => unreachable(`the download broke off (${HttpExchange.errorCode(e.cause) ?? "no code"})`))),
          { status, headers: answer }
        )
      })

    /** The whole bot's readers may fetch any of its files; others, files of a chat they may read. */
    const mayFetch = (botId: number, fileId: string) =>
      Effect.flatMap(Caller, (caller) =>
        mayOnBot(caller, botId, "read")
          ? Effect.void
          : requireBot(botId).pipe(
            Effect.zipRight(files.chatsWith(botId, fileId)),
            Effect.flatMap((chats) =>
              chats.some((chatId) => mayInChat(caller, botId, chatId, "read"))
                ? Effect.void
                : forbidden(`this file is not in a chat of bot ${botId} this caller may read`)
            )
          ))

    return handlers.handle("get", ({ urlParams }) =>
      mayFetch(urlParams.bot_id, urlParams.file_id).pipe(
        Effect.zipRight(download(urlParams.bot_id, urlParams.file_id)),
        Effect.catchAll(orDomain)
      ))
  }))
