import type { Effect } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"

/** Whether the stores can be used. */
export interface StoreHealthService {
  /** Succeeds when storage can serve queries. */
  readonly ping: Effect.Effect<void, StorageError>
}

/** The health check of the host's driver. */
export class StoreHealth extends Context.Tag("@botrelay/core/StoreHealth")<StoreHealth, StoreHealthService>() {}
