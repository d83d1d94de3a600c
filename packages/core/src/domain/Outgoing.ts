import { TelegramError } from "@botrelay/telegram"
import { Schema } from "effect"
import { Message } from "./Message.js"

/** Whether Telegram took an outgoing message: not yet asked, took it, refused it, or nobody knows. */
export const DeliveryState = Schema.Literal("queued", "sent", "failed", "unknown")
export type DeliveryState = typeof DeliveryState.Type

/**
 * The history's key of an outgoing message Telegram has not numbered: below the button presses (-1 down to
 * -2^52), so that they never meet; shown as id 0.
 */
export const placeholderId = (localId: number): number => -(2 ** 52) - localId

/** Whether a stored id is a placeholder (`placeholderId`) rather than Telegram's message_id or a button press. */
export const isPlaceholder = (id: number): boolean => id < -(2 ** 52) && id > -(2 ** 53) + 2 ** 32

/** What an operator says became of a message whose delivery is unknown (or failed, for `resend`). */
export const ResolveOutcome = Schema.Literal("sent", "failed", "resend")
export type ResolveOutcome = typeof ResolveOutcome.Type

/** Body of `POST /api/messages/resolve-delivery`; `message_id` (only with `sent`) is Telegram's, when known. */
export const ResolveDelivery = Schema.Struct({
  local_id: Schema.Int.pipe(Schema.positive()),
  outcome: ResolveOutcome,
  message_id: Schema.optional(Schema.Int.pipe(Schema.positive()))
}).annotations({ identifier: "ResolveDelivery" })
export type ResolveDelivery = typeof ResolveDelivery.Type

/** The reasons Telegram gives (403) when a person cannot be written to through the bot. */
const unreachableReasons = /bot was blocked by the user|user is deactivated|bot can't initiate conversation/i

/** Whether a refusal of a send means the person cannot be reached through the bot. */
export const isUnreachable = (errorCode: number, description: string): boolean =>
  errorCode === 403 && unreachableReasons.test(description)

/** No message sent through the API has this `local_id`. */
export class OutgoingNotFound extends Schema.TaggedError<OutgoingNotFound>()("OutgoingNotFound", {
  local_id: Schema.Int
}) {
  override get message() {
    return `no message sent through the API has local_id ${this.local_id}`
  }
}

/** The message's delivery state does not allow the outcome asked for. */
export class NotResolvable extends Schema.TaggedError<NotResolvable>()("NotResolvable", {
  local_id: Schema.Int,
  delivery: Schema.String,
  outcome: Schema.String
}) {
  override get message() {
    return this.outcome === "resend" && this.delivery !== "sent"
      ? `message ${this.local_id} cannot be sent again: it was an upload, or it is ${this.delivery}`
      : `message ${this.local_id} is ${this.delivery}; only an unknown delivery can be resolved as ${this.outcome}`
  }
}

/** Telegram refused the message, or the request never reached it: `stored` is the message as kept, `failed`. */
export class DeliveryFailed extends Schema.TaggedError<DeliveryFailed>()("DeliveryFailed", {
  error_code: Schema.Int,
  description: Schema.String,
  retry_after: Schema.optional(Schema.Number),
  stored: Message
}) {
  override get message() {
    return `the message was not delivered: ${this.description}`
  }
}

/** The request reached Telegram but no answer came back: `stored` is the message as kept, `unknown`. */
export class DeliveryUnknown extends Schema.TaggedError<DeliveryUnknown>()("DeliveryUnknown", {
  description: Schema.String,
  stored: Message
}) {
  override get message() {
    return `whether the message was delivered is unknown: ${this.description}`
  }
}

/** A failed or unknown delivery as the Telegram error behind it, for callers that know only those. */
export const toTelegramError = (method: string, e: DeliveryFailed | DeliveryUnknown): TelegramError.TelegramError =>
  e._tag === "DeliveryUnknown"
    ? new TelegramError.TelegramTransportError({ reason: "Transport", method, description: e.description })
    : e.error_code === 0
    ? new TelegramError.TelegramTransportError({ reason: "Unsent", method, description: e.description })
    : new TelegramError.TelegramApiError({
      method,
      error_code: e.error_code,
      description: e.description,
      ...(e.retry_after === undefined ? {} : { retry_after: e.retry_after })
    })
