import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, Multipart } from "@effect/platform"
import { Media, Message, Moderation } from "@botrelay/core"
import { Schema } from "effect"
import { Done } from "./ChatAdminGroup.js"

/** The multipart form of `POST /api/messages/send-media`, as documented: the fields, then the `file` part. */
export const SendMediaUpload = HttpApiSchema.MultipartStream(
  Schema.Struct({
    ...Media.MediaSendForm.from.fields,
    file: Multipart.SingleFileSchema
  }).annotations({ identifier: "SendMediaUpload" })
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
