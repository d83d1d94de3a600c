import { Duration, Schema } from "effect"

/** An `Idempotency-Key`: 1 to 255 printable ASCII characters. */
export const Key = Schema.String.pipe(
  Schema.pattern(/^[\x20-\x7e]{1,255}$/, { message: () => "Idempotency-Key must be 1 to 255 printable ASCII characters" })
).annotations({ identifier: "IdempotencyKey" })

/** How long a key holds its answer, from its first request. */
export const retention: Duration.Duration = Duration.hours(24)

/** An answer kept for a key: its HTTP status and body. */
export interface Answer {
  readonly status: number
  readonly body: string
}

/** Statuses not kept: the request changed nothing, so a retry with the key runs again (rate limits, our failures). */
export const kept = (status: number): boolean => status !== 429 && status !== 500 && status !== 503

/** The key came before with a different request. */
export class KeyReused extends Schema.TaggedError<KeyReused>()("KeyReused", {}) {
  override get message() {
    return "this Idempotency-Key was used with a different request"
  }
}

/** The first request with the key is still running. */
export class KeyInProgress extends Schema.TaggedError<KeyInProgress>()("KeyInProgress", {}) {
  override get message() {
    return "a request with this Idempotency-Key is still running"
  }
}
