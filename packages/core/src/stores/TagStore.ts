import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { Tag, TagRecordInput } from "../domain/ChatTag.js"

/** Labels on users in chats. */
export interface TagStoreService {
  /** Assigns a tag; assigning the same (bot, chat, user, tag) again updates username and colour and keeps the id. */
  readonly upsertTag: (tag: TagRecordInput) => Effect.Effect<Tag, StorageError>
  /** Tags ordered by id, optionally of one chat, one bot and one user (every tag when the filter is empty). */
  readonly listTags: (filter: {
    readonly chat_id?: number | undefined
    readonly bot_id?: number | undefined
    readonly user_id?: number | undefined
  }) => Effect.Effect<ReadonlyArray<Tag>, StorageError>
  readonly findTag: (id: number) => Effect.Effect<Option.Option<Tag>, StorageError>
  readonly deleteTag: (id: number) => Effect.Effect<boolean, StorageError>
}

/** The tags; the host's driver provides it. */
export class TagStore extends Context.Tag("@botrelay/core/TagStore")<TagStore, TagStoreService>() {}
