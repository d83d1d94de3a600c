import { Errors, Highlight } from "@botrelay/core"
import type { SearchQuery, SearchStore } from "@botrelay/core"
import { NoteQueries, SearchQueries } from "@botrelay/sql"
import { Effect } from "effect"
import { sql } from "kysely"
import { type Connection, db, type SqliteStatement } from "./SqliteConnection.js"

/** `botrelay_messages_fts` (migration 0015) as queries see it: `rowid` is the message's rowid. */
interface FtsTable {
  readonly rowid: number
  readonly botrelay_messages_fts: string
  readonly text: string
  readonly scope: string
}

const ftsDb = db.withTables<{ botrelay_messages_fts: FtsTable }>()

/** `botrelay_notes_fts` (migration 0026) as queries see it: `rowid` is the note's id. */
interface NotesFtsTable {
  readonly rowid: number
  readonly botrelay_notes_fts: string
  readonly text: string
}

const notesFtsDb = db.withTables<{ botrelay_notes_fts: NotesFtsTable }>()

/** An FTS5 string: in double quotes, a quote doubled. Inside one, every character is text. */
const quoted = (text: string) => `"${text.replaceAll("\"", "\"\"")}"`

/**
 * The FTS5 expression of the terms, on the text column: each term a quoted string (its words a phrase), a
 * prefix term followed by `*`, terms side by side (AND). No operator of the user's reaches FTS5.
 */
export const matchText = (terms: SearchQuery.Terms): string =>
  `text : (${terms.map((term) => `${quoted(term.text)}${term.prefix ? "*" : ""}`).join(" ")})`

/** A scope word of migration 0015: a letter, then the id, a negative one as `n<digits>`. */
export const scopeWord = (letter: "b" | "c" | "u", id: number): string => id < 0 ? `${letter}n${-id}` : `${letter}${id}`

/** Above this many bots, a search leaves the bots out of the FTS5 expression and filters on the rows alone. */
const maxScopeBots = 64

/**
 * The FTS5 expression of a search: the text's terms AND the scope words of the bots, chat and sender asked
 * for, so FTS5 intersects their posting lists (the rows are still filtered on their columns).
 */
export const matchExpression = (search: SearchStore.MessageSearch): string => {
  const parts = [matchText(search.terms)]
  const bots = search.bot_ids === undefined ? undefined : [...new Set([...search.bot_ids, ...(search.chats ?? []).map((c) => c.bot_id)])]
  if (bots !== undefined && bots.length > 0 && bots.length <= maxScopeBots) {
    parts.push(`scope : (${bots.map((id) => quoted(scopeWord("b", id))).join(" OR ")})`)
  }
  if (search.chat_id !== undefined) parts.push(`scope : ${quoted(scopeWord("c", search.chat_id))}`)
  if (search.user_id !== undefined) parts.push(`scope : ${quoted(scopeWord("u", search.user_id))}`)
  return parts.join(" AND ")
}

/**
 * The search's query: matches read from the index newest rowid first, each joined to its message by rowid,
 * stopped at `limit`; `position` is the rowid, `marked` the text with `Highlight` marks. CROSS JOIN keeps
 * the index the outer loop whatever the filters (else SQLite may walk a chat's messages by date, probe the
 * index for each and sort them all).
 */
const searchQuery = (search: SearchStore.MessageSearch) =>
  ftsDb.selectFrom("botrelay_messages_fts")
    .crossJoin("botrelay_messages as m")
    .where(sql<boolean>`m.rowid = botrelay_messages_fts.rowid`)
    .select([
      sql<number>`botrelay_messages_fts.rowid`.as("position"),
      sql<string>`highlight(botrelay_messages_fts, 0, ${Highlight.open}, ${Highlight.close})`.as("marked"),
      ...SearchQueries.foundColumns
    ])
    .where(sql.ref("botrelay_messages_fts"), "match", matchExpression(search))
    .$if(search.before !== undefined, (qb) => qb.where(sql`botrelay_messages_fts.rowid`, "<", search.before!))
    .where(SearchQueries.searchFilters(search))
    .orderBy(sql`botrelay_messages_fts.rowid`, "desc")
    .limit(search.limit)

