import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { ChatAdmin, Media, type Message, Messages } from "@botrelay/core"
// In scope so that the inferred types can name the services the handlers need.
import type { AuditLog as _AuditLog, Idempotency as _Idempotency } from "@botrelay/core"
import { Effect, Option, ParseResult, Schema } from "effect"
import { asChat, forbidden, mayInChat, orDomain, requireChat, requireTarget } from "./Access.js"
import { Api, Caller } from "./Api.js"
import * as ApiError from "./ApiError.js"
import { audited } from "./Audited.js"
import * as MediaUpload from "./MediaUpload.js"
import * as Sends from "./Sends.js"

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

/** An upload streams to Telegram as it arrives, so it cannot be checked against a key's first request. */
const uploadWithKey = new ApiError.BadRequest({
  error: "invalid request: Idempotency-Key is not supported on multipart uploads; send file_id or url as JSON to use it",
  code: "idempotency_unsupported"
})

/** What a sent message is recorded with. */
const messageTarget = (m: Message.Message) => ({
  target_type: "message",
  target_id: m.id,
  bot_id: m.bot_id,
  chat_id: m.chat_id
})

/** An action on a stored message, as recorded. */
const onMessage = (p: { readonly bot_id: number; readonly chat_id: number; readonly message_id?: number }) => ({
  target_type: "message",
  ...(p.message_id === undefined ? {} : { target_id: p.message_id }),
  bot_id: p.bot_id,
  chat_id: p.chat_id
})

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
    /** Deleting the bot's own message needs reply; anyone else's, moderate. */
    const deleting = (p: { readonly bot_id: number; readonly chat_id: number; readonly message_id: number }) =>
      Effect.flatMap(Caller, (caller) =>
        mayInChat(caller, p.bot_id, p.chat_id, "moderate")
          ? Effect.void
          : requireChat(p.bot_id, p.chat_id, "reply").pipe(
            Effect.zipRight(messages.find(p.bot_id, p.chat_id, p.message_id)),
            Effect.flatMap((found) =>
              Option.isSome(found) && found.value.direction === "out"
                ? Effect.void
                : forbidden(`deleting others' messages in chat ${p.chat_id} of bot ${p.bot_id} needs moderate`)
            )
          ))
    return handlers
      .handleRaw("sendMedia", ({ request }) => {
        if (MediaUpload.isUpload(request.method, request.url, request.headers["content-type"])) {
          if (request.headers[Sends.keyHeader] !== undefined) return Effect.fail(uploadWithKey)
          return Sends.answer(
            "",
            audited(
              "messages.send_media",
              {},
              upload(request).pipe(
                Effect.catchAll((e): Effect.Effect<never, ApiError.ApiError | MediaUpload.UploadFailure | Sends.Undelivered> =>
                  e._tag === "UploadFailure" ? Effect.fail(e) : Sends.orUndelivered(e)
                )
              ),
              messageTarget
            )
          ).pipe(Effect.catchTag("UploadFailure", MediaUpload.refusal))
        }
        return request.text.pipe(
          Effect.orDie,
          Effect.flatMap(parse),
          Effect.flatMap((body) => Effect.mapError(decodeSendMedia(body), invalid)),
          Effect.flatMap((input) =>
            Sends.answer(
              `send-media ${JSON.stringify(input)}`,
              audited(
                "messages.send_media",
                {},
                requireTarget(input.bot_id, input.chat_id, "reply").pipe(
                    Effect.zipRight(messages.sendMedia(input)),
                    Effect.catchAll(Sends.orUndelivered)
                  ),
                messageTarget
              )
            )
          )
        )
      })
      .handle("edit", ({ payload }) =>
        audited("messages.edit", onMessage(payload), asChat(payload.bot_id, payload.chat_id, "reply", messages.edit(payload))))
      .handle("delete", ({ payload }) =>
        audited(
          "messages.delete",
          onMessage(payload),
          deleting(payload).pipe(
            Effect.zipRight(admin.deleteMessage(payload)),
            Effect.as(done),
            Effect.catchAll(orDomain)
          )
        ))
      .handle("pin", ({ payload }) =>
        audited("messages.pin", onMessage(payload), asChat(payload.bot_id, payload.chat_id, "moderate", Effect.as(admin.pin(payload), done))))
      .handle("unpin", ({ payload }) =>
        audited("messages.unpin", onMessage(payload), asChat(payload.bot_id, payload.chat_id, "moderate", Effect.as(admin.unpin(payload), done))))
  }))
