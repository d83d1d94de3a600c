import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { Delivery, DeliveryOutcome, DeliveryStatus, ReplayRange } from "../domain/Delivery.js"
import type { StorageError } from "../domain/Errors.js"
import type { NewRouteMapping, RouteSend, SendOutcome, SendStatus } from "../domain/RouteSend.js"

/** The outbox: deliveries of updates to backends and route sends, queued by `InboxStore.completeUpdates`. */
export interface OutboxStoreService {
  /** The bot's oldest pending deliveries (FIFO by id), whether or not they are due, at most `limit`. */
  readonly nextDeliveries: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /**
   * Records attempts, all or none: delivered, pending again (attempts + 1, next time, error), or dead.
   * Unknown ids are skipped.
   */
  readonly recordAttempts: (
    attempts: ReadonlyArray<readonly [id: number, outcome: DeliveryOutcome]>
  ) => Effect.Effect<void, StorageError>
  /** Deliveries newest first, optionally of one bot and one status, at most `limit`. */
  readonly listDeliveries: (filter: {
    readonly bot_id?: number
    readonly status?: DeliveryStatus
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /** Puts a dead delivery back in line (pending, due now, attempts 0); `None` when absent or not dead. */
  readonly retryDelivery: (id: number, at: string) => Effect.Effect<Option.Option<Delivery>, StorageError>
  /** The delivery with this id, `None` when absent. */
  readonly getDelivery: (id: number) => Effect.Effect<Option.Option<Delivery>, StorageError>
  /** Gives up a dead delivery (discarded at `at`, never sent); `None` when absent or not dead. */
  readonly discardDelivery: (id: number, at: string) => Effect.Effect<Option.Option<Delivery>, StorageError>
  /** Puts every dead delivery of the bot back in line (pending, due at `at`, attempts 0); the retried ones. */
  readonly retryDead: (botId: number, at: string) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /** Gives up every dead delivery of the bot (discarded at `at`); the discarded ones. */
  readonly discardDead: (botId: number, at: string) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /**
   * In one transaction: appends the bot's stored updates of the range that were processed and not dropped by
   * a route to its outbox, in update_id order, as new deliveries to `url` created at `at`. `held` counts the
   * stored updates of the range, replayable or not. `None`, writing nothing, when more than `max` are stored.
   */
  readonly replayUpdates: (replay: {
    readonly bot_id: number
    readonly range: ReplayRange
    readonly url: string
    readonly at: string
    readonly max: number
  }) => Effect.Effect<Option.Option<{ readonly queued: number; readonly held: number }>, StorageError>
  /**
   * Points the bot's pending deliveries at `url`, due at `at` with attempts 0 (the backoff starts over);
   * returns how many.
   */
  readonly retargetDeliveries: (botId: number, url: string, at: string) => Effect.Effect<number, StorageError>

  /** The bot's oldest pending route sends (FIFO by id), whether or not they are due, at most `limit`. */
  readonly nextSends: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<RouteSend>, StorageError>
  /**
   * In one transaction: records an attempt at a send (sent; pending again with attempts + 1, next time
   * and error; or dead) and adds the mappings it produced. An unknown id records nothing.
   */
  readonly recordSend: (
    id: number,
    outcome: SendOutcome,
    mappings: ReadonlyArray<NewRouteMapping>
  ) => Effect.Effect<void, StorageError>
  /** Route sends newest first, optionally of one sending bot and one status, at most `limit`. */
  readonly listSends: (filter: {
    readonly bot_id?: number
    readonly status?: SendStatus
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<RouteSend>, StorageError>
}

/** The outbox; the host's driver provides it. */
export class OutboxStore extends Context.Tag("@botrelay/core/OutboxStore")<OutboxStore, OutboxStoreService>() {}
