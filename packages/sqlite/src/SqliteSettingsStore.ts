import { SettingsStore } from "@botrelay/core"
import { SettingsQueries } from "@botrelay/sql"
import { attempt, type Connection, db } from "./SqliteConnection.js"

/** The `SettingsStore` on SQLite: the values of `SettingsStore.secretSettings` are encrypted. */
export const make = (c: Connection): SettingsStore.SettingsStoreService => ({
  readSettings: (names) =>
    attempt("readSettings", () =>
      names.length === 0 ? {} : Object.fromEntries(
        c.all(SettingsQueries.readSettings(db, names)).map((r) => [
          r.name,
          SettingsStore.secretSettings.has(r.name) ? c.cipher.decrypt("setting", r.value) : r.value
        ])
      )),

  writeSettings: (values) =>
    attempt("writeSettings", () =>
      c.transaction(() => {
        for (const [name, value] of Object.entries(values)) {
          if (value === undefined) c.run(SettingsQueries.deleteSetting(db, name))
          else {
            const stored = SettingsStore.secretSettings.has(name) ? c.cipher.encrypt("setting", value) : value
            c.run(SettingsQueries.writeSetting(db, name, stored))
          }
        }
      })()),

  readConfigRevision: attempt("readConfigRevision", () => Number(c.all(SettingsQueries.readRevision(db))[0]?.value ?? 0)),

  bumpConfigRevision: attempt("bumpConfigRevision", () => Number(c.all(SettingsQueries.bumpRevision(db))[0]!.value))
})
