import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Media, Message, Moderation } from "@botrelay/core"
import { Schema } from "effect"
import { Done } from "./ChatAdminGroup.js"

/** The `file` part of an upload: the bytes, sent on to Telegram unchanged. */
const FilePart = Schema.Unknown.annotations({
  jsonSchema: { type: "string", format: "binary" },
  description: "the file, as the last part; its filename and Content-Type go on to Telegram"
})

/**
 * The multipart form of `POST /api/messages/send-media`, as documented (the handler reads it as a stream):
 * the text fields, then the `file` part last.
 */
export const SendMediaUpload = HttpApiSchema.MultipartStream(
  Schema.Struct({
    ...Media.MediaSendForm.from.fields,
    file: FilePart
  }).annotations({
    identifier: "SendMediaUpload",
    description: "bot_id, chat_id, type and the optional fields first, then the file part, which must be last"
  })
)

/**
 * What is done to messages beyond sending text: media, edits, deletions and pins, under /api/messages.
 * Authorization is applied where the group joins the `Api`.
 */
export class MessageActionsGroup extends HttpApiGroup.make("messageActions")
  .add(
    HttpApiEndpoint.post("sendMedia", "/messages/send-media")
      .setPayload(Schema.Union(Media.SendMedia, SendMediaUpload))
      .addSuccess(Message.Message)
  )
  .add(HttpApiEndpoint.post("edit", "/messages/edit").setPayload(Message.EditMessage).addSuccess(Message.Message))
  .add(HttpApiEndpoint.post("delete", "/messages/delete").setPayload(Moderation.MessageRef).addSuccess(Done))
  .add(HttpApiEndpoint.post("pin", "/messages/pin").setPayload(Moderation.PinMessage).addSuccess(Done))
  .add(HttpApiEndpoint.post("unpin", "/messages/unpin").setPayload(Moderation.MessageRef).addSuccess(Done))
{}
