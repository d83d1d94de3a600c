import { Errors, type SearchStore } from "@botrelay/core"
import { Highlight } from "@botrelay/core"
import { NoteQueries, SearchQueries } from "@botrelay/sql"
import { Effect } from "effect"
import { sql } from "kysely"
import { type Connection, pgDb } from "./PostgresConnection.js"
import * as Search from "./Search.js"

const isSyntaxError = (cause: unknown) =>
  typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === "42601"

const refused = (operation: string) => (cause: unknown) =>
  isSyntaxError(cause)
    ? Errors.InvalidInput.field("q", "q could not be searched: leave out special characters and try again")
    : new Errors.StorageError({ operation, cause })

/** The `SearchStore` on Postgres: messages' words (`Search.vector`) in a GIN index, newest stored first. */
export const make = (c: Connection): SearchStore.SearchStoreService => ({
  indexPending: Effect.succeed(0),

  searchNotes: (search) => {
    if (search.bot_ids !== undefined && search.bot_ids.length === 0 && (search.chats ?? []).length === 0) {
        return Effect.succeed([])
      }
    const query = Search.query(search.terms)
    if (query === undefined) return Effect.succeed([])
    return Effect.tryPromise({
      try: async () => {
        const rows = await c.db.selectFrom("botrelay_notes as n")
          .select(NoteQueries.noteColumns.map((column) => `n.${column}` as const))
          .where(sql<boolean>`search_vector @@ ${query}::tsquery`)
          .$if(search.before !== undefined, (qb) => qb.where("n.id", "<", search.before!))
          .where(NoteQueries.noteSearchFilters(search))
          .orderBy("n.id", "desc")
          .limit(search.limit)
          .execute()
        return rows.map((row): SearchStore.FoundNoteAt => {
          const note = NoteQueries.toNote(row)
          return {
            position: note.id,
            note: { ...note, highlight: Highlight.toHtml(note.text, Search.highlight(note.text, search.terms)) }
          }
        })
      },
      catch: refused("searchNotes")
    })
  },

  searchMessages: (search) => {
    if (search.bot_ids !== undefined && search.bot_ids.length === 0 && (search.chats ?? []).length === 0) {
      return Effect.succeed([])
    }
    const query = Search.query(search.terms)
    if (query === undefined) return Effect.succeed([])
    return Effect.tryPromise({
      try: async () => {
        const rows = await pgDb(c.db).selectFrom("botrelay_messages as m")
          .select(["m.position", ...SearchQueries.foundColumns])
          .where(sql<boolean>`m.search_vector @@ ${query}::tsquery`)
          .$if(search.before !== undefined, (qb) => qb.where("m.position", "<", search.before!))
          .where(SearchQueries.searchFilters(search))
          .orderBy("m.position", "desc")
          .limit(search.limit)
          .execute()
        return rows.map((r): SearchStore.Found => {
          const message = SearchQueries.toFound(SearchQueries.foundColumns.map((column) => r[column.slice(2) as keyof typeof r]))
          return {
            position: r.position,
            message: { ...message, highlight: Highlight.toHtml(message.text, Search.highlight(message.text, search.terms)) }
          }
        })
      },
      catch: refused("searchMessages")
    })
  }
})
