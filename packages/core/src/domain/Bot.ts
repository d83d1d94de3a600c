import { Redacted, Schema, Struct } from "effect"
import { isHttpUrl } from "../internal/Url.js"
import { BackendUrlOrigin } from "./BackendPolicy.js"

/** Where a bot was registered from: the command line / environment, or the API. */
export const BotSource = Schema.Literal("cli", "web")
export type BotSource = typeof BotSource.Type

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const controlCharacters = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

/** Telegram's token shape: the bot's numeric id, a colon, then letters, digits, `_` and `-`. */
export const tokenPattern = /^\d{1,20}:[A-Za-z0-9_-]+$/

/**
 * Why a token cannot be used, as a sentence naming `field`; undefined when it can. A token must have
 * Telegram's shape (`123456:ABC-def`), which also keeps it safe in a URL path segment.
 */
export const tokenProblem = (value: string, field = "token"): string | undefined => {
  if (value.length === 0) return `${field} must not be empty`
  if (value.length > 256) return `${field} must be at most 256 characters`
  if (controlCharacters.test(value)) return `${field} must not contain control characters`
  if (/\s/.test(value)) return `${field} must not contain whitespace`
  if (!tokenPattern.test(value)) {
    return `${field} must look like 123456:ABC-def (the bot id, a colon, then letters, digits, _ and -)`
  }
  return undefined
}

/** A bot token of Telegram's shape (see `tokenProblem`), at most 256 characters. Redacted once decoded. */
export const BotToken = Schema.Redacted(
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "token must not be empty" }),
    Schema.maxLength(256, { message: () => "token must be at most 256 characters" }),
    Schema.filter((s) => !controlCharacters.test(s), { message: () => "token must not contain control characters" }),
    Schema.pattern(/^\S+$/, { message: () => "token must not contain whitespace" }),
    Schema.pattern(tokenPattern, {
      message: () => "token must look like 123456:ABC-def (the bot id, a colon, then letters, digits, _ and -)"
    })
  )
)

/** A name (of a bot or an API key) without control characters; `field` names it in the message. */
export const withoutControlCharacters = (field: string) => <A extends string, I, R>(self: Schema.Schema<A, I, R>) =>
  self.pipe(Schema.filter((s) => !controlCharacters.test(s), {
    message: () => `${field} must not contain control characters`
  }))

/** Where forwarded updates go: empty, or an absolute http(s) URL. */
export const BackendUrl = Schema.String.pipe(
  Schema.maxLength(2048, { message: () => "backend_url must be at most 2048 characters" }),
  Schema.filter((s) => s === "" || isHttpUrl(s), { message: () => "backend_url must be an absolute http or https URL" })
)

/** Telegram's rule for webhook secrets: 1-256 of `A-Z a-z 0-9 _ -`, or empty for none. */
export const SecretToken = Schema.Redacted(
  Schema.String.pipe(
    Schema.pattern(/^[A-Za-z0-9_-]{0,256}$/, {
      message: () => "secret_token must be 1-256 characters of A-Z, a-z, 0-9, _ and -"
    })
  )
)

/** The bytes of a Standard Webhooks secret (`whsec_` + base64), or `undefined` when it is not one. */
export const signingSecretBytes = (value: string): number | undefined => {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value)
  if (match === null || match[1]!.length % 4 !== 0) return undefined
  const body = match[1]!
  const padding = body.endsWith("==") ? 2 : body.endsWith("=") ? 1 : 0
  return (body.length / 4) * 3 - padding
}

const signingSecretMessage = "signing_secret must be whsec_ followed by the base64 of 24 to 64 random bytes, or \"\" to clear it"

/** A Standard Webhooks signing secret: `whsec_` + base64 of 24-64 bytes, or empty for none. Redacted once decoded. */
export const SigningSecret = Schema.Redacted(
  Schema.String.pipe(
    Schema.filter((s) => {
      if (s === "") return true
      const bytes = signingSecretBytes(s)
      return bytes !== undefined && bytes >= 24 && bytes <= 64
    }, { message: () => signingSecretMessage })
  )
)

