import { Context, Effect, Layer, Option } from "effect"
import type { StorageError } from "../domain/Errors.js"
import { SettingsStore } from "../stores/SettingsStore.js"
import { TagStore } from "../stores/TagStore.js"
import * as ConfigRevision from "../runtime/ConfigRevision.js"
import type { NewTag, Tag } from "../domain/ChatTag.js"
import { TagNotFound } from "../domain/ChatTag.js"
import { nowIso } from "../internal/Time.js"

/** Labels on users in chats. */
export interface TagsService {
  /** Assigns a tag; assigning it again updates username and colour and returns the same record. */
  readonly add: (input: NewTag) => Effect.Effect<Tag, StorageError>
  /** Tags ordered by id, optionally of one chat, one bot and one user. */
  readonly list: (filter: {
    readonly chat_id?: number | undefined
    readonly bot_id?: number | undefined
    readonly user_id?: number | undefined
  }) => Effect.Effect<ReadonlyArray<Tag>, StorageError>
  readonly get: (id: number) => Effect.Effect<Tag, TagNotFound | StorageError>
  readonly remove: (id: number) => Effect.Effect<Tag, TagNotFound | StorageError>
}

/** Labels on users in chats. */
export class Tags extends Context.Tag("@botrelay/core/Tags")<Tags, TagsService>() {}

/** Builds the service on the stores the host provides. */
export const make: Effect.Effect<TagsService, never, TagStore | SettingsStore> = Effect.gen(function*() {
  const tagStore = yield* TagStore
  const bumped = ConfigRevision.bumped(yield* SettingsStore)

  const get = (id: number) =>
    tagStore.findTag(id).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(new TagNotFound({ id })), onSome: Effect.succeed }))
    )

  return Tags.of({
    add: ({ bot_id, chat_id, color, tag, user_id, username }) =>
      Effect.flatMap(nowIso, (created_at) =>
        tagStore.upsertTag({ bot_id, chat_id, user_id, username, tag, color, created_at })).pipe(
          bumped,
          Effect.withSpan("Tags.add")
        ),
    list: (filter) => tagStore.listTags(filter),
    get,
    remove: (id) => get(id).pipe(Effect.tap(() => tagStore.deleteTag(id)), bumped, Effect.withSpan("Tags.remove"))
  })
})

/** The service on the stores the host provides. */
export const layer: Layer.Layer<Tags, never, TagStore | SettingsStore> = Layer.effect(Tags, make)