/** A note search's query: matches newest id first, each joined to its note, stopped at `limit`. */
const noteSearchQuery = (search: SearchStore.NoteSearch) =>
  notesFtsDb.selectFrom("botrelay_notes_fts")
    .crossJoin("botrelay_notes as n")
    .where(sql<boolean>`n.id = botrelay_notes_fts.rowid`)
    .select([
      sql<string>`highlight(botrelay_notes_fts, 0, ${Highlight.open}, ${Highlight.close})`.as("marked"),
      ...NoteQueries.noteColumns.map((column) => `n.${column}` as const)
    ])
    .where(sql.ref("botrelay_notes_fts"), "match", matchText(search.terms))
    .$if(search.before !== undefined, (qb) => qb.where(sql`botrelay_notes_fts.rowid`, "<", search.before!))
    .where(NoteQueries.noteSearchFilters(search))
    .orderBy(sql`botrelay_notes_fts.rowid`, "desc")
    .limit(search.limit)

const isFts5Error = (cause: unknown) => cause instanceof Error && cause.message.startsWith("fts5:")

/** How many messages one indexing step takes into the search index. */
export const indexingStep = 5_000

/**
 * Takes the messages written since the last step into the search index (migration 0016), up to `limit`, in
 * rowid order, in one transaction; returns how many rowids it advanced over, 0 when nothing was waiting.
 */
export const indexer = (c: Connection) => {
  const reach = c.sqlite.prepare("SELECT indexed_upto FROM botrelay_search_state WHERE id = 1").raw(true)
  const nextReach = c.sqlite.prepare(
    "SELECT max(rowid) FROM (SELECT rowid FROM botrelay_messages WHERE rowid > ? ORDER BY rowid LIMIT ?)"
  ).raw(true)
  const index = c.sqlite.prepare(
    "INSERT INTO botrelay_messages_fts (rowid, text, scope) SELECT message_rowid, text, scope " +
      "FROM botrelay_messages_search WHERE message_rowid > ? AND message_rowid <= ?"
  )
  const advance = c.sqlite.prepare("UPDATE botrelay_search_state SET indexed_upto = ? WHERE id = 1")
  return (limit: number): number => {
    const from = (reach.all()[0] as [number])[0]
    const to = (nextReach.all(from, limit)[0] as [number | null])[0]
    if (to === null) return 0
    index.run(from, to)
    advance.run(to)
    return to - from
  }
}

/** The `SearchStore` on SQLite's FTS5 index of migration 0015. */
export const make = (c: Connection): SearchStore.SearchStoreService => {
  const statements = new Map<string, SqliteStatement>()
  const statement = (text: string) => {
    let stmt = statements.get(text)
    if (stmt === undefined) {
      stmt = c.sqlite.prepare(text).raw(true)
      statements.set(text, stmt)
    }
    return stmt
  }

  const indexStep = indexer(c)
  /** A step of indexing, through the group commit (so after the writes queued before it). */
  const indexPending = c.groupCommit("indexSearch", () => indexStep(indexingStep))
  /** Every message written so far in the index, a step per transaction. */
  const indexAll = indexPending.pipe(Effect.repeat({ while: (advanced) => advanced > 0 }), Effect.asVoid)

  const refused = (operation: string) => (cause: unknown) =>
    isFts5Error(cause)
      ? Errors.InvalidInput.field("q", "q could not be searched: leave out special characters and try again")
      : new Errors.StorageError({ operation, cause })

  return {
    indexPending,
    searchNotes: (search) => {
      if (search.bot_ids !== undefined && search.bot_ids.length === 0 && (search.chats ?? []).length === 0) {
        return Effect.succeed([])
      }
      return Effect.try({
        try: () =>
          c.all(noteSearchQuery(search)).map(({ marked, ...row }): SearchStore.FoundNoteAt => {
            const note = NoteQueries.toNote(row)
            return { position: note.id, note: { ...note, highlight: Highlight.toHtml(note.text, marked) } }
          }),
        catch: refused("searchNotes")
      })
    },
    searchMessages: (search) => {
      if (search.bot_ids !== undefined && search.bot_ids.length === 0 && (search.chats ?? []).length === 0) {
      return Effect.succeed([])
    }
      return Effect.zipRight(indexAll, Effect.try({
        try: () => {
          const compiled = searchQuery(search).compile()
          const rows = statement(compiled.sql).all(...compiled.parameters) as Array<ReadonlyArray<any>>
          return rows.map((row): SearchStore.Found => {
            const message = SearchQueries.toFound(row, 2)
            return { position: row[0], message: { ...message, highlight: Highlight.toHtml(message.text, row[1]) } }
          })
        },
        catch: refused("searchMessages")
      }))
    }
  }
}
