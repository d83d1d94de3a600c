import type { Effect } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"

/** Named settings changed at run time (the LLM router's). */
export interface SettingsStoreService {
  /** The stored values of these settings; names without a value are absent from the result. */
  readonly readSettings: (
    names: ReadonlyArray<string>
  ) => Effect.Effect<Readonly<Record<string, string>>, StorageError>
  /** Stores settings in one transaction; `undefined` forgets a setting. */
  readonly writeSettings: (values: Readonly<Record<string, string | undefined>>) => Effect.Effect<void, StorageError>
  /** The configuration revision (see `ConfigRevision`): 0 until the first change. */
  readonly readConfigRevision: Effect.Effect<number, StorageError>
  /** Adds one to the configuration revision atomically (every instance sharing the database sees it) and returns it. */
  readonly bumpConfigRevision: Effect.Effect<number, StorageError>
}

/**
 * Settings whose values are secrets: drivers that encrypt at rest encrypt these (the LLM router's key).
 * The bot tokens, bots' `secret_token` and webhook secrets are secrets too.
 */
export const secretSettings: ReadonlySet<string> = new Set(["llm.api_key"])

/** The settings; the host's driver provides it. */
export class SettingsStore extends Context.Tag("@botrelay/core/SettingsStore")<SettingsStore, SettingsStoreService>() {}
