import { Schema } from "effect"
import { withoutControlCharacters } from "./Bot.js"
import * as Scope from "./Scope.js"

/** `admin` does everything; `operator` acts on its assigned bots only. */
export const Role = Schema.Literal("admin", "operator")
export type Role = typeof Role.Type

/** An API key as listed; the secret itself is shown once, at creation. */
export const ApiKey = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  role: Role,
  /** The bots `scopes` name. */
  bot_ids: Schema.Array(Schema.Int),
  /** What the key may do, per bot and chat; empty for admin keys. */
  scopes: Schema.Array(Scope.Entry),
  prefix: Schema.String,
  created_at: Schema.String,
  last_used_at: Schema.String,
  enabled: Schema.Boolean
}).annotations({ identifier: "ApiKey" })
export type ApiKey = typeof ApiKey.Type

/** A newly minted key: the record and its secret. */
export const CreatedApiKey = Schema.Struct({ ...ApiKey.fields, key: Schema.String }).annotations({
  identifier: "CreatedApiKey"
})
export type CreatedApiKey = typeof CreatedApiKey.Type

/** Body of `POST /api/auth/api-keys`. Keys are operators unless `role` says admin. */
export const NewApiKey = Schema.Struct({
  name: Schema.String.pipe(
    withoutControlCharacters("name"),
    Schema.compose(Schema.Trim),
    Schema.minLength(1, { message: () => "name must not be empty" }),
    Schema.maxLength(128, { message: () => "name must be at most 128 characters" })
  ),
  role: Schema.optionalWith(Role, { default: () => "operator" as const }),
  /** Shorthand for `scopes` over every chat of these bots with the default abilities. */
  bot_ids: Schema.optional(Schema.Array(Schema.Int.pipe(Schema.positive()))),
  scopes: Schema.optional(Scope.Entries)
}).annotations({ identifier: "NewApiKey" })
export type NewApiKey = typeof NewApiKey.Type

/** Body of `POST /api/auth/api-keys/update`: a new scope for an operator key (`scopes`, or `bot_ids` as shorthand). */
export const ApiKeyUpdate = Schema.Struct({
  id: Schema.Int.pipe(Schema.positive()),
  bot_ids: Schema.optional(Schema.Array(Schema.Int.pipe(Schema.positive()))),
  scopes: Schema.optional(Scope.Entries)
}).annotations({ identifier: "ApiKeyUpdate" })
export type ApiKeyUpdate = typeof ApiKeyUpdate.Type

/** What storage needs to create a key: the record and the SHA-256 of its secret. */
export type ApiKeyRecordInput = Omit<ApiKey, "id" | "last_used_at" | "enabled" | "bot_ids"> & { readonly hash: string }

/** How keys look: `brk_` and 43 base64url characters (256 random bits). */
export const keyPattern = /^brk_[A-Za-z0-9_-]{43}$/

/** No key has this id. */
export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", { id: Schema.Int }) {
  override get message() {
    return `API key ${this.id} not found`
  }
}

/** The change would leave no enabled admin key. */
export class LastAdminKey extends Schema.TaggedError<LastAdminKey>()("LastAdminKey", { id: Schema.Int }) {
  override get message() {
    return `API key ${this.id} is the last enabled admin key; create another admin key first`
  }
}
