import { Context, Effect, Layer, Option } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { MessageQuery } from "../domain/Message.js"
import { interleave, type NewNote, type Note, NoteNotFound, NoteNotYours, type NoteUpdate, type TimelineItem } from "../domain/Note.js"
import { nowSeconds } from "../internal/Time.js"
import { Event, Events } from "../runtime/Events.js"
import { MessageStore } from "../stores/MessageStore.js"
import { NoteStore } from "../stores/NoteStore.js"

/** Who writes or removes a note: an account, and whether it is an admin. */
export interface Author {
  readonly id: number
  readonly name: string
  readonly admin: boolean
}

/** The team's private notes in chats, never sent to Telegram; each change is a live `note` event. */
export interface NotesService {
  /** A chat's notes, newest first. */
  readonly list: (botId: number, chatId: number) => Effect.Effect<ReadonlyArray<Note>, StorageError>
  readonly get: (id: number) => Effect.Effect<Note, NoteNotFound | StorageError>
  readonly add: (input: NewNote, author: Author) => Effect.Effect<Note, StorageError>
  /** Sets a note's text; only its author may. */
  readonly update: (input: NoteUpdate, author: Author) => Effect.Effect<Note, NoteNotFound | NoteNotYours | StorageError>
  /** Deletes a note; its author or an admin may. The note as it was. */
  readonly remove: (id: number, author: Author) => Effect.Effect<Note, NoteNotFound | NoteNotYours | StorageError>
  /**
   * A page of a chat's messages and notes (its messages alone without `withNotes`), newest first
   * (`Note.interleave`), `offset` and `limit` counted over both.
   */
  readonly timeline: (query: MessageQuery, withNotes: boolean) => Effect.Effect<ReadonlyArray<TimelineItem>, StorageError>
}

/** The team's private notes in chats. */
export class Notes extends Context.Tag("@botrelay/core/Notes")<Notes, NotesService>() {}

/** Every note of a chat `list` and `timeline` read at most. */
const maxNotes = 1_000_000

/** Builds the service on the stores the host provides. */
export const make: Effect.Effect<NotesService, never, NoteStore | MessageStore | Events> = Effect.gen(function*() {
  const store = yield* NoteStore
  const messages = yield* MessageStore
  const events = yield* Events

  const changed = (note: Note, deleted = false) => events.publish(Event.NoteChanged({ note, deleted }))

  const get = (id: number) =>
    store.findNote(id).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(new NoteNotFound({ id })), onSome: Effect.succeed }))
    )

  return Notes.of({
    list: (botId, chatId) => store.listNotes(botId, chatId, maxNotes),
    get,
    add: (input, author) =>
      Effect.gen(function*() {
        const at = yield* nowSeconds
        const note = yield* store.insertNote({
          bot_id: input.bot_id,
          chat_id: input.chat_id,
          author_id: author.id,
          author_name: author.name,
          text: input.text,
          created_at: at,
          updated_at: at
        })
        yield* changed(note)
        return note
      }).pipe(Effect.withSpan("Notes.add")),
    update: (input, author) =>
      Effect.gen(function*() {
        const note = yield* get(input.id)
        if (note.author_id !== author.id) return yield* new NoteNotYours({ id: note.id, action: "edit" })
        const updated = yield* store.updateNote(note.id, input.text, yield* nowSeconds)
        if (Option.isNone(updated)) return yield* new NoteNotFound({ id: note.id })
        yield* changed(updated.value)
        return updated.value
      }).pipe(Effect.withSpan("Notes.update")),
    remove: (id, author) =>
      Effect.gen(function*() {
        const note = yield* get(id)
        if (note.author_id !== author.id && !author.admin) return yield* new NoteNotYours({ id, action: "delete" })
        if (!(yield* store.deleteNote(id))) return yield* new NoteNotFound({ id })
        yield* changed(note, true)
        return note
      }).pipe(Effect.withSpan("Notes.remove")),
    timeline: (query, withNotes) =>
      Effect.gen(function*() {
        if (!withNotes) return interleave(yield* messages.listMessages(query), [])
        const reach = query.offset + query.limit
        const [page, notes] = yield* Effect.all([
          messages.listMessages({ bot_id: query.bot_id, chat_id: query.chat_id, limit: reach, offset: 0 }),
          store.listNotes(query.bot_id, query.chat_id, reach)
        ])
        return interleave(page, notes).slice(query.offset, reach)
      }).pipe(Effect.withSpan("Notes.timeline"))
  })
})

/** The service on the stores the host provides. */
export const layer: Layer.Layer<Notes, never, NoteStore | MessageStore | Events> = Layer.effect(Notes, make)
