import { Schema } from "effect"

/** Telegram answered `ok: false`. `description` is Telegram's own text, e.g. "Bad Request: chat not found". */
export class TelegramApiError extends Schema.TaggedError<TelegramApiError>()("TelegramApiError", {
  method: Schema.String,
  error_code: Schema.Int,
  description: Schema.String,
  retry_after: Schema.optional(Schema.Number),
  migrate_to_chat_id: Schema.optional(Schema.Number)
}) {
  override get message() {
    return `Telegram rejected ${this.method}: ${this.error_code} ${this.description}`
  }
}

/**
 * Why no usable answer came back: the request broke off after it may have reached Telegram ("Transport"), an
 * unreadable answer ("Decode"), no answer in time ("Timeout"), or the request never left: no connection was
 * made or the body could not be written ("Unsent"). Only "Unsent" says Telegram did not get the call.
 */
export const TransportReason = Schema.Literal("Transport", "Decode", "Timeout", "Unsent")
export type TransportReason = typeof TransportReason.Type

/** No usable answer from Telegram. `description` never holds the request URL or the token. */
export class TelegramTransportError extends Schema.TaggedError<TelegramTransportError>()("TelegramTransportError", {
  reason: TransportReason,
  method: Schema.String,
  description: Schema.String
}) {
  override get message() {
    return `${this.reason} error calling ${this.method}: ${this.description}`
  }
}

/** Any failure of a Bot API call. */
export type TelegramError = TelegramApiError | TelegramTransportError
