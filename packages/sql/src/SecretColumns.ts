import { SettingsStore } from "@botrelay/core"
import type { Cipher } from "./SecretKey.js"
import type { Database } from "./Tables.js"

/** A row of one of the shared tables, its columns by name. */
export type Row = Record<string, unknown>

const text = (value: unknown): string => typeof value === "string" ? value : ""

/**
 * The row with its secrets taken from one key to another: a bot's `token`, `secret_token` and
 * `signing_secret` (and `token_hash`, the token's keyed hash), a bridge's `signing_secret`, a webhook's
 * `secret`, a secret setting's `value`. A row of a table without secrets, or without those columns, is
 * returned as it is. Throws `SecretKeyError` when `from` does not decrypt a secret.
 */
export const recrypt = (table: keyof Database, row: Row, from: Cipher, to: Cipher): Row => {
  switch (table) {
    case "botrelay_bots": {
      if (!("token" in row)) return row
      const token = from.decrypt("token", text(row.token))
      return {
        ...row,
        token: to.encrypt("token", token),
        token_hash: to.tokenHash(token),
        ...("secret_token" in row
          ? { secret_token: to.encrypt("secret_token", from.decrypt("secret_token", text(row.secret_token))) }
          : {}),
        ...("signing_secret" in row
          ? {
            signing_secret: to.encrypt("signing_secret", from.decrypt("signing_secret", text(row.signing_secret)))
          }
          : {})
      }
    }
    case "botrelay_bridges":
      return "signing_secret" in row
        ? {
          ...row,
          signing_secret: to.encrypt("signing_secret", from.decrypt("signing_secret", text(row.signing_secret)))
        }
        : row
    case "botrelay_webhooks":
      return "secret" in row
        ? { ...row, secret: to.encrypt("webhook_secret", from.decrypt("webhook_secret", text(row.secret))) }
        : row
    case "botrelay_settings":
      return SettingsStore.secretSettings.has(text(row.name))
        ? { ...row, value: to.encrypt("setting", from.decrypt("setting", text(row.value))) }
        : row
    default:
      return row
  }
}
