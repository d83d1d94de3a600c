import type { ApiKey, KeyStore } from "@botrelay/core"
import { KeyQueries, ScopeQueries, type Tables } from "@botrelay/sql"
import { Option } from "effect"
import type { Kysely } from "kysely"
import { all, type Connection, run } from "./PostgresConnection.js"

/** The `KeyStore` on Postgres: a key's bots are rows of `botrelay_api_key_bots`. */
export const make = (c: Connection): KeyStore.KeyStoreService => {
  const withBotIds = async (db: Kysely<Tables.Database>, row: KeyQueries.ApiKeyRow): Promise<ApiKey.ApiKey> =>
    KeyQueries.toApiKey(row, (await all(db, KeyQueries.linksOf(db, row.id))).map(ScopeQueries.toEntry))

  const firstWithBotIds = async (db: Kysely<Tables.Database>, rows: ReadonlyArray<KeyQueries.ApiKeyRow>) =>
    rows.length === 0 ? Option.none() : Option.some(await withBotIds(db, rows[0]!))

  return {
    insertApiKey: (input) =>
      c.transaction("insertApiKey", async (db) => {
        const row = (await all(db, KeyQueries.insertApiKey(db, input)))[0]!
        const scopes = [...input.scopes].sort((a, b) => a.bot_id - b.bot_id)
        for (const entry of scopes) await run(db, KeyQueries.linkBot(db, row.id, entry))
        return KeyQueries.toApiKey(row, scopes)
      }),

    listApiKeys: c.use("listApiKeys", async (db) => {
      const keys = await all(db, KeyQueries.listApiKeys(db))
      const scopes = ScopeQueries.byOwner(await all(db, KeyQueries.listLinks(db)), (link) => link.api_key_id)
      return keys.map((key) => KeyQueries.toApiKey(key, scopes.get(key.id) ?? []))
    }),

    findApiKey: (id) => c.use("findApiKey", async (db) => firstWithBotIds(db, await all(db, KeyQueries.findApiKey(db, id)))),

    findApiKeyByHash: (hash) =>
      c.use("findApiKeyByHash", async (db) => firstWithBotIds(db, await all(db, KeyQueries.findApiKeyByHash(db, hash)))),

    setApiKeyEnabled: (id, enabled) =>
      c.use("setApiKeyEnabled", async (db) => firstWithBotIds(db, await all(db, KeyQueries.setApiKeyEnabled(db, id, enabled)))),

    setApiKeyScopes: (id, scopes) =>
      c.transaction("setApiKeyScopes", async (db) => {
        const [row] = await all(db, KeyQueries.findApiKey(db, id))
        if (row === undefined) return Option.none<ApiKey.ApiKey>()
        await run(db, KeyQueries.unlinkBots(db, id))
        const sorted = [...scopes].sort((a, b) => a.bot_id - b.bot_id)
        for (const entry of sorted) await run(db, KeyQueries.linkBot(db, id, entry))
        return Option.some(KeyQueries.toApiKey(row, sorted))
      }),

    touchApiKey: (id, at) =>
      c.use("touchApiKey", async (db) => {
        await run(db, KeyQueries.touchApiKey(db, id, at))
      }),

    deleteApiKey: (id) =>
      c.transaction("deleteApiKey", async (db) => {
        const [links, key] = KeyQueries.deleteApiKey(db, id)
        await run(db, links)
        return (await run(db, key)) > 0
      })
  }
}
