import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { CannedReply, CannedReplyRecordInput, DuplicateCode } from "../domain/CannedReply.js"
import type { StorageError } from "../domain/Errors.js"

/** The replies the team shares. */
export interface CannedReplyStoreService {
  /** Every reply, by code. */
  readonly listCannedReplies: Effect.Effect<ReadonlyArray<CannedReply>, StorageError>
  readonly findCannedReply: (id: number) => Effect.Effect<Option.Option<CannedReply>, StorageError>
  /** The reply with the code, ignoring case. */
  readonly findByCode: (code: string) => Effect.Effect<Option.Option<CannedReply>, StorageError>
  /** Keeps a new reply; `DuplicateCode` when another has its code, ignoring case. */
  readonly insertCannedReply: (input: CannedReplyRecordInput) => Effect.Effect<CannedReply, DuplicateCode | StorageError>
  /** Replaces a reply's fields; `None` when unknown, `DuplicateCode` when another has the code. */
  readonly updateCannedReply: (
    id: number,
    input: CannedReplyRecordInput
  ) => Effect.Effect<Option.Option<CannedReply>, DuplicateCode | StorageError>
  readonly deleteCannedReply: (id: number) => Effect.Effect<boolean, StorageError>
}

/** The canned replies; the host's driver provides it. */
export class CannedReplyStore extends Context.Tag("@botrelay/core/CannedReplyStore")<
  CannedReplyStore,
  CannedReplyStoreService
>() {}
