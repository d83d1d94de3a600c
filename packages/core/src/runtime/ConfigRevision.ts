/**
 * The configuration revision: a number kept in storage (so every instance sharing a database shares it) that
 * each change of configuration bumps, whatever made it: bots, routes, tags, keys, accounts, settings. The
 * services bump it after each change they make; `asOneChange` makes many changes count once (an import).
 */
import { Effect, FiberRef } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { SettingsStoreService } from "../stores/SettingsStore.js"

/** Whether the changes of this fiber leave the bump to an enclosing `asOneChange`. */
const deferred = FiberRef.unsafeMake(false)

/** Bumps the revision after a change, unless an enclosing `asOneChange` bumps it once for all. */
export const bump = (settings: SettingsStoreService): Effect.Effect<void, StorageError> =>
  Effect.flatMap(FiberRef.get(deferred), (later) => later ? Effect.void : Effect.asVoid(settings.bumpConfigRevision))

/** `bump` after `effect` succeeds, for the services' pipelines. */
export const bumped = (settings: SettingsStoreService) => <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, E | StorageError, R> => Effect.tap(effect, () => bump(settings))

/** Runs `effect`, whose changes bump nothing themselves; then bumps the revision once when `changed` says so. */
export const asOneChange = <A, E, R>(
  settings: SettingsStoreService,
  effect: Effect.Effect<A, E, R>,
  changed: (a: A) => boolean
): Effect.Effect<A, E | StorageError, R> =>
  Effect.locally(effect, deferred, true).pipe(
    Effect.tap((a) => changed(a) ? Effect.asVoid(settings.bumpConfigRevision) : Effect.void)
  )
