import type { Route } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { bit } from "./Columns.js"
import type { Database, RoutesTable } from "./Tables.js"

/** A row of `botrelay_routes`. */
export type RouteRow = Selectable<RoutesTable>

/** The route a row holds. */
export const toRoute = (r: RouteRow): Route.Route => ({
  id: r.id,
  source_bot_id: r.source_bot_id,
  target_bot_id: r.target_bot_id,
  condition_type: r.condition_type,
  condition_value: r.condition_value,
  action: r.action,
  target_chat_id: r.target_chat_id,
  enabled: r.enabled === 1,
  description: r.description,
  created_at: r.created_at
})

const routeFields = (input: Omit<Route.RouteRecordInput, "created_at">) => ({
  source_bot_id: input.source_bot_id,
  target_bot_id: input.target_bot_id,
  condition_type: input.condition_type,
  condition_value: input.condition_value,
  action: input.action,
  target_chat_id: input.target_chat_id,
  enabled: bit(input.enabled),
  description: input.description
})

export const insertRoute = (db: Kysely<Database>, input: Route.RouteRecordInput) =>
  db.insertInto("botrelay_routes").values({ ...routeFields(input), created_at: input.created_at }).returningAll()

export const replaceRoute = (db: Kysely<Database>, id: number, input: Omit<Route.RouteRecordInput, "created_at">) =>
  db.updateTable("botrelay_routes").set(routeFields(input)).where("id", "=", id).returningAll()

export const findRoute = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_routes").selectAll().where("id", "=", id)

/** Routes by id; with `botId`, those whose source or target is that bot. */
export const listRoutes = (db: Kysely<Database>, botId: number | undefined) => {
  const query = db.selectFrom("botrelay_routes").selectAll().orderBy("id")
  return botId === undefined
    ? query
    : query.where((eb) => eb.or([eb("source_bot_id", "=", botId), eb("target_bot_id", "=", botId)]))
}

export const deleteRoute = (db: Kysely<Database>, id: number) => db.deleteFrom("botrelay_routes").where("id", "=", id)
