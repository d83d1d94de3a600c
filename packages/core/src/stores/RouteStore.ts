import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { Route, RouteRecordInput } from "../domain/Route.js"

/** The routes between bots. Ids of the bots a route names are checked by the services first. */
export interface RouteStoreService {
  readonly insertRoute: (route: RouteRecordInput) => Effect.Effect<Route, StorageError>
  /** Replaces every field but `id` and `created_at`; `None` when no route has the id. */
  readonly replaceRoute: (
    id: number,
    route: Omit<RouteRecordInput, "created_at">
  ) => Effect.Effect<Option.Option<Route>, StorageError>
  readonly findRoute: (id: number) => Effect.Effect<Option.Option<Route>, StorageError>
  /** Routes ordered by id; with `bot_id`, those whose source or target is that bot. */
  readonly listRoutes: (filter: { readonly bot_id?: number }) => Effect.Effect<ReadonlyArray<Route>, StorageError>
  readonly deleteRoute: (id: number) => Effect.Effect<boolean, StorageError>
}

/** The routes between bots; the host's driver provides it. */
export class RouteStore extends Context.Tag("@botrelay/core/RouteStore")<RouteStore, RouteStoreService>() {}
