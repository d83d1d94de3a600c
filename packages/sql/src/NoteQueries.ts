import type { Note, Scope } from "@botrelay/core"
import type { Expression, Kysely, Selectable, SqlBool } from "kysely"
import { expressionBuilder } from "kysely"
import { inFilter } from "./ScopeQueries.js"
import type { Database, NotesTable } from "./Tables.js"

/** The note a row of `botrelay_notes` holds. */
export const toNote = (r: Selectable<NotesTable>): Note.Note => ({
  id: r.id,
  bot_id: r.bot_id,
  chat_id: r.chat_id,
  author_id: r.author_id,
  author_name: r.author_name,
  text: r.text,
  created_at: r.created_at,
  updated_at: r.updated_at
})

/** The columns of a note, in `toNote`'s order. */
export const noteColumns = [
  "id",
  "bot_id",
  "chat_id",
  "author_id",
  "author_name",
  "text",
  "created_at",
  "updated_at"
] as const

export const insertNote = (db: Kysely<Database>, input: Note.NoteRecordInput) =>
  db.insertInto("botrelay_notes").values({ ...input }).returningAll()

export const updateNote = (db: Kysely<Database>, id: number, text: string, updatedAt: number) =>
  db.updateTable("botrelay_notes").set({ text, updated_at: updatedAt }).where("id", "=", id).returningAll()

export const findNote = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_notes").selectAll().where("id", "=", id)

export const deleteNote = (db: Kysely<Database>, id: number) => db.deleteFrom("botrelay_notes").where("id", "=", id)

/** A chat's notes, newest first (`created_at`, then `id`, descending), at most `limit`. */
export const listNotes = (db: Kysely<Database>, botId: number, chatId: number, limit: number) =>
  db.selectFrom("botrelay_notes").selectAll()
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)

/** Moves a chat's notes to another chat (a group's move to a supergroup). */
export const moveNotes = (db: Kysely<Database>, toChatId: number, botId: number, fromChatId: number) =>
  db.updateTable("botrelay_notes").set({ chat_id: toChatId }).where("bot_id", "=", botId).where("chat_id", "=", fromChatId)

/** The tables a note search's conditions read: the notes as `n`. */
export interface NoteSearchTables {
  readonly n: NotesTable
}

/**
 * The conditions a found note meets besides the text: of the bots and chat asked for, written in [from, to).
 * `bot_ids` must not be empty.
 */
export const noteSearchFilters = (filters: {
  readonly bot_ids: ReadonlyArray<number> | undefined
  readonly chats?: Scope.ChatFilter["chats"] | undefined
  readonly chat_id?: number | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
}): Expression<SqlBool> => {
  const eb = expressionBuilder<NoteSearchTables, "n">()
  return eb.and([
    ...(filters.bot_ids === undefined
      ? []
      : filters.chats !== undefined && filters.chats.length > 0
      ? [inFilter({ bot_ids: filters.bot_ids, chats: filters.chats }, "n.bot_id", "n.chat_id")]
      : [eb("n.bot_id", "in", [...filters.bot_ids])]),
    ...(filters.chat_id === undefined ? [] : [eb("n.chat_id", "=", filters.chat_id)]),
    ...(filters.from === undefined ? [] : [eb("n.created_at", ">=", filters.from)]),
    ...(filters.to === undefined ? [] : [eb("n.created_at", "<", filters.to)])
  ])
}
