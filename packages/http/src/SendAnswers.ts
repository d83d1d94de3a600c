import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Message } from "@botrelay/core"
import { Schema } from "effect"

const Failed = Schema.Struct({
  error: Schema.String,
  code: Schema.String,
  retry_after: Schema.optional(Schema.Number),
  message: Message.Message
})

/** 502 of a send Telegram refused, with the message as stored, `failed`. */
export const DeliveryFailedAnswer = Failed.annotations({ identifier: "DeliveryFailed", ...HttpApiSchema.annotations({ status: 502 }) })

/** 503 `telegram_unreachable` of a send that never reached Telegram, with the message as stored, `failed`. */
export const DeliveryUnsentAnswer = Failed.annotations({
  identifier: "DeliveryUnsent",
  ...HttpApiSchema.annotations({ status: 503 })
})

/** 504 `delivery_unknown`: the send may have reached Telegram, no answer came; the message as stored, `unknown`. */
export const DeliveryUnknownAnswer = Schema.Struct({
  error: Schema.String,
  code: Schema.Literal("delivery_unknown"),
  message: Message.Message
}).annotations({ identifier: "DeliveryUnknown", ...HttpApiSchema.annotations({ status: 504 }) })
