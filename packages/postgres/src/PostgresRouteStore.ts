import type { RouteStore } from "@botrelay/core"
import { RouteQueries } from "@botrelay/sql"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** The `RouteStore` on Postgres. */
export const make = (c: Connection): RouteStore.RouteStoreService => ({
  insertRoute: (input) =>
    c.use("insertRoute", async (db) => RouteQueries.toRoute((await all(db, RouteQueries.insertRoute(db, input)))[0]!)),

  replaceRoute: (id, input) =>
    c.use("replaceRoute", async (db) => first(await all(db, RouteQueries.replaceRoute(db, id, input)), RouteQueries.toRoute)),

  findRoute: (id) => c.use("findRoute", async (db) => first(await all(db, RouteQueries.findRoute(db, id)), RouteQueries.toRoute)),

  listRoutes: (filter) =>
    c.use("listRoutes", async (db) => (await all(db, RouteQueries.listRoutes(db, filter.bot_id))).map(RouteQueries.toRoute)),

  deleteRoute: (id) => c.use("deleteRoute", async (db) => (await run(db, RouteQueries.deleteRoute(db, id))) > 0)
})
