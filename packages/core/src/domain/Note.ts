import { Schema } from "effect"
import { Message } from "./Message.js"

/** The most code points a note's text holds. */
export const maxTextLength = 10_000

/** A note's text: 1 to 10,000 code points, not only white space. */
export const NoteText = Schema.String.pipe(
  Schema.filter((s) => s.trim() !== "", { message: () => "text must not be empty" }),
  Schema.filter((s) => [...s].length <= maxTextLength, {
    message: () => `text must be at most ${maxTextLength} characters`
  })
)

/**
 * A private note the team keeps in a chat: never sent to Telegram. Times are Unix seconds; `author_id` is
 * the account that wrote it.
 */
export const Note = Schema.Struct({
  id: Schema.Int,
  bot_id: Schema.Int,
  chat_id: Schema.Int,
  author_id: Schema.Int,
  author_name: Schema.String,
  text: Schema.String,
  created_at: Schema.Int,
  updated_at: Schema.Int
}).annotations({ identifier: "Note" })
export type Note = typeof Note.Type

/** Body of `POST /api/notes/add`. */
export const NewNote = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  chat_id: Schema.Int,
  text: NoteText
}).annotations({ identifier: "NewNote" })
export type NewNote = typeof NewNote.Type

/** Body of `POST /api/notes/update`. */
export const NoteUpdate = Schema.Struct({
  id: Schema.Int.pipe(Schema.positive()),
  text: NoteText
}).annotations({ identifier: "NoteUpdate" })
export type NoteUpdate = typeof NoteUpdate.Type

/** What storage needs to keep a note. */
export type NoteRecordInput = Omit<Note, "id">

/** A note that matched a search, with its text as HTML, each match in `<mark>`. */
export interface FoundNote extends Note {
  readonly highlight: string
}

/** An item of a chat's timeline or of a search: a message or a note, told apart by `kind`. */
export const TimelineItem = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("message"), ...Message.fields }),
  Schema.Struct({ kind: Schema.Literal("note"), ...Note.fields })
).annotations({ identifier: "TimelineItem" })
export type TimelineItem = typeof TimelineItem.Type

/** The time an item of a timeline is ordered by: a message's `date`, a note's `created_at`. */
export const timeOf = (item: TimelineItem): number => item.kind === "message" ? item.date : item.created_at

/**
 * Messages and notes, each newest first, as one list newest first: by time, a note before a message of the
 * same second (it was written about what came before it).
 */
export const interleave = (
  messages: ReadonlyArray<Message>,
  notes: ReadonlyArray<Note>
): Array<TimelineItem> => {
  const items: Array<TimelineItem> = []
  let m = 0
  let n = 0
  while (m < messages.length || n < notes.length) {
    const message = messages[m]
    const note = notes[n]
    if (note !== undefined && (message === undefined || note.created_at >= message.date)) {
      items.push({ kind: "note", ...note })
      n++
    } else {
      items.push({ kind: "message", ...message! })
      m++
    }
  }
  return items
}

/** No note has this id. */
export class NoteNotFound extends Schema.TaggedError<NoteNotFound>()("NoteNotFound", { id: Schema.Int }) {
  override get message() {
    return `note ${this.id} not found`
  }
}

/** Only a note's author may change it (and, for deletes, an admin). */
export class NoteNotYours extends Schema.TaggedError<NoteNotYours>()("NoteNotYours", {
  id: Schema.Int,
  action: Schema.Literal("edit", "delete")
}) {
  override get message() {
    return this.action === "edit"
      ? `only the author may edit note ${this.id}`
      : `only the author or an admin may delete note ${this.id}`
  }
}
