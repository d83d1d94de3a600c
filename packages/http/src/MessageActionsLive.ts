import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { ChatAdmin, Media, type Message, Messages } from "@botrelay/core"
import { Effect, ParseResult, Schema } from "effect"
import { asBot, orDomain } from "./Access.js"
import { Api } from "./Api.js"
import * as ApiError from "./ApiError.js"
import * as MediaUpload from "./MediaUpload.js"

const done = { ok: true } as const

const decodeSendMedia = Schema.decodeUnknown(Media.SendMedia, { errors: "all" })

const invalidJson = new ApiError.BadRequest({ error: "invalid request: the body is not valid JSON", code: "invalid_json" })

/** The 400 for a body that breaks its schema, in the shape the API's own decoding gives. */
const invalid = (error: ParseResult.ParseError) =>
  ApiError.invalidRequest(
    ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
      path: issue.path.map(String).join("."),
      message: issue.message
    }))
  )

const respond = (message: Message.Message) => HttpServerResponse.unsafeJson(message)

const parse = (text: string) =>
  Effect.try({ try: (): unknown => JSON.parse(text), catch: () => invalidJson })

/**
 * Media, edits, deletions and pins. `send-media` takes JSON (`file_id` or `url`) or a multipart upload,
 * streamed to Telegram (see MediaUpload); edits go through `Messages`, deletions and pins through `ChatAdmin`.
 */
export const layer = HttpApiBuilder.group(Api, "messageActions", (handlers) =>
  Effect.gen(function*() {
    const messages = yield* Messages.Messages
    const admin = yield* ChatAdmin.ChatAdmin
    const upload = yield* MediaUpload.make
    return handlers
      .handleRaw("sendMedia", ({ request }) =>
        MediaUpload.isUpload(request.method, request.url, request.headers["content-type"])
          ? upload(request).pipe(
            Effect.map(respond),
            Effect.catchAll((e) => e._tag === "UploadFailure" ? MediaUpload.refusal(e) : orDomain(e))
          )
          : request.text.pipe(
            Effect.orDie,
            Effect.flatMap(parse),
            Effect.flatMap((body) => Effect.mapError(decodeSendMedia(body), invalid)),
            Effect.flatMap((input) => asBot(input.bot_id, messages.sendMedia(input))),
            Effect.map(respond)
          ))
      .handle("edit", ({ payload }) => asBot(payload.bot_id, messages.edit(payload)))
      .handle("delete", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.deleteMessage(payload), done)))
      .handle("pin", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.pin(payload), done)))
      .handle("unpin", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.unpin(payload), done)))
  }))