/** A bot's name: at most 256 characters, no control characters. */
export const BotName = Schema.String.pipe(
  Schema.maxLength(256, { message: () => "name must be at most 256 characters" }),
  withoutControlCharacters("name")
)
/** A bot's description: at most 4096 characters. */
export const Description = Schema.String.pipe(
  Schema.maxLength(4096, { message: () => "description must be at most 4096 characters" })
)

/** A registered bot, with its secrets, as the library keeps it; the API shows `BotView`. */
export const Bot = Schema.Struct({
  id: Schema.Int,
  token: Schema.Redacted(Schema.String),
  name: Schema.String,
  source: BotSource,
  manage_enabled: Schema.Boolean,
  proxy_enabled: Schema.Boolean,
  backend_url: Schema.String,
  /** Who last set `backend_url`: "api" (an admin) or "tgapi" (a token holder's setWebhook); it decides the addresses it may reach. */
  backend_url_origin: BackendUrlOrigin,
  secret_token: Schema.Redacted(Schema.String),
  /** The Standard Webhooks secret backend POSTs are signed with; "" for none. */
  signing_secret: Schema.Redacted(Schema.String),
  long_poll_enabled: Schema.Boolean,
  description: Schema.String,
  running: Schema.Boolean,
  webhook_mode: Schema.Boolean,
  disabled: Schema.Boolean,
  username: Schema.String,
  last_error: Schema.String,
  last_update_at: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "BotRecord" })
export type Bot = typeof Bot.Type

/**
 * A registered bot as the API shows it: the token is never returned once set. `token` holds a mask
 * (`123456:…wxyz`), `secret_token` is `***` when set and "" when not.
 */
export const BotView = Schema.Struct({
  ...Struct.omit(Bot.fields, "signing_secret"),
  token: Schema.String,
  token_set: Schema.Boolean,
  secret_token: Schema.String,
  secret_token_set: Schema.Boolean,
  signing_secret_set: Schema.Boolean
}).annotations({ identifier: "Bot" })
export type BotView = typeof BotView.Type

/**
 * A token as the API shows it: the bot id, an ellipsis and the last 4 characters (`123456:…wxyz`);
 * only the id when the secret part is shorter than 16 characters, so a mask never reveals much of it.
 */
export const maskToken = (token: Redacted.Redacted<string>): string => {
  const value = Redacted.value(token)
  const colon = value.indexOf(":")
  const id = colon < 0 ? "" : value.slice(0, colon)
  const secret = colon < 0 ? value : value.slice(colon + 1)
  return `${id}:…${secret.length >= 16 ? secret.slice(-4) : ""}`
}

/** What the API shows of a bot: its secrets masked. */
export const view = (bot: Bot): BotView => {
  const secretSet = Redacted.value(bot.secret_token) !== ""
  return {
    id: bot.id,
    token: maskToken(bot.token),
    name: bot.name,
    source: bot.source,
    manage_enabled: bot.manage_enabled,
    proxy_enabled: bot.proxy_enabled,
    backend_url: bot.backend_url,
    backend_url_origin: bot.backend_url_origin,
    secret_token: secretSet ? "***" : "",
    long_poll_enabled: bot.long_poll_enabled,
    description: bot.description,
    running: bot.running,
    webhook_mode: bot.webhook_mode,
    disabled: bot.disabled,
    username: bot.username,
    last_error: bot.last_error,
    last_update_at: bot.last_update_at,
    created_at: bot.created_at,
    updated_at: bot.updated_at,
    token_set: Redacted.value(bot.token) !== "",
    secret_token_set: secretSet,
    signing_secret_set: Redacted.value(bot.signing_secret) !== ""
  }
}

/** A bot as storage keeps it: everything but the live `running` flag. */
export type StoredBot = Omit<Bot, "running">

/** The settings of a bot a client may choose. */
export type BotSettings = Pick<
  Bot,
  | "token"
  | "name"
  | "manage_enabled"
  | "proxy_enabled"
  | "backend_url"
  | "secret_token"
  | "long_poll_enabled"
  | "description"
