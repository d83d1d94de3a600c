import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Schema } from "effect"

/** Query of `GET /api/media`. */
export const MediaQuery = Schema.Struct({
  bot_id: Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)),
  file_id: Schema.String.pipe(
    Schema.minLength(1, { message: () => "file_id must not be empty" }),
    Schema.maxLength(256, { message: () => "file_id must be at most 256 characters" })
  )
})

/** Files of the messages in bots' histories, streamed from Telegram. Authorization is applied where the group joins the `Api`. */
export class MediaGroup extends HttpApiGroup.make("media")
  .add(
    HttpApiEndpoint.get("get", "/media")
      .setUrlParams(MediaQuery)
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" }))
  )
{}
