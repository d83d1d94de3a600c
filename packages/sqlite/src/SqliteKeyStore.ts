import type { ApiKey, KeyStore, Scope } from "@botrelay/core"
import { Option } from "effect"
import { KeyQueries, ScopeQueries } from "@botrelay/sql"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `KeyStore` on SQLite: a key's bots are rows of `botrelay_api_key_bots`. */
export const make = (c: Connection): KeyStore.KeyStoreService => {
  const withBotIds = (row: KeyQueries.ApiKeyRow): ApiKey.ApiKey =>
    KeyQueries.toApiKey(row, c.all(KeyQueries.linksOf(db, row.id)).map(ScopeQueries.toEntry))

  const insertApiKey = c.transaction((input: ApiKey.ApiKeyRecordInput): ApiKey.ApiKey => {
    const row = c.all(KeyQueries.insertApiKey(db, input))[0]!
    const scopes = [...input.scopes].sort((a, b) => a.bot_id - b.bot_id)
    for (const entry of scopes) c.run(KeyQueries.linkBot(db, row.id, entry))
    return KeyQueries.toApiKey(row, scopes)
  })

  const setApiKeyScopes = c.transaction((id: number, scopes: ReadonlyArray<Scope.Entry>) => {
    const row = c.all(KeyQueries.findApiKey(db, id))[0]
    if (row === undefined) return Option.none<ApiKey.ApiKey>()
    c.run(KeyQueries.unlinkBots(db, id))
    const sorted = [...scopes].sort((a, b) => a.bot_id - b.bot_id)
    for (const entry of sorted) c.run(KeyQueries.linkBot(db, id, entry))
    return Option.some(KeyQueries.toApiKey(row, sorted))
  })

  const deleteApiKey = c.transaction((id: number): boolean => {
    const [links, key] = KeyQueries.deleteApiKey(db, id)
    c.run(links)
    return c.run(key) > 0
  })

  return {
    insertApiKey: (input) => attempt("insertApiKey", () => insertApiKey(input)),

    listApiKeys: attempt("listApiKeys", () => {
      const keys = c.all(KeyQueries.listApiKeys(db))
      const scopes = ScopeQueries.byOwner(c.all(KeyQueries.listLinks(db)), (link) => link.api_key_id)
      return keys.map((key) => KeyQueries.toApiKey(key, scopes.get(key.id) ?? []))
    }),

    findApiKey: (id) => attempt("findApiKey", () => first(c.all(KeyQueries.findApiKey(db, id)), withBotIds)),

    findApiKeyByHash: (hash) =>
      attempt("findApiKeyByHash", () => first(c.all(KeyQueries.findApiKeyByHash(db, hash)), withBotIds)),

    setApiKeyEnabled: (id, enabled) =>
      attempt("setApiKeyEnabled", () => first(c.all(KeyQueries.setApiKeyEnabled(db, id, enabled)), withBotIds)),

    setApiKeyScopes: (id, scopes) => attempt("setApiKeyScopes", () => setApiKeyScopes(id, scopes)),

    touchApiKey: (id, at) =>
      attempt("touchApiKey", () => {
        c.run(KeyQueries.touchApiKey(db, id, at))
      }),

    deleteApiKey: (id) => attempt("deleteApiKey", () => deleteApiKey(id))
  }
}
