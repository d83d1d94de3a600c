import type { NoteStore } from "@botrelay/core"
import { NoteQueries } from "@botrelay/sql"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import { all, type Connection, first, run } from "./PostgresConnection.js"
import * as Search from "./Search.js"

/** Writes the words of a note's text (`Search.vector`) beside it. */
const index = (db: Kysely<any>, id: number, text: string) =>
  sql`UPDATE botrelay_notes SET search_vector = ${Search.vector(text)}::tsvector WHERE id = ${id}`.execute(db)

/** The `NoteStore` on Postgres; each note's words are written with its text, for `searchNotes`. */
export const make = (c: Connection): NoteStore.NoteStoreService => ({
  insertNote: (input) =>
    c.transaction("insertNote", async (db) => {
      const note = NoteQueries.toNote((await all(db, NoteQueries.insertNote(db, input)))[0]!)
      await index(db, note.id, note.text)
      return note
    }),
  updateNote: (id, text, updatedAt) =>
    c.transaction("updateNote", async (db) => {
      const updated = first(await all(db, NoteQueries.updateNote(db, id, text, updatedAt)), NoteQueries.toNote)
      if (updated._tag === "Some") await index(db, id, text)
      return updated
    }),
  findNote: (id) => c.use("findNote", async (db) => first(await all(db, NoteQueries.findNote(db, id)), NoteQueries.toNote)),
  deleteNote: (id) => c.use("deleteNote", async (db) => (await run(db, NoteQueries.deleteNote(db, id))) > 0),
  listNotes: (botId, chatId, limit) =>
    c.use("listNotes", async (db) => (await all(db, NoteQueries.listNotes(db, botId, chatId, limit))).map(NoteQueries.toNote))
})
