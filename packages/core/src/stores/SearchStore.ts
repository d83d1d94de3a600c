import type { Effect } from "effect"
import { Context } from "effect"
import type { InvalidInput, StorageError } from "../domain/Errors.js"
import type { FoundNote } from "../domain/Note.js"
import type { FoundMessage, Position } from "../domain/SearchPage.js"
import type { Terms } from "../domain/SearchQuery.js"

/** A full-text search over the stored messages (text and captions). */
export interface MessageSearch {
  /** Every term must match the message's text. */
  readonly terms: Terms
  /** Only messages of these bots; every bot's when undefined, none when empty. */
  readonly bot_ids: ReadonlyArray<number> | undefined
  /** Single chats of other bots searched too (a chat-level scope). */
  readonly chats?: ReadonlyArray<{ readonly bot_id: number; readonly chat_id: number }> | undefined
  readonly chat_id?: number | undefined
  /** Only messages from this sender (`Message.user_id`). */
  readonly user_id?: number | undefined
  /** Only messages with `date` at or after this (Unix seconds). */
  readonly from?: number | undefined
  /** Only messages with `date` before this (Unix seconds). */
  readonly to?: number | undefined
  /** Only messages before this position in search order (the previous page's last). */
  readonly before?: Position | undefined
  readonly limit: number
}

/** A message that matched, and where it stands in search order. */
export interface Found {
  readonly position: Position
  readonly message: FoundMessage
}

/** A full-text search over the notes: the terms, bots, chat and time range of a message search. */
export type NoteSearch = Omit<MessageSearch, "user_id">

/** A note that matched, and where it stands in search order (its id). */
export interface FoundNoteAt {
  readonly position: Position
  readonly note: FoundNote
}

/** Full-text search over the message history. */
export interface SearchStoreService {
  /**
   * Messages matching the search, newest stored first (position descending), at most `limit`; deleted messages
   * are never found. Each comes with its highlight (`Highlight.toHtml`). `InvalidInput` (on `q`) when the
   * engine refuses the query.
   */
  readonly searchMessages: (search: MessageSearch) => Effect.Effect<ReadonlyArray<Found>, InvalidInput | StorageError>
  /**
   * Takes a step of the messages written since into the index, for drivers that index in batches (a search
   * always sees every message written before it); how far it got, 0 when nothing was waiting.
   */
  readonly indexPending: Effect.Effect<number, StorageError>
  /**
   * Notes matching the search, newest first (id descending), at most `limit`, each with its highlight; kept
   * in step with every note written, edited or deleted.
   */
  readonly searchNotes: (search: NoteSearch) => Effect.Effect<ReadonlyArray<FoundNoteAt>, InvalidInput | StorageError>
}

/** Full-text search over the message history; the host's driver provides it and keeps its index current. */
export class SearchStore extends Context.Tag("@botrelay/core/SearchStore")<SearchStore, SearchStoreService>() {}
