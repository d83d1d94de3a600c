import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { BridgeDelivery, BridgeOutcome, BridgePatch, BridgeRecordInput, StoredBridge } from "../domain/Bridge.js"
import type { StorageError } from "../domain/Errors.js"

/**
 * Bridges and their outbox. Bridge deliveries are queued by `EventStore.appendEvents`, in the transaction
 * that appends the events, one per event per enabled bridge that takes it.
 */
export interface BridgeStoreService {
  /** All bridges, by id. */
  readonly listBridges: Effect.Effect<ReadonlyArray<StoredBridge>, StorageError>
  readonly findBridge: (id: number) => Effect.Effect<Option.Option<StoredBridge>, StorageError>
  readonly insertBridge: (input: BridgeRecordInput) => Effect.Effect<StoredBridge, StorageError>
  /** Changes the given fields; `None` when absent. */
  readonly updateBridge: (id: number, patch: BridgePatch) => Effect.Effect<Option.Option<StoredBridge>, StorageError>
  /** Removes the bridge with its deliveries; the removed one, `None` when absent. */
  readonly deleteBridge: (id: number) => Effect.Effect<Option.Option<StoredBridge>, StorageError>
  /** The bot's oldest pending bridge deliveries (FIFO by id), whether or not they are due, at most `limit`. */
  readonly nextBridgeDeliveries: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<BridgeDelivery>, StorageError>
  /**
   * Records attempts, all or none: delivered, pending again (attempts + 1, next time, error), or dead; a
   * failure is also the bridge's `last_error`. Unknown ids are skipped.
   */
  readonly recordBridgeAttempts: (
    attempts: ReadonlyArray<readonly [delivery: BridgeDelivery, outcome: BridgeOutcome]>
  ) => Effect.Effect<void, StorageError>
  /** Bridge deliveries newest first, optionally of one bridge and one status, at most `limit`. */
  readonly listBridgeDeliveries: (filter: {
    readonly bridge_id?: number
    readonly status?: BridgeDelivery["status"]
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<BridgeDelivery>, StorageError>
  /** Deletes delivered bridge deliveries last updated before `before`, at most `limit`; returns how many. */
  readonly pruneBridgeDeliveries: (before: string, limit: number) => Effect.Effect<number, StorageError>
}

/** Bridges and their outbox; the host's driver provides it. */
export class BridgeStore extends Context.Tag("@botrelay/core/BridgeStore")<BridgeStore, BridgeStoreService>() {}
