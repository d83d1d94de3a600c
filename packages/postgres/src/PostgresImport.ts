import { Errors } from "@botrelay/core"
import { SecretColumns, SecretKey, type Tables } from "@botrelay/sql"
import type { Scope } from "effect"
import { Data, Effect } from "effect"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import { type ConnectionError, type MigrationError, openMigrated, type Options } from "./PostgresConnection.js"
import * as Search from "./Search.js"

/**
 * A whole Botrelay database loaded into PostgreSQL in one transaction (`botrelay migrate`): every row of
 * every table, ids and times kept, secrets re-encrypted with the target's key, the words of messages made
 * as the message store makes them, and every sequence set past the ids copied.
 */

/** A table of the shared schema. */
export type Table = keyof Tables.Database

/** A row, its columns by name. */
export type Row = SecretColumns.Row

/**
 * What each table holds, as a count line names it, in the order tables are filled (parents before children).
 * Undefined for those not copied: `botrelay_secret_key`, whose check value is written anew with the target's
 * key, the instances and leases, which the instances on PostgreSQL make for themselves, the chat counts,
 * which the triggers on `botrelay_chats` count as the chats are copied, and the idempotency keys, which live a day.
 */
export const kinds: { readonly [T in Table]: string | undefined } = {
  botrelay_bots: "bots",
  botrelay_webhooks: "webhook secrets",
  botrelay_routes: "routes",
  botrelay_messages: "messages",
  botrelay_outgoing: "outgoing messages",
  botrelay_chats: "chats",
  botrelay_chat_members: "chat members",
  botrelay_people: "people",
  botrelay_message_hours: "hourly counts",
  botrelay_chat_days: "daily counts",
  botrelay_tags: "tags",
  botrelay_notes: "notes",
  botrelay_canned_replies: "canned replies",
  botrelay_api_keys: "keys",
  botrelay_api_key_bots: "key bots",
  botrelay_accounts: "accounts",
  botrelay_account_bots: "account bots",
  botrelay_sessions: "sessions",
  botrelay_audit: "audit",
  botrelay_settings: "settings",
  botrelay_inbox: "inbox",
  botrelay_ingress: "offsets",
  botrelay_deliveries: "outbox",
  botrelay_long_poll_buffer: "buffers",
  botrelay_long_poll_state: "buffer states",
  botrelay_route_sends: "route sends",
  botrelay_route_mappings: "route mappings",
  botrelay_events: "events",
  botrelay_bridges: "bridges",
  botrelay_bridge_deliveries: "bridge deliveries",
  botrelay_event_state: "event ids",
  botrelay_secret_key: undefined,
  botrelay_instances: undefined,
  botrelay_leases: undefined,
  botrelay_chat_counts: undefined,
  botrelay_idempotency: undefined
}

/** The tables an import fills, in order. */
export const tables: ReadonlyArray<Table> = (Object.keys(kinds) as Array<Table>).filter((t) => kinds[t] !== undefined)

/** The tables an import empties first: those it fills, and the instances and leases. */
const cleared: ReadonlyArray<Table> = (Object.keys(kinds) as Array<Table>).filter((t) => t !== "botrelay_secret_key")

/** Tables whose rows do not make a database non-empty: the event id counter, which every database has. */
const bookkeeping: ReadonlySet<Table> = new Set(["botrelay_event_state"])

/** Where the rows come from. */
export interface Source {
  /** The key the source's secrets are encrypted with. */
  readonly cipher: SecretKey.Cipher
  /** The columns the source has of a table; for `botrelay_messages` also `position`, their search order. */
  readonly columns: (table: Table) => ReadonlyArray<string>
  /** The table's rows with these columns, a chunk at a time; each chunk is inserted before the next is read. */
  readonly rows: (table: Table, columns: ReadonlyArray<string>) => Iterable<ReadonlyArray<Row>>
  /** The highest `id` the source ever gave a row of the table (ids are never reused), or 0. */
  readonly lastId: (table: Table) => number
}

/** The database already holds Botrelay data, and replacing it was not asked for. */
export class TargetNotEmpty extends Data.TaggedError("TargetNotEmpty")<{
  /** The kinds it holds rows of. */
  readonly kinds: ReadonlyArray<string>
}> {
  override get message() {
    return `the PostgreSQL database is not empty (it holds ${this.kinds.join(", ")})`
  }
}

/** The source's schema does not fit the target's. */
export class SchemaMismatch extends Data.TaggedError("SchemaMismatch")<{ readonly detail: string }> {
  override get message() {
    return this.detail
  }
}

/** How many rows of a table were copied. */
export interface Copied {
  readonly table: Table
  readonly kind: string
  readonly rows: number
}

/** Why an import failed; nothing was written. */
export type ImportError =
  | ConnectionError
  | MigrationError
  | TargetNotEmpty
  | SchemaMismatch
  | SecretKey.SecretKeyError
  | Errors.StorageError

/** The most parameters of one statement (PostgreSQL's limit is 65535), and the most rows of one insert. */
const maxParameters = 60_000
const maxBatch = 1_000

interface Column {
  readonly table_name: string
  readonly column_name: string
  readonly required: boolean
  readonly is_identity: boolean
}

/** Columns PostgreSQL computes from others, never taken from a source. */
const derived: Partial<Record<Table, ReadonlyArray<string>>> = {
  botrelay_messages: ["search_vector"],
  botrelay_notes: ["search_vector"]
}

