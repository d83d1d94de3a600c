import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"

/** What an owner's commit proves: it holds the bot's lease of this epoch. */
export interface Fence {
  readonly bot_id: number
  readonly instance_id: string
  readonly epoch: number
}

/** An instance of a shared database, as its heartbeats tell. */
export interface InstanceRow {
  readonly id: string
  /** The Botrelay version it runs. */
  readonly version: string
  readonly started_at: string
  readonly last_heartbeat_at: string
}

/** A bot's lease: who owns it, with which epoch, until when, and whether its ingress runs there. */
export interface LeaseRow {
  readonly bot_id: number
  readonly instance_id: string
  readonly epoch: number
  /** ISO 8601; a lease at or past it is free to take. */
  readonly expires_at: string
  readonly running: boolean
}

/** The leases of instances sharing one database: who is alive and who owns each bot. */
export interface LeaseStoreService {
  /** Records that the instance is alive at `at`. */
  readonly heartbeat: (instance: Omit<InstanceRow, "last_heartbeat_at">, at: string) => Effect.Effect<void, StorageError>
  /** Forgets the instance and frees its leases at once (a clean shutdown). */
  readonly leave: (instanceId: string) => Effect.Effect<void, StorageError>
  /** Instances whose last heartbeat is after `since`, by id. */
  readonly instances: (since: string) => Effect.Effect<ReadonlyArray<InstanceRow>, StorageError>
  /** Every lease, by bot id. */
  readonly leases: Effect.Effect<ReadonlyArray<LeaseRow>, StorageError>
  /**
   * Takes the bot's lease for the instance until `until` when nobody holds it at `now` (no lease, or one
   * expired); the epoch grows by one each time. `None` when another instance holds it.
   */
  readonly acquire: (
    botId: number,
    instanceId: string,
    now: string,
    until: string
  ) => Effect.Effect<Option.Option<LeaseRow>, StorageError>
  /** Extends to `until` the leases the fences still hold; returns the bot ids extended. */
  readonly renew: (fences: ReadonlyArray<Fence>, until: string) => Effect.Effect<ReadonlyArray<number>, StorageError>
  /** Frees the leases the fences hold (expired now; the epoch stays, so the next owner's is higher). */
  readonly release: (fences: ReadonlyArray<Fence>) => Effect.Effect<void, StorageError>
  /** Records whether the bot's ingress runs, while the fence holds. */
  readonly setRunning: (fence: Fence, running: boolean) => Effect.Effect<void, StorageError>
}

/** The leases; the host's driver provides it where several instances may share the database. */
export class LeaseStore extends Context.Tag("@botrelay/core/LeaseStore")<LeaseStore, LeaseStoreService>() {}
