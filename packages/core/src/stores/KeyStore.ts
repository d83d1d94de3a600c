import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { ApiKey, ApiKeyRecordInput } from "../domain/ApiKey.js"
import type { StorageError } from "../domain/Errors.js"
import type * as Scope from "../domain/Scope.js"

/** The API keys. Ids of the bots a key names are checked by the services first. */
export interface KeyStoreService {
  readonly insertApiKey: (key: ApiKeyRecordInput) => Effect.Effect<ApiKey, StorageError>
  /** All keys, ordered by id. */
  readonly listApiKeys: Effect.Effect<ReadonlyArray<ApiKey>, StorageError>
  readonly findApiKey: (id: number) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  readonly findApiKeyByHash: (hash: string) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  readonly setApiKeyEnabled: (id: number, enabled: boolean) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  /** Replaces the key's scope; `None` when there is no such key. */
  readonly setApiKeyScopes: (
    id: number,
    scopes: ReadonlyArray<Scope.Entry>
  ) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  readonly touchApiKey: (id: number, at: string) => Effect.Effect<void, StorageError>
  readonly deleteApiKey: (id: number) => Effect.Effect<boolean, StorageError>
}

/** The API keys; the host's driver provides it. */
export class KeyStore extends Context.Tag("@botrelay/core/KeyStore")<KeyStore, KeyStoreService>() {}
