import type { Kysely } from "kysely"
import type { Database } from "./Tables.js"

export const readSettings = (db: Kysely<Database>, names: ReadonlyArray<string>) =>
  db.selectFrom("botrelay_settings").select(["name", "value"]).where("name", "in", [...names])

export const deleteSetting = (db: Kysely<Database>, name: string) =>
  db.deleteFrom("botrelay_settings").where("name", "=", name)

export const writeSetting = (db: Kysely<Database>, name: string, value: string) =>
  db.insertInto("botrelay_settings").values({ name, value }).onConflict((oc) => oc.column("name").doUpdateSet({ value }))
