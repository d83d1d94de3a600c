import { Schema } from "effect"
import { Role } from "./ApiKey.js"
import { withoutControlCharacters } from "./Bot.js"
import * as Scope from "./Scope.js"

/** A person who signs in to the console; the password hash is never part of it. */
export const Account = Schema.Struct({
  id: Schema.Int,
  username: Schema.String,
  display_name: Schema.String,
  role: Role,
  /** The bots `scopes` name. */
  bot_ids: Schema.Array(Schema.Int),
  /** What the account may do, per bot and chat; empty for admins. */
  scopes: Schema.Array(Scope.Entry),
  enabled: Schema.Boolean,
  created_at: Schema.String,
  /** When the account last logged in; "" when never. */
  last_login_at: Schema.String
}).annotations({ identifier: "Account" })
export type Account = typeof Account.Type

/** 1 to 64 of `A-Z a-z 0-9 _ . -`, trimmed; kept as given, unique regardless of case. */
export const Username = Schema.Trim.pipe(
  Schema.pattern(/^[A-Za-z0-9_.-]{1,64}$/, { message: () => "username must be 1 to 64 letters, digits, _ . or -" })
).annotations({ identifier: "Username" })

/** 0 to 128 characters without control characters, trimmed. */
export const DisplayName = Schema.String.pipe(
  withoutControlCharacters("display_name"),
  Schema.compose(Schema.Trim),
  Schema.maxLength(128, { message: () => "display_name must be at most 128 characters" })
)

/** 10 to 1024 characters. */
export const Password = Schema.String.pipe(
  Schema.minLength(10, { message: () => "password must be at least 10 characters" }),
  Schema.maxLength(1024, { message: () => "password must be at most 1024 characters" })
).annotations({ identifier: "Password" })

const BotIds = Schema.Array(Schema.Int.pipe(Schema.positive()))

/** Body of `POST /api/accounts`. Accounts are operators unless `role` says admin. */
export const NewAccount = Schema.Struct({
  username: Username,
  display_name: Schema.optionalWith(DisplayName, { default: () => "" }),
  role: Schema.optionalWith(Role, { default: () => "operator" as const }),
  /** Shorthand for `scopes` over every chat of these bots with the default abilities. */
  bot_ids: Schema.optional(BotIds),
  scopes: Schema.optional(Scope.Entries),
  password: Password
}).annotations({ identifier: "NewAccount" })
export type NewAccount = typeof NewAccount.Type

/** Body of `POST /api/accounts/update`: what is given changes, the rest stays. */
export const AccountUpdate = Schema.Struct({
  id: Schema.Int.pipe(Schema.positive()),
  display_name: Schema.optional(DisplayName),
  role: Schema.optional(Role),
  bot_ids: Schema.optional(BotIds),
  scopes: Schema.optional(Scope.Entries),
  enabled: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "AccountUpdate" })
export type AccountUpdate = typeof AccountUpdate.Type

/** Body of `POST /api/accounts/password`: no `id` (or one's own) needs `old_password`. */
export const PasswordChange = Schema.Struct({
  id: Schema.optional(Schema.Int.pipe(Schema.positive())),
  old_password: Schema.optional(
    Schema.String.pipe(Schema.maxLength(1024, { message: () => "old_password must be at most 1024 characters" }))
  ),
  new_password: Password
}).annotations({ identifier: "PasswordChange" })
export type PasswordChange = typeof PasswordChange.Type

/** What storage needs to create an account. */
export interface AccountRecordInput {
  readonly username: string
  readonly display_name: string
  readonly role: Account["role"]
  readonly scopes: ReadonlyArray<Scope.Entry>
  readonly password_hash: string
  readonly created_at: string
}

/** The fields of an account that change in place. */
export type AccountChanges = Partial<Pick<Account, "display_name" | "role" | "scopes" | "enabled">>

/** An account with the hash its password is checked against. */
export interface AccountLogin {
  readonly account: Account
  readonly password_hash: string
}

/** A stored session: `id_hash` is the SHA-256 (hex) of the session id, which is never stored. */
export interface SessionRecord {
  readonly id_hash: string
  readonly account_id: number
  readonly created_at: string
  readonly last_seen_at: string
}

/** No account has this id. */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", { id: Schema.Int }) {
  override get message() {
    return `account ${this.id} not found`
  }
}

/** Another account has this username (compared regardless of case). */
export class UsernameTaken extends Schema.TaggedError<UsernameTaken>()("UsernameTaken", {
  username: Schema.String
}) {
  override get message() {
    return `username ${this.username} is taken`
  }
}

/** The change would leave no enabled admin account; admin API keys do not count. */
export class LastAdminAccount extends Schema.TaggedError<LastAdminAccount>()("LastAdminAccount", { id: Schema.Int }) {
  override get message() {
    return `account ${this.id} is the last enabled admin account; create or enable another admin account first`
  }
}

/** The old password given to change one's own password is wrong. */
export class WrongPassword extends Schema.TaggedError<WrongPassword>()("WrongPassword", {}) {
  override get message() {
    return "the old password is wrong"
  }
}

/** The caller may not do this. */
export class NotAllowed extends Schema.TaggedError<NotAllowed>()("NotAllowed", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** A login failed: unknown username, wrong password or disabled account, never told apart. */
export class InvalidCredentials extends Schema.TaggedError<InvalidCredentials>()("InvalidCredentials", {}) {
  override get message() {
    return "invalid username or password"
  }
}

/** Too many failed logins for this username or from this address; try again after `retry_after_seconds`. */
export class TooManyAttempts extends Schema.TaggedError<TooManyAttempts>()("TooManyAttempts", {
  retry_after_seconds: Schema.Int
}) {
  override get message() {
    return `too many failed logins; try again in ${this.retry_after_seconds} seconds`
  }
}

/** How session ids look: 43 base64url characters (256 random bits). */
export const sessionPattern = /^[A-Za-z0-9_-]{43}$/
