import type { Bot } from "@botrelay/core"
import { Redacted } from "effect"
import type { Insertable, Kysely, Selectable, Updateable } from "kysely"
import { bit } from "./Columns.js"
import type { BotsTable, Database } from "./Tables.js"

/** A row of `botrelay_bots`. */
export type BotRow = Selectable<BotsTable>

/** How a driver protects the bots' secrets at rest: `token`, `secret_token` and `signing_secret` are stored encrypted. */
export interface BotSecrets {
  readonly encrypt: (purpose: "token" | "secret_token" | "signing_secret", plaintext: string) => string
  readonly decrypt: (purpose: "token" | "secret_token" | "signing_secret", stored: string) => string
  /** The token's keyed hash, unique among the bots: how a bot is found by its token. */
  readonly tokenHash: (token: string) => string
}

/** The bot a row holds. */
export const toBot = (secrets: BotSecrets) => (r: BotRow): Bot.StoredBot => ({
  id: r.id,
  token: Redacted.make(secrets.decrypt("token", r.token)),
  name: r.name,
  source: r.source,
  manage_enabled: r.manage_enabled === 1,
  proxy_enabled: r.proxy_enabled === 1,
  backend_url: r.backend_url,
  backend_url_origin: r.backend_url_origin,
  secret_token: Redacted.make(secrets.decrypt("secret_token", r.secret_token)),
  signing_secret: Redacted.make(secrets.decrypt("signing_secret", r.signing_secret)),
  long_poll_enabled: r.long_poll_enabled === 1,
  description: r.description,
  webhook_mode: r.webhook_mode === 1,
  disabled: r.disabled === 1,
  username: r.username,
  last_error: r.last_error,
  last_update_at: r.last_update_at,
  created_at: r.created_at,
  updated_at: r.updated_at
})

/** The row of a new bot, with its token's hash. */
export const newBotRow = (secrets: BotSecrets, input: Bot.BotRecordInput): Insertable<BotsTable> => {
  const token = Redacted.value(input.token)
  return {
    token: secrets.encrypt("token", token),
    token_hash: secrets.tokenHash(token),
    name: input.name,
    source: input.source,
    manage_enabled: bit(input.manage_enabled),
    proxy_enabled: bit(input.proxy_enabled),
    backend_url: input.backend_url,
    backend_url_origin: input.backend_url_origin ?? "api",
    secret_token: secrets.encrypt("secret_token", Redacted.value(input.secret_token)),
    signing_secret: input.signing_secret === undefined
      ? ""
      : secrets.encrypt("signing_secret", Redacted.value(input.signing_secret)),
    long_poll_enabled: bit(input.long_poll_enabled),
    description: input.description,
    webhook_mode: 0,
    disabled: 0,
    username: "",
    last_error: "",
    last_update_at: "",
    created_at: input.created_at,
    updated_at: input.created_at
  }
}

const botTextFields = [
  "name",
  "source",
  "backend_url",
  "backend_url_origin",
  "description",
  "username",
  "last_error",
  "last_update_at",
  "updated_at"
] as const satisfies ReadonlyArray<keyof BotsTable>

const botFlagFields = [
  "manage_enabled",
  "proxy_enabled",
  "long_poll_enabled",
  "webhook_mode",
  "disabled"
] as const satisfies ReadonlyArray<keyof BotsTable>

/** The columns a patch changes; a new token changes `token_hash` too. */
export const botChanges = (
  secrets: BotSecrets,
  patch: Bot.BotPatch & { readonly updated_at?: string }
): Updateable<BotsTable> => {
  const set: { -readonly [K in keyof Updateable<BotsTable>]: Updateable<BotsTable>[K] } = {}
  for (const key of botTextFields) {
    const value = patch[key]
    if (value !== undefined) Object.assign(set, { [key]: value })
  }
  for (const key of botFlagFields) {
    const value = patch[key]
    if (value !== undefined) set[key] = bit(value)
  }
  if (patch.secret_token !== undefined) {
    set.secret_token = secrets.encrypt("secret_token", Redacted.value(patch.secret_token))
  }
  if (patch.signing_secret !== undefined) {
    set.signing_secret = secrets.encrypt("signing_secret", Redacted.value(patch.signing_secret))
  }
  if (patch.token !== undefined) {
    set.token = secrets.encrypt("token", Redacted.value(patch.token))
    set.token_hash = secrets.tokenHash(Redacted.value(patch.token))
  }
  return set
}

