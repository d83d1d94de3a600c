import { SettingsStore } from "@botrelay/core"
import { SettingsQueries } from "@botrelay/sql"
import { all, type Connection, run } from "./PostgresConnection.js"

/** The `SettingsStore` on Postgres: the values of `SettingsStore.secretSettings` are encrypted. */
export const make = (c: Connection): SettingsStore.SettingsStoreService => ({
  readSettings: (names) =>
    c.use("readSettings", async (db) =>
      names.length === 0 ? {} : Object.fromEntries(
        (await all(db, SettingsQueries.readSettings(db, names))).map((r) => [
          r.name,
          SettingsStore.secretSettings.has(r.name) ? c.cipher.decrypt("setting", r.value) : r.value
        ])
      )),

  writeSettings: (values) =>
    c.transaction("writeSettings", async (db) => {
      for (const [name, value] of Object.entries(values)) {
        if (value === undefined) await run(db, SettingsQueries.deleteSetting(db, name))
        else {
          const stored = SettingsStore.secretSettings.has(name) ? c.cipher.encrypt("setting", value) : value
          await run(db, SettingsQueries.writeSetting(db, name, stored))
        }
      }
    }),

  readConfigRevision: c.use(
    "readConfigRevision",
    async (db) => Number((await all(db, SettingsQueries.readRevision(db)))[0]?.value ?? 0)
  ),

  bumpConfigRevision: c.use(
    "bumpConfigRevision",
    async (db) => Number((await all(db, SettingsQueries.bumpRevision(db)))[0]!.value)
  )
})
