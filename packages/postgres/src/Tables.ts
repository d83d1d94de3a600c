import type { Tables } from "@botrelay/sql"
import type { Generated } from "kysely"

/** `botrelay_messages` on Postgres: the shared columns, the search order and the words of the text. */
export interface MessagesTable extends Tables.MessagesTable {
  /** Search order: increasing as messages are first stored, kept by edits and moves (SQLite's rowid). */
  readonly position: Generated<number>
  /** The words of `text` as a tsvector literal (`Search.vector`), written with the text. */
  readonly search_vector: string
}

/** The Kysely schema of the Postgres tables: the shared one, messages with their search columns. */
export interface Database extends Omit<Tables.Database, "botrelay_messages"> {
  readonly botrelay_messages: MessagesTable
}
