import type { ApiKey, KeyStore } from "@botrelay/core"
import { KeyQueries, type Tables } from "@botrelay/sql"
import { Option } from "effect"
import type { Kysely } from "kysely"
import { all, type Connection, run } from "./PostgresConnection.js"

/** The `KeyStore` on Postgres: a key's bots are rows of `botrelay_api_key_bots`. */
export const make = (c: Connection): KeyStore.KeyStoreService => {
  const withBotIds = async (db: Kysely<Tables.Database>, row: KeyQueries.ApiKeyRow): Promise<ApiKey.ApiKey> =>
    KeyQueries.toApiKey(row, (await all(db, KeyQueries.botIdsOf(db, row.id))).map((r) => r.bot_id))

  const firstWithBotIds = async (db: Kysely<Tables.Database>, rows: ReadonlyArray<KeyQueries.ApiKeyRow>) =>
    rows.length === 0 ? Option.none() : Option.some(await withBotIds(db, rows[0]!))

  return {
    insertApiKey: (input) =>
      c.transaction("insertApiKey", async (db) => {
        const row = (await all(db, KeyQueries.insertApiKey(db, input)))[0]!
        const botIds = Array.from(new Set(input.bot_ids)).sort((a, b) => a - b)
        for (const botId of botIds) await run(db, KeyQueries.linkBot(db, row.id, botId))
        return KeyQueries.toApiKey(row, botIds)
      }),

    listApiKeys: c.use("listApiKeys", async (db) => {
      const keys = await all(db, KeyQueries.listApiKeys(db))
      const botIds = new Map<number, Array<number>>()
      for (const link of await all(db, KeyQueries.listLinks(db))) {
        const ids = botIds.get(link.api_key_id)
        if (ids === undefined) botIds.set(link.api_key_id, [link.bot_id])
        else ids.push(link.bot_id)
      }
      return keys.map((key) => KeyQueries.toApiKey(key, botIds.get(key.id) ?? []))
    }),

    findApiKey: (id) => c.use("findApiKey", async (db) => firstWithBotIds(db, await all(db, KeyQueries.findApiKey(db, id)))),

    findApiKeyByHash: (hash) =>
      c.use("findApiKeyByHash", async (db) => firstWithBotIds(db, await all(db, KeyQueries.findApiKeyByHash(db, hash)))),

    setApiKeyEnabled: (id, enabled) =>
      c.use("setApiKeyEnabled", async (db) => firstWithBotIds(db, await all(db, KeyQueries.setApiKeyEnabled(db, id, enabled)))),

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
