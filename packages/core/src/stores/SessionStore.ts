import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { SessionRecord } from "../domain/Account.js"
import type { StorageError } from "../domain/Errors.js"

/** Console sessions, keyed by the SHA-256 (hex) of their id; they go with their account. */
export interface SessionStoreService {
  readonly createSession: (session: SessionRecord) => Effect.Effect<void, StorageError>
  readonly findSession: (idHash: string) => Effect.Effect<Option.Option<SessionRecord>, StorageError>
  readonly touchSession: (idHash: string, at: string) => Effect.Effect<void, StorageError>
  readonly deleteSession: (idHash: string) => Effect.Effect<void, StorageError>
  /** Ends the account's sessions but `exceptIdHash`; how many ended. */
  readonly deleteAccountSessions: (accountId: number, exceptIdHash?: string) => Effect.Effect<number, StorageError>
  /** Deletes sessions last seen before `idleBefore` or created before `createdBefore`; how many. */
  readonly pruneSessions: (idleBefore: string, createdBefore: string) => Effect.Effect<number, StorageError>
}

/** Console sessions; the host's driver provides it. */
export class SessionStore extends Context.Tag("@botrelay/core/SessionStore")<SessionStore, SessionStoreService>() {}
