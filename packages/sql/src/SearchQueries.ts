import type { Message, SearchStore } from "@botrelay/core"
import type { Expression, SqlBool } from "kysely"
import { expressionBuilder } from "kysely"
import { pageColumns, toMessage } from "./MessageQueries.js"
import { inFilter } from "./ScopeQueries.js"
import type { MessagesTable } from "./Tables.js"

// What a full-text search asks of the messages besides the text match, which each dialect does its own way
// (SQLite: FTS5 in @botrelay/sqlite). The messages table is aliased `m`.

/** The tables a search's conditions read: the messages as `m`. */
export interface SearchTables {
  readonly m: MessagesTable
}

/** The columns of a found message, in `toFound`'s order: bot and chat, then `pageColumns`. */
export const foundColumns = ["m.bot_id", "m.chat_id", ...pageColumns.map((column) => `m.${column}` as const)] as const

/** A found message from a raw row of `foundColumns` (read from the row's `offset`th value on). */
export const toFound = (row: ReadonlyArray<any>, offset = 0): Message.Message =>
  toMessage(row[offset], row[offset + 1], row.slice(offset + 2))

/** The filters of a search. */
export type SearchFilters = Pick<SearchStore.MessageSearch, "bot_ids" | "chats" | "chat_id" | "user_id" | "from" | "to">

/**
 * The conditions a found message meets besides the text: not deleted, of the bots, chat and sender asked for,
 * dated in [from, to). `bot_ids` and `chats` must not both be empty (an empty scope finds nothing and needs no query).
 */
export const searchFilters = (filters: SearchFilters): Expression<SqlBool> => {
  const eb = expressionBuilder<SearchTables, "m">()
  return eb.and([
    eb("m.deleted", "=", 0),
    ...(filters.bot_ids === undefined
      ? []
      : filters.chats !== undefined && filters.chats.length > 0
      ? [inFilter({ bot_ids: filters.bot_ids, chats: filters.chats }, "m.bot_id", "m.chat_id")]
      : [eb("m.bot_id", "in", [...filters.bot_ids])]),
    ...(filters.chat_id === undefined ? [] : [eb("m.chat_id", "=", filters.chat_id)]),
    ...(filters.user_id === undefined ? [] : [eb("m.user_id", "=", filters.user_id)]),
    ...(filters.from === undefined ? [] : [eb("m.date", ">=", filters.from)]),
    ...(filters.to === undefined ? [] : [eb("m.date", "<", filters.to)])
  ])
}
