import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"

/** A request made with an `Idempotency-Key`: the decoded body it came with and, once done, its answer. */
export interface IdempotentRequest {
  readonly request: string
  /** The answer's HTTP status; 0 while the first request runs. */
  readonly status: number
  readonly body: string
  /** Unix seconds of the first request. */
  readonly created_at: number
}

/** The keys of idempotent requests, per caller; a key's row is its lock, across instances too. */
export interface IdempotencyStoreService {
  /**
   * Claims (caller, key) for a request at `now` unless a claim made after `expiredBefore` holds it (an older
   * one is replaced): `None` when claimed, else the request that holds it.
   */
  readonly claim: (
    caller: string,
    key: string,
    request: string,
    now: number,
    expiredBefore: number
  ) => Effect.Effect<Option.Option<IdempotentRequest>, StorageError>
  /** Keeps the answer of a claimed key. */
  readonly complete: (caller: string, key: string, status: number, body: string) => Effect.Effect<void, StorageError>
  /** Lets a claimed key go: its request left nothing to replay. */
  readonly release: (caller: string, key: string) => Effect.Effect<void, StorageError>
  /** Deletes the keys claimed before `before` (Unix seconds); how many. */
  readonly sweep: (before: number) => Effect.Effect<number, StorageError>
}

/** The keys of idempotent requests; the host's driver provides it. */
export class IdempotencyStore extends Context.Tag("@botrelay/core/IdempotencyStore")<
  IdempotencyStore,
  IdempotencyStoreService
>() {}
