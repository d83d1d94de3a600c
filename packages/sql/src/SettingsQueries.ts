import { type Kysely, sql } from "kysely"
import type { Database } from "./Tables.js"

export const readSettings = (db: Kysely<Database>, names: ReadonlyArray<string>) =>
  db.selectFrom("botrelay_settings").select(["name", "value"]).where("name", "in", [...names])

export const deleteSetting = (db: Kysely<Database>, name: string) =>
  db.deleteFrom("botrelay_settings").where("name", "=", name)

export const writeSetting = (db: Kysely<Database>, name: string, value: string) =>
  db.insertInto("botrelay_settings").values({ name, value }).onConflict((oc) => oc.column("name").doUpdateSet({ value }))

/** The row of `botrelay_settings` that holds the configuration revision. */
export const revisionSetting = "config.revision"

export const readRevision = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_settings").select("value").where("name", "=", revisionSetting)

/** Adds one to the configuration revision (1 when there is none yet), in one statement, and returns it. */
export const bumpRevision = (db: Kysely<Database>) =>
  db.insertInto("botrelay_settings").values({ name: revisionSetting, value: "1" })
    .onConflict((oc) =>
      oc.column("name").doUpdateSet({ value: sql<string>`CAST(CAST(botrelay_settings.value AS BIGINT) + 1 AS TEXT)` })
    )
    .returning("value")
