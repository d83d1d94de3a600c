import { Errors } from "@botrelay/core"
import { SecretKey, type Tables } from "@botrelay/sql"
import type { Scope } from "effect"
import { Data, Effect, Option } from "effect"
import type { Compilable, PostgresPool, PostgresPoolClient } from "kysely"
import { Kysely, Migrator, PostgresDialect, sql } from "kysely"
import pg from "pg"
import { parse as parseUrl } from "pg-connection-string"
import { advisoryLock, migrationLockTableName, migrations, migrationTableName } from "./Migrations.js"
import type { Database } from "./Tables.js"

/** Where the storage lives and how it encrypts secrets. */
export interface Options {
  /** `postgres://` or `postgresql://` URL: percent-encoded password, `sslmode`, `?host=/socket/dir`. */
  readonly url: string
  /** The most connections of the pool; 10 when not given. */
  readonly pool?: number | undefined
  /** The key the secrets are encrypted with: the same on every instance (there is no key file). */
  readonly secretKey: SecretKey.SecretKey
  /** How error messages name where `secretKey` came from (e.g. `BOTRELAY_SECRET_KEY`). */
  readonly secretKeySource?: string | undefined
}

/** The database cannot be reached or refuses us; the message names host and port, never the password. */
export class ConnectionError extends Data.TaggedError("ConnectionError")<{
  readonly host: string
  readonly port: string
  readonly reason: string
}> {
  override get message() {
    return `cannot connect to PostgreSQL at ${this.host}:${this.port}: ${this.reason}`
  }
}

/** The schema could not be brought up to date. */
export class MigrationError extends Data.TaggedError("MigrationError")<{
  readonly cause: unknown
  readonly migration?: string
}> {
  override get message() {
    return this.migration === undefined
      ? "could not migrate the PostgreSQL database"
      : `could not apply migration ${this.migration} to the PostgreSQL database`
  }
}

/** Where a URL points, for messages: host (or socket dir), port and database; never user or password. */
export const target = (url: string): { host: string; port: string; database: string } => {
  try {
    const config = parseUrl(url)
    return { host: config.host || "localhost", port: config.port || "5432", database: config.database || "" }
  } catch {
    return { host: "?", port: "?", database: "?" }
  }
}

const int8 = 20
const numeric = 1700

/** bigint and numeric (sums of bigints) as JS numbers: ids, Unix times and counts are safe integers. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === int8 || oid === numeric
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"]
}

/** Why a connection failed, in words without secrets (pg's messages hold none; the URL is never quoted). */
const reasonOf = (cause: unknown): string => {
  if (cause instanceof AggregateError && cause.errors.length > 0) return reasonOf(cause.errors[0])
  if (cause instanceof Error) {
    const code = (cause as { code?: string }).code
    return cause.message !== "" ? cause.message : code ?? cause.name
  }
  return String(cause)
}

/**
 * PostgreSQL text cannot hold NUL (U+0000), which SQLite and Telegram's strings can: a string parameter's NULs
 * are stored as U+FFFD, so a message or name with one is stored (changed) rather than failing its whole write.
 */
const withoutNul = (value: unknown): unknown =>
  typeof value === "string" && value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value

/** The pool as Kysely sees it, string parameters `withoutNul`. */
const nulFree = (pool: pg.Pool): PostgresPool => {
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  return {
    connect: async () => {
      const client = await pool.connect()
      let wrapped = clients.get(client)
      if (wrapped === undefined) {
        wrapped = {
          query: ((text: string, parameters: ReadonlyArray<unknown>) =>
            client.query(text, parameters.map(withoutNul))) as unknown as PostgresPoolClient["query"],
          release: () => client.release()
        }
        clients.set(client, wrapped)
      }
      return wrapped
    },
    end: () => pool.end()
  }
}

/** An open, migrated database: the pool's Kysely, the cipher of its secrets. */
export interface Connection {
  readonly db: Kysely<Tables.Database>
  readonly cipher: SecretKey.Cipher
  /** Runs `f` on the pool; a failure becomes a `StorageError` of the operation. */
  readonly use: <A>(operation: string, f: (db: Kysely<Tables.Database>) => Promise<A>) => Effect.Effect<A, Errors.StorageError>
  /** A new connection of its own (outside the pool), e.g. to hold a session lock; the caller ends it. */
  readonly connect: () => Promise<pg.Client>
  /** Runs `f` in a transaction; a failure rolls it back and becomes a `StorageError` of the operation. */
  readonly transaction: <A>(
    operation: string,
    f: (db: Kysely<Tables.Database>) => Promise<A>
  ) => Effect.Effect<A, Errors.StorageError>
}

/** The rows of a query. */
export const all = async <R>(db: Kysely<any>, query: Compilable<R>): Promise<Array<R>> =>
  (await db.executeQuery(query)).rows

/** How many rows a write changed. */
export const run = async (db: Kysely<any>, query: Compilable): Promise<number> =>
  Number((await db.executeQuery(query)).numAffectedRows ?? 0n)

/** The first row, mapped; `None` when there is none. */
export const first = <A, B>(rows: ReadonlyArray<A>, f: (row: A) => B): Option.Option<B> =>
  rows.length === 0 ? Option.none() : Option.some(f(rows[0]!))

/** The Kysely of the Postgres schema (messages with their search columns) on the same connection. */
export const pgDb = (db: Kysely<Tables.Database>): Kysely<Database> => db as unknown as Kysely<Database>