export const findBot = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_bots").selectAll().where("id", "=", id)

export const findBotByTokenHash = (db: Kysely<Database>, tokenHash: string) =>
  db.selectFrom("botrelay_bots").selectAll().where("token_hash", "=", tokenHash)

export const botIdByTokenHash = (db: Kysely<Database>, tokenHash: string) =>
  db.selectFrom("botrelay_bots").select("id").where("token_hash", "=", tokenHash)

export const tokenHashOf = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_bots").select("token_hash").where("id", "=", id)

export const insertBot = (db: Kysely<Database>, row: Insertable<BotsTable>) =>
  db.insertInto("botrelay_bots").values(row).returningAll()

export const updateBot = (db: Kysely<Database>, id: number, set: Updateable<BotsTable>) =>
  db.updateTable("botrelay_bots").set(set).where("id", "=", id).returningAll()

/** All bots, by id. */
export const listBots = (db: Kysely<Database>) => db.selectFrom("botrelay_bots").selectAll().orderBy("id")

/** The bot's ingress offset, forgotten when its token changes (another bot's updates start at 0). */
export const forgetOffset = (db: Kysely<Database>, botId: number) =>
  db.deleteFrom("botrelay_ingress").where("bot_id", "=", botId)

/** The deletes that remove a bot with everything of it, in order (the bot's own row last). */
export const deleteBot = (db: Kysely<Database>, id: number) => [
  db.deleteFrom("botrelay_deliveries").where("bot_id", "=", id),
  db.deleteFrom("botrelay_bridge_deliveries").where("bot_id", "=", id),
  db.deleteFrom("botrelay_route_sends").where("bot_id", "=", id),
  db.deleteFrom("botrelay_route_mappings")
    .where((eb) => eb.or([eb("source_bot_id", "=", id), eb("target_bot_id", "=", id)])),
  db.deleteFrom("botrelay_inbox").where("bot_id", "=", id),
  forgetOffset(db, id),
  db.deleteFrom("botrelay_webhooks").where("bot_id", "=", id),
  db.deleteFrom("botrelay_long_poll_buffer").where("bot_id", "=", id),
  db.deleteFrom("botrelay_long_poll_state").where("bot_id", "=", id),
  db.deleteFrom("botrelay_chat_days").where("bot_id", "=", id),
  db.deleteFrom("botrelay_message_hours").where("bot_id", "=", id),
  db.deleteFrom("botrelay_chat_members").where("bot_id", "=", id),
  db.deleteFrom("botrelay_people").where("bot_id", "=", id),
  db.deleteFrom("botrelay_chats").where("bot_id", "=", id),
  db.deleteFrom("botrelay_messages").where("bot_id", "=", id),
  db.deleteFrom("botrelay_tags").where("bot_id", "=", id),
  db.deleteFrom("botrelay_notes").where("bot_id", "=", id),
  db.deleteFrom("botrelay_events").where("bot_id", "=", id),
  db.deleteFrom("botrelay_routes").where("source_bot_id", "=", id),
  db.deleteFrom("botrelay_routes").where("target_bot_id", "=", id),
  db.deleteFrom("botrelay_api_key_bots").where("bot_id", "=", id),
  db.deleteFrom("botrelay_account_bots").where("bot_id", "=", id),
  db.deleteFrom("botrelay_bots").where("id", "=", id)
] as const
