import type { Effect, Option } from "effect"
import { Context } from "effect"
import type {
  Account,
  AccountChanges,
  AccountLogin,
  AccountRecordInput,
  UsernameTaken
} from "../domain/Account.js"
import type { StorageError } from "../domain/Errors.js"

/** The accounts. Ids of the bots an account names are checked by the services first. */
export interface AccountStoreService {
  /** Fails with `UsernameTaken` when another account has the username, whatever its case. */
  readonly insertAccount: (input: AccountRecordInput) => Effect.Effect<Account, UsernameTaken | StorageError>
  /** All accounts, ordered by id. */
  readonly listAccounts: Effect.Effect<ReadonlyArray<Account>, StorageError>
  readonly findAccount: (id: number) => Effect.Effect<Option.Option<Account>, StorageError>
  /** The account with this username, whatever its case, and its password hash. */
  readonly findLogin: (username: string) => Effect.Effect<Option.Option<AccountLogin>, StorageError>
  readonly updateAccount: (id: number, changes: AccountChanges) => Effect.Effect<Option.Option<Account>, StorageError>
  /** False when there is no such account. */
  readonly setPasswordHash: (id: number, hash: string) => Effect.Effect<boolean, StorageError>
  readonly recordLogin: (id: number, at: string) => Effect.Effect<void, StorageError>
  /** Deletes the account with its sessions; false when there was none. */
  readonly deleteAccount: (id: number) => Effect.Effect<boolean, StorageError>
  readonly countEnabledAdmins: Effect.Effect<number, StorageError>
}

/** The accounts; the host's driver provides it. */
export class AccountStore extends Context.Tag("@botrelay/core/AccountStore")<AccountStore, AccountStoreService>() {}
