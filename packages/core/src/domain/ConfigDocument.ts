import { Schema } from "effect"
import { DisplayName, Username } from "./Account.js"
import { Role } from "./ApiKey.js"
import { BackendUrl, BotName, Description } from "./Bot.js"
import { NewTag } from "./ChatTag.js"
import { RouteUpdate } from "./Route.js"
import * as Scope from "./Scope.js"

const Id = Schema.Int.pipe(Schema.positive({ message: () => "id must be a positive integer" }))
const BotIds = Schema.Array(Schema.Int.pipe(Schema.positive({ message: () => "bot_ids must be positive integers" })))
/** What an export shows and an import ignores. */
const readOnly = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** A bot's configuration: no token, no secret token; an import changes these fields of an existing bot. */
export const ConfigBot = Schema.Struct({
  id: Id,
  name: BotName,
  description: Description,
  manage_enabled: Schema.Boolean,
  proxy_enabled: Schema.Boolean,
  long_poll_enabled: Schema.Boolean,
  backend_url: BackendUrl,
  webhook_mode: Schema.Boolean,
  disabled: Schema.Boolean,
  username: readOnly(Schema.String)
}).annotations({ identifier: "ConfigBot" })
export type ConfigBot = typeof ConfigBot.Type

/** The bot fields an import changes. */
export const botFields = [
  "name",
  "description",
  "manage_enabled",
  "proxy_enabled",
  "long_poll_enabled",
  "backend_url",
  "webhook_mode",
  "disabled"
] as const

/** A route: an import updates the route with this id, or creates one (with a new id) when the id is unknown. */
export const ConfigRoute = RouteUpdate.annotations({ identifier: "ConfigRoute" })
export type ConfigRoute = typeof ConfigRoute.Type

/** The route fields an import sets. */
export const routeFields = [
  "source_bot_id",
  "target_bot_id",
  "condition_type",
  "condition_value",
  "action",
  "target_chat_id",
  "enabled",
  "description"
] as const

/**
 * A tag on a user in a chat: an import updates the tag with this id (or, for an unknown id, the tag of the
 * same bot, chat, user and name), or creates one.
 */
export const ConfigTag = Schema.Struct({ id: Schema.optionalWith(Schema.Int, { default: () => 0 }), ...NewTag.fields })
  .annotations({ identifier: "ConfigTag" })
export type ConfigTag = typeof ConfigTag.Type

/** An API key's metadata, never its secret or hash; an import only turns existing keys on or off. */
export const ConfigKey = Schema.Struct({
  id: Id,
  name: Schema.String,
  role: Role,
  bot_ids: BotIds,
  /** Chat-level scopes; documents without them keep the key's. */
  scopes: Schema.optionalWith(Scope.Entries, { exact: true }),
  enabled: Schema.Boolean,
  prefix: readOnly(Schema.String),
  created_at: readOnly(Schema.String),
  last_used_at: readOnly(Schema.String)
}).annotations({ identifier: "ConfigKey" })
export type ConfigKey = typeof ConfigKey.Type

/** A console account without its password; an import changes these fields of an existing account. */
export const ConfigAccount = Schema.Struct({
  id: Id,
  username: Username,
  display_name: DisplayName,
  role: Role,
  bot_ids: BotIds,
  /** Chat-level scopes; without them, `bot_ids` is the shorthand for bot-wide entries. */
  scopes: Schema.optionalWith(Scope.Entries, { exact: true }),
  enabled: Schema.Boolean,
  created_at: readOnly(Schema.String),
  last_login_at: readOnly(Schema.String)
}).annotations({ identifier: "ConfigAccount" })
export type ConfigAccount = typeof ConfigAccount.Type

/** The account fields an import changes. */
export const accountFields = ["display_name", "role", "bot_ids", "enabled"] as const

/** The account fields an import changes when the document gives scopes. */
export const scopedAccountFields = ["display_name", "role", "scopes", "enabled"] as const

/** The settings changed at run time: the LLM router's, without its API key. */
export const ConfigSettings = Schema.Struct({
  llm: Schema.Struct({ base_url: Schema.String, model: Schema.String, timeout_ms: Schema.Int })
}).annotations({ identifier: "ConfigSettings" })
export type ConfigSettings = typeof ConfigSettings.Type

/**
 * `GET /api/config/export`, and the body of `POST /api/config/import`: the configuration without a secret.
 * On import a section left out is left alone (and never pruned).
 */
export const ConfigDocument = Schema.Struct({
  version: Schema.Literal(1).annotations({ message: () => "version must be 1" }),
  revision: Schema.Int.pipe(Schema.nonNegative({ message: () => "revision must be a non-negative integer" })),
  exported_at: readOnly(Schema.String),
  bots: Schema.optionalWith(Schema.Array(ConfigBot), { exact: true }),
  routes: Schema.optionalWith(Schema.Array(ConfigRoute), { exact: true }),
  tags: Schema.optionalWith(Schema.Array(ConfigTag), { exact: true }),
  keys: Schema.optionalWith(Schema.Array(ConfigKey), { exact: true }),
  accounts: Schema.optionalWith(Schema.Array(ConfigAccount), { exact: true }),
  settings: Schema.optionalWith(ConfigSettings, { exact: true })
}).annotations({ identifier: "ConfigDocument" })
export type ConfigDocument = typeof ConfigDocument.Type

/** What an import changes, of which kind of entry. */
export const DiffKind = Schema.Literal("bot", "route", "tag", "key", "account", "settings")
export type DiffKind = typeof DiffKind.Type

/** One change of an import: each changed field as `[old, new]` (null for a side that does not exist). */
export const DiffEntry = Schema.Struct({
  op: Schema.Literal("add", "update", "delete"),
  kind: DiffKind,
  id: Schema.Union(Schema.Int, Schema.String),
  changes: Schema.Record({ key: Schema.String, value: Schema.Tuple(Schema.Unknown, Schema.Unknown) })
}).annotations({ identifier: "ConfigDiffEntry" })
export type DiffEntry = typeof DiffEntry.Type

/** The answer of `POST /api/config/import`: the revision after it, and what changed (or would, on a dry run). */
export const ImportResult = Schema.Struct({ revision: Schema.Int, diff: Schema.Array(DiffEntry) })
  .annotations({ identifier: "ConfigImportResult" })
export type ImportResult = typeof ImportResult.Type

/** The configuration changed since the document was exported. */
export class RevisionMoved extends Schema.TaggedError<RevisionMoved>()("RevisionMoved", {
  document: Schema.Int,
  current: Schema.Int
}) {
  override get message() {
    return `the configuration changed since this document was exported (it has revision ${this.document}, the ` +
      `configuration is at ${this.current}); export it again and reapply your changes`
  }
}
