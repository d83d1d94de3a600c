/**
 * `botrelay migrate`: a SQLite database copied whole into PostgreSQL, in one transaction, while the SQLite
 * file is held with the server's own lock (see DatabaseLock) so that no server can start on it meanwhile.
 */
import { existsSync } from "node:fs"
import { Errors } from "@botrelay/core"
import { PostgresImport, PostgresStores } from "@botrelay/postgres"
import { SecretKey, SqliteStores } from "@botrelay/sqlite"
import type { Scope } from "effect"
import { Data, Effect } from "effect"
import * as DatabaseLock from "./DatabaseLock.js"

/** What to copy where. */
export interface Options {
  /** The SQLite file. */
  readonly from: string
  /** The `postgres://` URL. */
  readonly to: string
  /** Empty the target's Botrelay tables first (in the same transaction) rather than refuse a non-empty one. */
  readonly force: boolean
  /** The target's key (`BOTRELAY_SECRET_KEY`); it also decrypts the source when there is no key file beside it. */
  readonly secretKey: SecretKey.SecretKey
  /** How messages name where `secretKey` came from. */
  readonly secretKeySource: string
}

/** There is no SQLite database at `--from`. */
export class SourceMissing extends Data.TaggedError("SourceMissing")<{ readonly file: string }> {
  override get message() {
    return `there is no SQLite database at ${this.file}`
  }
}

/** Why a migration did not happen; nothing was written to the target. */
export type MigrateError =
  | SourceMissing
  | DatabaseLock.DatabaseInUse
  | DatabaseLock.LockFileError
  | SqliteStores.MigrationError
  | SqliteStores.SecretKeyError
  | PostgresImport.ImportError
  | Errors.StorageError

/** Rows read from SQLite at a time. */
const chunkSize = 1_000

/** Columns PostgreSQL has that SQLite keeps implicitly: a message's search order is its rowid. */
const implicit: Partial<Record<PostgresImport.Table, Record<string, string>>> = {
  botrelay_messages: { position: "rowid" }
}

const quoted = (name: string) => `"${name.replaceAll(`"`, `""`)}"`

/** The SQLite database as the import reads it, within one read transaction (a consistent snapshot). */
const sqliteSource = (
  sqlite: SqliteStores.SqliteDatabase,
  cipher: SecretKey.Cipher
): Effect.Effect<PostgresImport.Source, Errors.StorageError, Scope.Scope> =>
  Effect.as(
    Effect.acquireRelease(
      Effect.try({
        try: () => sqlite.prepare("BEGIN").run(),
        catch: (cause) => new Errors.StorageError({ operation: "migrate", cause })
      }),
      () => Effect.sync(() => sqlite.prepare("COMMIT").run())
    ),
    {
      cipher,
      columns: (table) => [
        ...(sqlite.prepare(`PRAGMA table_info(${quoted(table)})`).all() as Array<{ name: string }>).map((c) => c.name),
        ...Object.keys(implicit[table] ?? {})
      ],
      rows: function*(table, columns) {
        const select = columns.map((c) => {
          const from = implicit[table]?.[c]
          return from === undefined ? quoted(c) : `${from} AS ${quoted(c)}`
        }).join(", ")
        const order = implicit[table] === undefined ? "" : " ORDER BY rowid"
        let chunk: Array<PostgresImport.Row> = []
        for (const row of sqlite.prepare(`SELECT ${select} FROM ${quoted(table)}${order}`).iterate()) {
          chunk.push(row as PostgresImport.Row)
          if (chunk.length === chunkSize) {
            yield chunk
            chunk = []
          }
        }
        if (chunk.length > 0) yield chunk
      },
      lastId: (table) =>
        (sqlite.prepare("SELECT seq FROM sqlite_sequence WHERE name = ?").all(table)[0] as { seq: number } | undefined)
          ?.seq ?? 0
    }
  )

/** The source's key: its key file when there is one, else the target's (a server started with BOTRELAY_SECRET_KEY). */
const sourceKey = (options: Options) => {
  const file = SecretKey.keyFileFor(options.from)
  return existsSync(file)
    ? { secretKey: SecretKey.readFile(file), secretKeySource: `the key file ${file}` }
    : { secretKey: options.secretKey, secretKeySource: `${options.secretKeySource} (there is no key file at ${file})` }
}

/**
 * Copies every table of the SQLite file into the PostgreSQL database (see `PostgresImport.load`), holding the
 * file's server lock throughout; how many rows of each kind were copied.
 */
export const migrate = (options: Options): Effect.Effect<ReadonlyArray<PostgresImport.Copied>, MigrateError> =>
  Effect.scoped(Effect.gen(function*() {
    if (!existsSync(options.from)) return yield* Effect.fail(new SourceMissing({ file: options.from }))
    yield* DatabaseLock.acquire(options.from)
    const key = yield* Effect.try({
      try: () => sourceKey(options),
      catch: (e) => e as SqliteStores.SecretKeyError
    })
    const { cipher, sqlite } = yield* SqliteStores.open({ filename: options.from, ...key })
    const source = yield* sqliteSource(sqlite, cipher)
    return yield* PostgresImport.load(
      { url: options.to, pool: 1, secretKey: options.secretKey, secretKeySource: options.secretKeySource },
      source,
      { replace: options.force }
    )
  }))

/** Where the target is, for the report: `postgres://host:port/database`, never user or password. */
export const describeTarget = (url: string): string => {
  const { database, host, port } = PostgresStores.target(url)
  return `postgres://${host}:${port}/${database}`
}

/** The report: a line per kind with its count, then where it went. */
export const report = (copied: ReadonlyArray<PostgresImport.Copied>, to: string): string =>
  [...copied.map((c) => `${c.kind} ${c.rows}`), `migrated to ${describeTarget(to)}`].join("\n") + "\n"
