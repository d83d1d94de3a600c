import { Context, Effect, Layer } from "effect"
import type { StorageError } from "../domain/Errors.js"
import { StoreHealth } from "../stores/StoreHealth.js"

/** Whether the instance can serve: its storage answers queries. */
export interface HealthService {
  /** Succeeds when storage can serve queries. */
  readonly check: Effect.Effect<void, StorageError>
}

/** Whether the instance can serve. */
export class Health extends Context.Tag("@botrelay/core/Health")<Health, HealthService>() {}

/** Builds the service on the `StoreHealth` the host's driver provides. */
export const make: Effect.Effect<HealthService, never, StoreHealth> = Effect.map(
  StoreHealth,
  (storage) => Health.of({ check: storage.ping })
)

/** The service on the `StoreHealth` the host's driver provides. */
export const layer: Layer.Layer<Health, never, StoreHealth> = Layer.effect(Health, make)
