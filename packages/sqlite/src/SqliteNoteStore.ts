import type { NoteStore } from "@botrelay/core"
import { NoteQueries } from "@botrelay/sql"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `NoteStore` on SQLite; migration 0026's triggers keep the notes' search index in step. */
export const make = (c: Connection): NoteStore.NoteStoreService => ({
  insertNote: (input) => attempt("insertNote", () => NoteQueries.toNote(c.all(NoteQueries.insertNote(db, input))[0]!)),
  updateNote: (id, text, updatedAt) =>
    attempt("updateNote", () => first(c.all(NoteQueries.updateNote(db, id, text, updatedAt)), NoteQueries.toNote)),
  findNote: (id) => attempt("findNote", () => first(c.all(NoteQueries.findNote(db, id)), NoteQueries.toNote)),
  deleteNote: (id) => attempt("deleteNote", () => c.run(NoteQueries.deleteNote(db, id)) > 0),
  listNotes: (botId, chatId, limit) =>
    attempt("listNotes", () => c.all(NoteQueries.listNotes(db, botId, chatId, limit)).map(NoteQueries.toNote))
})