/** Whether a failure is a unique violation of this constraint (or unique index). */
export const isUniqueViolation = (cause: unknown, constraint: string): boolean =>
  typeof cause === "object" && cause !== null && (cause as { code?: unknown }).code === "23505" &&
  (cause as { constraint?: unknown }).constraint === constraint

/** The pool, closed with the scope; fails with `ConnectionError` when a first connection cannot be made. */
const openPool = (options: Options) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const { host, port } = target(options.url)
      let pool: pg.Pool
      try {
        parseUrl(options.url)
        pool = new pg.Pool({
          connectionString: options.url,
          max: options.pool ?? 10,
          types,
          connectionTimeoutMillis: 5_000,
          idle_in_transaction_session_timeout: 8_000,
          statement_timeout: 8_000,
          application_name: "botrelay"
        })
      } catch {
        return Effect.fail(new ConnectionError({ host, port, reason: "the URL is malformed" }))
      }
      // A connection lost while idle is dropped from the pool and the next query makes a new one.
      pool.on("error", () => {})
      // One lost while checked out (even as it is handed out) fails its queries; its error must not end the process.
      pool.on("connect", (client) => client.on("error", () => {}))
      return Effect.tryPromise({
        try: async () => {
          const client = await pool.connect()
          client.release()
          return pool
        },
        catch: (cause) => new ConnectionError({ host, port, reason: reasonOf(cause) })
      }).pipe(Effect.tapError(() => Effect.promise(() => pool.end().catch(() => undefined))))
    }),
    (pool) => Effect.promise(() => pool.end().catch(() => undefined))
  )

/** Applies the migrations under the advisory lock, on one connection; then checks the key. */
const migrate = (db: Kysely<Tables.Database>, cipher: SecretKey.Cipher) =>
  Effect.tryPromise({
    try: () =>
      db.connection().execute(async (conn) => {
        await sql`SET statement_timeout = 0`.execute(conn)
        await sql`SELECT pg_advisory_lock(${sql.lit(advisoryLock)})`.execute(conn)
        try {
          return await new Migrator({
            db: conn,
            provider: { getMigrations: () => Promise.resolve(migrations(cipher)) },
            migrationTableName,
            migrationLockTableName
          }).migrateToLatest()
        } finally {
          await sql`SELECT pg_advisory_unlock(${sql.lit(advisoryLock)})`.execute(conn)
          await sql`RESET statement_timeout`.execute(conn)
        }
      }),
    catch: (cause) => new MigrationError({ cause })
  }).pipe(
    Effect.flatMap(({ error, results }) => {
      if (error === undefined) return Effect.void
      const failed = results?.find((r) => r.status === "Error")
      return Effect.fail(
        failed === undefined
          ? new MigrationError({ cause: error })
          : new MigrationError({ cause: error, migration: failed.migrationName })
      )
    })
  )

/** Fails unless the database's check value decrypts with this key. */
const verifyKey = (db: Kysely<Tables.Database>, cipher: SecretKey.Cipher, source: string) =>
  Effect.tryPromise({
    try: () => db.selectFrom("botrelay_secret_key").select("check_value").where("id", "=", 1).execute(),
    catch: (cause) => new Errors.StorageError({ operation: "open", cause })
  }).pipe(Effect.flatMap((rows) => {
    let ok = false
    try {
      ok = rows.length > 0 && cipher.decrypt("check", rows[0]!.check_value) === SecretKey.checkPlaintext
    } catch {
      ok = false
    }
    return ok ? Effect.void : Effect.fail(
      new SecretKey.SecretKeyError({
        reason: "mismatch",
        detail: `the secret key from ${source} does not decrypt this database's secrets; ` +
          "start with the key they were encrypted with"
      })
    )
  }))

/**
 * Opens the pool (string parameters `withoutNul`) and brings the schema up to date under the advisory lock,
 * without checking the key: for tools that replace the database's secrets (`PostgresImport`).
 */
export const openMigrated = (
  options: Options
): Effect.Effect<
  { readonly db: Kysely<Tables.Database>; readonly cipher: SecretKey.Cipher },
  ConnectionError | MigrationError,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const pool = yield* openPool(options)
    const db = new Kysely<Tables.Database>({ dialect: new PostgresDialect({ pool: nulFree(pool) }) })
    const cipher = SecretKey.cipher(options.secretKey)
    yield* migrate(db, cipher)
    return { db, cipher }
  })

/** Opens the pool, brings the schema up to date under the advisory lock and checks the key. */
export const open = (
  options: Options
): Effect.Effect<
  Connection,
  ConnectionError | MigrationError | SecretKey.SecretKeyError | Errors.StorageError,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const { cipher, db } = yield* openMigrated(options)
    yield* verifyKey(db, cipher, options.secretKeySource ?? "the given secret key")
    return {
      db,
      cipher,
      connect: async () => {
        const client = new pg.Client({
          connectionString: options.url,
          connectionTimeoutMillis: 5_000,
          application_name: "botrelay"
        })
        client.on("error", () => {})
        await client.connect()
        return client
      },
      use: (operation, f) =>
        Effect.tryPromise({ try: () => f(db), catch: (cause) => new Errors.StorageError({ operation, cause }) }),
      transaction: (operation, f) =>
        Effect.tryPromise({
          try: () => db.transaction().execute((trx) => f(trx)),
          catch: (cause) => new Errors.StorageError({ operation, cause })
        })
    }
  })
