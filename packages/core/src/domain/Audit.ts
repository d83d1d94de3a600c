import { Either, Redacted, Schema } from "effect"
import { decodeCursor, encodeCursor } from "./Chat.js"

/** Who acted: a signed-in account, an API key, the command line, or Botrelay itself. */
export const ActorType = Schema.Literal("account", "key", "cli", "system")
export type ActorType = typeof ActorType.Type

/** How an action ended: done, refused (authentication or authorisation), or allowed but not done. */
export const Outcome = Schema.Literal("ok", "denied", "failed")
export type Outcome = typeof Outcome.Type

/** Who acted: `id` is the key's or account's, 0 for the command line and the system. */
export const Actor = Schema.Struct({
  type: ActorType,
  id: Schema.Int,
  name: Schema.String
}).annotations({ identifier: "AuditActor" })
export type Actor = typeof Actor.Type

const entryFields = {
  /** ISO 8601. */
  at: Schema.String,
  actor_type: ActorType,
  actor_id: Schema.Int,
  actor_name: Schema.String,
  /** The client's address; "" when none (command line, system). */
  ip: Schema.String,
  /** `area.verb`: `bots.add`, `chats.ban`, `auth.login`, ... */
  action: Schema.String,
  /** What the action was on (`bot`, `route`, `key`, `account`, ...); "" when nothing in particular. */
  target_type: Schema.String,
  target_id: Schema.String,
  bot_id: Schema.NullOr(Schema.Int),
  chat_id: Schema.NullOr(Schema.Int),
  outcome: Outcome,
  /** What else tells the action apart; never a secret (see `safeDetails`). */
  details: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}

/** An entry of the audit log. */
export const AuditEntry = Schema.Struct({ id: Schema.Int, ...entryFields }).annotations({ identifier: "AuditEntry" })
export type AuditEntry = typeof AuditEntry.Type

/** An entry to append: the log numbers it. */
export const NewAuditEntry = Schema.Struct(entryFields).annotations({ identifier: "NewAuditEntry" })
export type NewAuditEntry = typeof NewAuditEntry.Type

/** A page of the audit log, newest first: `next_cursor` continues it, null on the last page. */
export const AuditPage = Schema.Struct({
  items: Schema.Array(AuditEntry),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AuditPage" })
export type AuditPage = typeof AuditPage.Type

/** Which entries a store reads, newest first (id desc): every filter given must match. */
export interface AuditQuery {
  readonly actor_type?: ActorType | undefined
  readonly actor_id?: number | undefined
  readonly action?: string | undefined
  readonly bot_id?: number | undefined
  /** Entries at or after this time (ISO 8601, as `toISOString` writes it). */
  readonly from?: string | undefined
  /** Entries before this time (ISO 8601, as `toISOString` writes it). */
  readonly to?: string | undefined
  /** Entries with ids below this one: where the previous page ended. */
  readonly before_id?: number | undefined
  readonly limit: number
}

/** The largest page of the audit log, and the default one. */
export const maxPageSize = 200
export const defaultPageSize = 50

/** The cursor after an entry. */
export const auditCursor = (entry: Pick<AuditEntry, "id">): string => encodeCursor([entry.id])

/** The id a cursor of `auditCursor` names; Left with a sentence when it is not one. */
export const decodeAuditCursor = (cursor: string): Either.Either<number, string> =>
  Either.flatMap(
    decodeCursor(cursor, 1),
    ([id]) => id! > 0 ? Either.right(id!) : Either.left("cursor must be a next_cursor this endpoint returned")
  )

const dateTime = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i

/**
 * An ISO 8601 date-time with a zone (`2025-01-31T12:00:00Z`, `2025-01-31T14:00+02:00`) as `toISOString`
 * writes it, the form entries' `at` has; undefined when the text is not one.
 */
export const instant = (text: string): string | undefined => {
  const match = dateTime.exec(text)
  if (match === null) return undefined
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const ms = Date.parse(text)
  if (Number.isNaN(ms) || new Date(Date.UTC(year, month - 1, day)).getUTCDate() !== day) return undefined
  const iso = new Date(ms).toISOString()
  return iso.length === 24 ? iso : undefined
}

const secretNames = new Set([
  "token",
  "password",
  "old_password",
  "new_password",
  "secret",
  "secret_token",
  "api_key",
  "key",
  "authorization",
  "cookie",
  "session",
  "csrf_token",
  "signing_secret"
])

/** Whether a key names a secret, in any case, with `-` or `_`. */
const namesSecret = (key: string): boolean => {
  const name = key.toLowerCase().replace(/-/g, "_")
  return secretNames.has(name) || name.endsWith("_token") || name.endsWith("_secret") || name.endsWith("_password")
}

const botToken = /\d{5,}:[A-Za-z0-9_-]{30,}/g
const apiKey = /brk_[A-Za-z0-9_-]{43,}/g

const redacted = "[redacted]"

const safe = (value: unknown, seen: Set<object>): unknown => {
  if (typeof value === "string") return value.replace(botToken, redacted).replace(apiKey, redacted)
  if (typeof value === "bigint") return value.toString()
  if (typeof value !== "object" || value === null) return value
  if (Redacted.isRedacted(value)) return redacted
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (seen.has(value)) return "[circular]"
  seen.add(value)
  try {
    if (Array.isArray(value)) return value.map((item) => safe(item, seen))
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      if (!namesSecret(key)) out[key] = safe(item, seen)
    }
    return out
  } finally {
    seen.delete(value)
  }
}

/**
 * Details with no secret: keys that name one (`token`, `password`, `key`, `cookie`, `..._token`,
 * `..._secret`, `..._password`, ...) are dropped at every depth, bot tokens and API keys inside strings
 * become "[redacted]", and so do `Redacted` values.
 */
export const safeDetails = (details: Record<string, unknown>): Record<string, unknown> =>
  safe(details, new Set()) as Record<string, unknown>
