import type { Effect } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"

/** Work that must not run on two instances sharing a database at once (first-start duties). */
export interface StoreLockService {
  /**
   * Runs `effect` while this instance holds the lock `name` of the whole database: on a shared database the
   * others wait; a driver for one instance per database just runs it.
   */
  readonly exclusive: <A, E, R>(name: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StorageError, R>
}

/** The storage-wide lock; the host's driver provides it. */
export class StoreLock extends Context.Tag("@botrelay/core/StoreLock")<StoreLock, StoreLockService>() {}