/** The row as PostgreSQL stores it: secrets re-encrypted, a message with its words. */
const prepare = (table: Table, row: Row, from: SecretKey.Cipher, to: SecretKey.Cipher): Row => {
  const recrypted = SecretColumns.recrypt(table, row, from, to)
  return table === "botrelay_messages" || table === "botrelay_notes"
    ? { ...recrypted, search_vector: Search.vector(typeof row.text === "string" ? row.text : "") }
    : recrypted
}

/** The columns to copy: those both sides have; fails when one side has a column the other cannot do without. */
const columnsOf = (table: Table, source: ReadonlyArray<string>, target: ReadonlyArray<Column>): Array<string> => {
  const targetNames = new Set(target.map((c) => c.column_name))
  const extra = source.filter((c) => !targetNames.has(c))
  if (extra.length > 0) {
    throw new SchemaMismatch({ detail: `${table}.${extra.join(", ")} of the source has no column in PostgreSQL` })
  }
  const missing = target.filter((c) =>
    c.required && !source.includes(c.column_name) && !(derived[table] ?? []).includes(c.column_name)
  )
  if (missing.length > 0) {
    throw new SchemaMismatch({
      detail: `${table}.${missing.map((c) => c.column_name).join(", ")} is required in PostgreSQL but not in the source`
    })
  }
  return source.filter((c) => targetNames.has(c))
}

const copyAll = async (
  db: Kysely<any>,
  to: SecretKey.Cipher,
  source: Source,
  replace: boolean,
  signal: AbortSignal
): Promise<Array<Copied>> => {
  await sql`SET LOCAL statement_timeout = 0`.execute(db)
  await sql`SET LOCAL idle_in_transaction_session_timeout = 0`.execute(db)
  // A server starting on this database meanwhile waits for the copy before its first-start duties (see StoreLock).
  await sql`SELECT pg_advisory_xact_lock(hashtext('botrelay:bootstrap')::bigint)`.execute(db)
  await sql`LOCK TABLE ${sql.join(cleared.map((t) => sql.table(t)))} IN ACCESS EXCLUSIVE MODE`.execute(db)

  const held: Array<string> = []
  for (const table of tables) {
    if (bookkeeping.has(table)) continue
    const { rows } = await sql<{ any: boolean }>`SELECT EXISTS (SELECT 1 FROM ${sql.table(table)}) AS any`.execute(db)
    if (rows[0]?.any === true) held.push(kinds[table]!)
  }
  if (held.length > 0 && !replace) throw new TargetNotEmpty({ kinds: held })
  await sql`TRUNCATE ${sql.join(cleared.map((t) => sql.table(t)))}`.execute(db)
  await sql`INSERT INTO botrelay_secret_key (id, check_value) VALUES (1, ${to.encrypt("check", SecretKey.checkPlaintext)})
    ON CONFLICT (id) DO UPDATE SET check_value = excluded.check_value`.execute(db)

  const { rows: described } = await sql<Column>`
    SELECT table_name, column_name,
      (is_nullable = 'NO' AND column_default IS NULL AND is_identity = 'NO') AS required,
      is_identity = 'YES' AS is_identity
    FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ANY(${tables})
    ORDER BY table_name, ordinal_position`.execute(db)

  const copied: Array<Copied> = []
  for (const table of tables) {
    const target = described.filter((c) => c.table_name === table)
    const columns = columnsOf(table, source.columns(table), target)
    const batch = Math.max(1, Math.min(maxBatch, Math.floor(maxParameters / (columns.length + 1))))
    let pending: Array<Row> = []
    let count = 0
    const flush = async () => {
      if (pending.length === 0) return
      // Interrupted (e.g. Ctrl-C): the transaction is rolled back rather than left to finish.
      signal.throwIfAborted()
      await db.insertInto(table).values(pending).execute()
      count += pending.length
      pending = []
    }
    for (const chunk of source.rows(table, columns)) {
      for (const row of chunk) {
        pending.push(prepare(table, row, source.cipher, to))
        if (pending.length >= batch) await flush()
      }
    }
    await flush()
    for (const column of target.filter((c) => c.is_identity)) {
      const floor = column.column_name === "id" ? source.lastId(table) : 0
      const ref = sql.ref(column.column_name)
      await sql`SELECT setval(pg_get_serial_sequence(${table}, ${column.column_name}),
        greatest(coalesce(max(${ref}), 0), ${floor}::bigint, 1), greatest(coalesce(max(${ref}), 0), ${floor}::bigint) > 0)
        FROM ${sql.table(table)}`.execute(db)
    }
    copied.push({ table, kind: kinds[table]!, rows: count })
  }
  return copied
}

/**
 * Connects, brings the schema up to date (under the advisory lock, as a server starting does), and copies
 * every table of `source` in one transaction, after checking that the database holds no Botrelay data (with
 * `replace`, emptying it instead). The database's secrets are then those of `source` encrypted with
 * `options.secretKey`. On any failure nothing is written.
 */
export const load = (
  options: Options,
  source: Source,
  { replace }: { readonly replace: boolean }
): Effect.Effect<ReadonlyArray<Copied>, ImportError, Scope.Scope> =>
  Effect.flatMap(openMigrated(options), ({ cipher, db }) =>
    Effect.tryPromise({
      try: (signal) =>
        db.transaction().execute((trx) => copyAll(trx as unknown as Kysely<any>, cipher, source, replace, signal)),
      catch: (cause) =>
        cause instanceof TargetNotEmpty || cause instanceof SchemaMismatch || cause instanceof SecretKey.SecretKeyError
          ? cause
          : new Errors.StorageError({ operation: "import", cause })
    }))
