import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { Note, NoteRecordInput } from "../domain/Note.js"

/** The team's private notes in chats. */
export interface NoteStoreService {
  readonly insertNote: (note: NoteRecordInput) => Effect.Effect<Note, StorageError>
  /** Sets a note's text and `updated_at`; the note afterwards, `None` when unknown. */
  readonly updateNote: (id: number, text: string, updatedAt: number) => Effect.Effect<Option.Option<Note>, StorageError>
  readonly findNote: (id: number) => Effect.Effect<Option.Option<Note>, StorageError>
  readonly deleteNote: (id: number) => Effect.Effect<boolean, StorageError>
  /** A chat's notes, newest first (`created_at`, then `id`), at most `limit`. */
  readonly listNotes: (botId: number, chatId: number, limit: number) => Effect.Effect<ReadonlyArray<Note>, StorageError>
}

/** The notes; the host's driver provides it (and indexes them for `SearchStore.searchNotes`). */
export class NoteStore extends Context.Tag("@botrelay/core/NoteStore")<NoteStore, NoteStoreService>() {}
