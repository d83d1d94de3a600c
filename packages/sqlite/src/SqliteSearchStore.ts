import { Errors, Highlight } from "@botrelay/core"
import type { SearchQuery, SearchStore } from "@botrelay/core"
import { SearchQueries } from "@botrelay/sql"
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
  const bots = search.bot_ids
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

const isFts5Error = (cause: unknown) => cause instanceof Error && cause.message.startsWith("fts5:")

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

  return {
    searchMessages: (search) => {
      if (search.bot_ids !== undefined && search.bot_ids.length === 0) return Effect.succeed([])
      return Effect.try({
        try: () => {
          const compiled = searchQuery(search).compile()
          const rows = statement(compiled.sql).all(...compiled.parameters) as Array<ReadonlyArray<any>>
          return rows.map((row): SearchStore.Found => {
            const message = SearchQueries.toFound(row, 2)
            return { position: row[0], message: { ...message, highlight: Highlight.toHtml(message.text, row[1]) } }
          })
        },
        catch: (cause) =>
          isFts5Error(cause)
            ? Errors.InvalidInput.field("q", "q could not be searched: leave out special characters and try again")
            : new Errors.StorageError({ operation: "searchMessages", cause })
      })
    }
  }
}
