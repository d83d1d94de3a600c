import type { ApiKey, Scope } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { bit } from "./Columns.js"
import { columnsOf } from "./ScopeQueries.js"
import type { ApiKeysTable, Database } from "./Tables.js"

/** A row of `botrelay_api_keys`. */
export type ApiKeyRow = Selectable<ApiKeysTable>

/** The key a row holds, with its scope (its bots ascending). */
export const toApiKey = (r: ApiKeyRow, scopes: ReadonlyArray<Scope.Entry>): ApiKey.ApiKey => ({
  id: r.id,
  name: r.name,
  role: r.role,
  bot_ids: scopes.map((e) => e.bot_id),
  scopes,
  prefix: r.prefix,
  created_at: r.created_at,
  last_used_at: r.last_used_at,
  enabled: r.enabled === 1
})

export const insertApiKey = (db: Kysely<Database>, input: ApiKey.ApiKeyRecordInput) =>
  db.insertInto("botrelay_api_keys").values({
    name: input.name,
    role: input.role,
    prefix: input.prefix,
    hash: input.hash,
    created_at: input.created_at,
    last_used_at: "",
    enabled: 1
  }).returningAll()

export const linkBot = (db: Kysely<Database>, apiKeyId: number, entry: Scope.Entry) =>
  db.insertInto("botrelay_api_key_bots").values({ api_key_id: apiKeyId, bot_id: entry.bot_id, ...columnsOf(entry) })

export const unlinkBots = (db: Kysely<Database>, apiKeyId: number) =>
  db.deleteFrom("botrelay_api_key_bots").where("api_key_id", "=", apiKeyId)

/** The links of a key to its bots, ascending by bot. */
export const linksOf = (db: Kysely<Database>, apiKeyId: number) =>
  db.selectFrom("botrelay_api_key_bots").selectAll().where("api_key_id", "=", apiKeyId).orderBy("bot_id")

export const listApiKeys = (db: Kysely<Database>) => db.selectFrom("botrelay_api_keys").selectAll().orderBy("id")

/** Every key's bots, by key and bot. */
export const listLinks = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_api_key_bots").selectAll().orderBy("api_key_id").orderBy("bot_id")

export const findApiKey = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_api_keys").selectAll().where("id", "=", id)

export const findApiKeyByHash = (db: Kysely<Database>, hash: string) =>
  db.selectFrom("botrelay_api_keys").selectAll().where("hash", "=", hash)

export const setApiKeyEnabled = (db: Kysely<Database>, id: number, enabled: boolean) =>
  db.updateTable("botrelay_api_keys").set({ enabled: bit(enabled) }).where("id", "=", id).returningAll()

export const touchApiKey = (db: Kysely<Database>, id: number, at: string) =>
  db.updateTable("botrelay_api_keys").set({ last_used_at: at }).where("id", "=", id)

/** The deletes that remove a key and its links, in order. */
export const deleteApiKey = (db: Kysely<Database>, id: number) => [
  unlinkBots(db, id),
  db.deleteFrom("botrelay_api_keys").where("id", "=", id)
] as const
