import { Redacted } from "effect"
import { Webhook } from "standardwebhooks"

/** The Standard Webhooks headers of a signed POST. */
export interface SignatureHeaders {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/**
 * The Standard Webhooks headers that sign `body` as message `id` sent at `at` (Unix ms) with `secret`
 * (`whsec_` + base64): `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`.
 */
export const sign = (
  secret: Redacted.Redacted<string>,
  id: string,
  at: number,
  body: string
): SignatureHeaders => {
  const timestamp = Math.floor(at / 1000)
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": new Webhook(Redacted.value(secret)).sign(id, new Date(timestamp * 1000), body)
  }
}
