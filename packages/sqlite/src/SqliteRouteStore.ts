import type { RouteStore } from "@botrelay/core"
import { RouteQueries } from "@botrelay/sql"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `RouteStore` on SQLite. */
export const make = (c: Connection): RouteStore.RouteStoreService => ({
  insertRoute: (input) =>
    attempt("insertRoute", () => RouteQueries.toRoute(c.all(RouteQueries.insertRoute(db, input))[0]!)),

  replaceRoute: (id, input) =>
    attempt("replaceRoute", () => first(c.all(RouteQueries.replaceRoute(db, id, input)), RouteQueries.toRoute)),

  findRoute: (id) => attempt("findRoute", () => first(c.all(RouteQueries.findRoute(db, id)), RouteQueries.toRoute)),

  listRoutes: (filter) =>
    attempt("listRoutes", () => c.all(RouteQueries.listRoutes(db, filter.bot_id)).map(RouteQueries.toRoute)),

  deleteRoute: (id) => attempt("deleteRoute", () => c.run(RouteQueries.deleteRoute(db, id)) > 0)
})