>

/** Body of `POST /api/bots/add`. */
export const NewBot = Schema.Struct({
  token: BotToken,
  name: Schema.optionalWith(BotName, { default: () => "" }),
  manage_enabled: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  proxy_enabled: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  long_poll_enabled: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  backend_url: Schema.optionalWith(BackendUrl, { default: () => "" }),
  secret_token: Schema.optionalWith(SecretToken, { default: () => Redacted.make("") }),
  signing_secret: Schema.optionalWith(SigningSecret, { default: () => Redacted.make("") }),
  description: Schema.optionalWith(Description, { default: () => "" })
}).annotations({ identifier: "NewBot" })
export type NewBot = typeof NewBot.Type

/** Body of `POST /api/bots/update`: the bot's id and the fields to change; omitted fields keep their value. */
export const BotUpdate = Schema.Struct({
  id: Schema.Int.pipe(Schema.positive()),
  token: Schema.optionalWith(BotToken, { exact: true }),
  name: Schema.optionalWith(BotName, { exact: true }),
  manage_enabled: Schema.optionalWith(Schema.Boolean, { exact: true }),
  proxy_enabled: Schema.optionalWith(Schema.Boolean, { exact: true }),
  long_poll_enabled: Schema.optionalWith(Schema.Boolean, { exact: true }),
  backend_url: Schema.optionalWith(BackendUrl, { exact: true }),
  secret_token: Schema.optionalWith(SecretToken, { exact: true }),
  signing_secret: Schema.optionalWith(SigningSecret, { exact: true }),
  description: Schema.optionalWith(Description, { exact: true }),
  webhook_mode: Schema.optionalWith(Schema.Boolean, { exact: true })
}).annotations({ identifier: "BotUpdate" })
export type BotUpdate = typeof BotUpdate.Type

/** Runtime status that the bot's ingress writes back. */
export type BotStatus = Pick<Bot, "username" | "last_error" | "last_update_at">

/** A change to a stored bot. */
export type BotPatch = Partial<
  BotSettings & BotStatus & Pick<Bot, "disabled" | "webhook_mode" | "source" | "backend_url_origin" | "signing_secret">
>

/** What storage needs to create a bot; `backend_url_origin` is "api" and `signing_secret` "" when omitted. */
export type BotRecordInput = BotSettings & Pick<Bot, "source" | "created_at"> & {
  readonly backend_url_origin?: BackendUrlOrigin | undefined
  readonly signing_secret?: Redacted.Redacted<string> | undefined
}

/** No bot has this id. */
export class BotNotFound extends Schema.TaggedError<BotNotFound>()("BotNotFound", { id: Schema.Int }) {
  override get message() {
    return `bot ${this.id} not found`
  }
}

/** Another bot already has this token. */
export class DuplicateToken extends Schema.TaggedError<DuplicateToken>()("DuplicateToken", {
  existing_bot_id: Schema.Int
}) {
  override get message() {
    return `this token is already registered (bot ${this.existing_bot_id})`
  }
}

/** The bot is disabled, so it cannot do what was asked. */
export class BotDisabled extends Schema.TaggedError<BotDisabled>()("BotDisabled", { id: Schema.Int }) {
  override get message() {
    return `bot ${this.id} is disabled; enable it with POST /api/bots/toggle-disabled?id=${this.id}`
  }
}

/** The bot keeps no message history (manage_enabled is off), and the action needs it. */
export class HistoryDisabled extends Schema.TaggedError<HistoryDisabled>()("HistoryDisabled", { id: Schema.Int }) {
  override get message() {
    return `bot ${this.id} keeps no message history, which this needs; turn on manage_enabled with POST /api/bots/update`
  }
}

/** The bot's Telegram user id: the number before the colon of its token; NaN for a malformed token. */
export const userIdOf = (bot: Pick<StoredBot, "token">): number => Number(Redacted.value(bot.token).split(":")[0])
