import { chmodSync, closeSync, existsSync, openSync, statSync } from "node:fs"
import { Errors } from "@botrelay/core"
import type { Tables } from "@botrelay/sql"
import BetterSqlite3 from "better-sqlite3"
import type { Scope } from "effect"
import { Data, Effect, Option } from "effect"
import type { Compilable } from "kysely"
import {
  DummyDriver,
  Kysely,
  type LimitNode,
  Migrator,
  SqliteAdapter,
  SqliteDialect,
  SqliteIntrospector,
  SqliteQueryCompiler,
  ValueNode
} from "kysely"
import { migrationLockTableName, migrations, migrationTableName } from "./Migrations.js"
import * as SecretKey from "./SecretKey.js"

/** The part of a better-sqlite3 prepared statement the driver uses. */
export interface SqliteStatement {
  readonly reader: boolean
  all(...parameters: Array<unknown>): Array<unknown>
  run(...parameters: Array<unknown>): { readonly changes: number | bigint; readonly lastInsertRowid: number | bigint }
  iterate(...parameters: Array<unknown>): IterableIterator<unknown>
  raw(toggle?: boolean): SqliteStatement
}

/** The part of a better-sqlite3 `Database` the driver uses; a host's own `new Database(file)` fits. */
export interface SqliteDatabase {
  /** The database's file (better-sqlite3 sets it): the secret key file is looked for beside it. */
  readonly name?: string
  prepare(sql: string): SqliteStatement
  transaction(fn: (...args: Array<any>) => any): (...args: Array<any>) => any
  close(): void
}

/**
 * How secrets are encrypted at rest. Without `secretKey`, the key is read from `secret.key` beside the
 * database file, which is generated (mode 0600) on first start; an in-memory database gets a new key.
 */
export interface KeyOptions {
  readonly secretKey?: SecretKey.SecretKey | undefined
  /** How error messages name where `secretKey` came from (e.g. `BOTRELAY_SECRET_KEY`). */
  readonly secretKeySource?: string | undefined
}

/**
 * Open (and own) the SQLite file at `filename`; `":memory:"` for a private in-memory database. A new
 * file is created with mode 0600 (so are its `-wal` and `-shm`); an existing one is tightened to 0600.
 */
export interface FileOptions extends KeyOptions {
  readonly filename: string
}

/** Use a database the host opened; the driver adds its `botrelay_*` tables and never closes it. */
export interface DatabaseOptions extends KeyOptions {
  readonly database: SqliteDatabase
}

/** Where the storage lives. */
export type Options = FileOptions | DatabaseOptions

/** Why secrets cannot be used; see `SecretKey.SecretKeyError`. */
export type SecretKeyError = SecretKey.SecretKeyError

/** The schema could not be brought up to date. */
export class MigrationError extends Data.TaggedError("MigrationError")<{
  readonly cause: unknown
  readonly migration?: string
}> {
  override get message() {
    return this.migration === undefined
      ? "could not migrate the SQLite database"
      : `could not apply migration ${this.migration} to the SQLite database`
  }
}


class TransactionalSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl() {
    return true
  }
}

class MigrationDialect extends SqliteDialect {
  override createAdapter() {
    return new TransactionalSqliteAdapter()
  }
}


/**
 * SQLite's compiler with a bound LIMIT written `cast(? as integer)`. SQLite (3.53, as better-sqlite3 12 builds it)
 * reads a bare `LIMIT ?`'s value while it plans, so a statement is prepared again on every run with new bindings
 * (better-sqlite3 binds on every run): 11 µs a run instead of 2 here. The cast leaves the planner a value it does
 * not read.
 */
class StableLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    if (!ValueNode.is(node.limit) || node.limit.immediate === true) return super.visitLimit(node)
    this.append("limit cast(")
    this.visitNode(node.limit)
    this.append(" as integer)")
  }
}

/** A Kysely that only compiles: the SQL of the stores' queries, run on better-sqlite3 statements. */
export const db = new Kysely<Tables.Database>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new StableLimitCompiler()
  }
})

const isMemory = (filename: string) => filename === ":memory:" || filename === ""

/**
 * Creates the database file with mode 0600 when it does not exist, and tightens it and its companions
 * (`-wal`, `-shm`, `-journal`) to 0600 when they are wider; returns those it tightened.
 */
const secureFile = (filename: string): Array<string> => {
  closeSync(openSync(filename, "a", 0o600))
  const tightened: Array<string> = []
  for (const file of [filename, `${filename}-wal`, `${filename}-shm`, `${filename}-journal`]) {
    if (!existsSync(file)) continue
    const mode = statSync(file).mode & 0o777
    if ((mode & 0o077) === 0) continue
    chmodSync(file, mode & 0o700)
    tightened.push(`${file} (was ${mode.toString(8).padStart(4, "0")})`)
  }
  return tightened
}

const open = (options: Options): Effect.Effect<SqliteDatabase, Errors.StorageError, Scope.Scope> => {
  if ("database" in options) {
    const database = options.database
    return Effect.try({
      try: () => {
        database.prepare("PRAGMA foreign_keys = ON").run()
        return database
      },
      catch: (cause) => new Errors.StorageError({ operation: "open", cause })
    })
  }
  const secured = isMemory(options.filename) ? Effect.void : Effect.try({
    try: () => secureFile(options.filename),
    catch: (cause) => new Errors.StorageError({ operation: "open", cause })
  }).pipe(Effect.flatMap((tightened) =>
    Effect.forEach(tightened, (file) => Effect.logWarning(`tightened the permissions of ${file} to owner-only`))
  ))
  return Effect.zipRight(secured, Effect.acquireRelease(
    Effect.try({
      try: () => {
        const database = new BetterSqlite3(options.filename)
        try {
          if (options.filename !== ":memory:" && options.filename !== "") database.pragma("journal_mode = WAL")
          database.pragma("synchronous = NORMAL")
          database.pragma("busy_timeout = 5000")
          database.pragma("foreign_keys = ON")
        } catch (cause) {
          database.close()
          throw cause
        }
        return database
      },
      catch: (cause) => new Errors.StorageError({ operation: "open", cause })
    }),
    (database) => Effect.sync(() => database.close())
  ))
}

/** The database's key: the given one, else its key file's (created on first start), else a new one in memory. */
const resolveKey = (options: Options): Effect.Effect<{ key: SecretKey.SecretKey; source: string }, SecretKeyError> =>
  Effect.try({
    try: () => {
      if (options.secretKey !== undefined) {
        return { key: options.secretKey, source: options.secretKeySource ?? "the given secret key" }
      }
      const file = "filename" in options ? options.filename : options.database.name
      if (file === undefined) {
        throw new SecretKey.SecretKeyError({
          reason: "invalid",
          detail: "a secret key is needed: the database's file is unknown, so no key file can be found beside it"
        })
      }
      if (isMemory(file)) return { key: SecretKey.generate(), source: "a key in memory" }
      const path = SecretKey.keyFileFor(file)
      return { key: SecretKey.readOrCreateFile(path), source: `the key file ${path}` }
    },
    catch: (cause) =>
      cause instanceof SecretKey.SecretKeyError
        ? cause
        : new SecretKey.SecretKeyError({ reason: "file", detail: "the secret key could not be read" })
  })

/** Fails unless the database's check value decrypts with this key; a database without one passes. */
const verifyKey = (
  database: SqliteDatabase,
  cipher: SecretKey.Cipher,
  source: string,
  file: string | undefined
): Effect.Effect<void, SecretKeyError | Errors.StorageError> =>
  Effect.try({
    try: () =>
      database.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'botrelay_secret_key'").all()
          .length === 0
        ? undefined
        : (database.prepare("SELECT check_value FROM botrelay_secret_key WHERE id = 1").all()[0] as
          | { readonly check_value: string }
          | undefined)?.check_value ?? "",
    catch: (cause) => new Errors.StorageError({ operation: "open", cause })
  }).pipe(Effect.flatMap((check) => {
    if (check === undefined) return Effect.void
    let ok = false
    try {
      ok = cipher.decrypt("check", check) === SecretKey.checkPlaintext
    } catch {
      ok = false
    }
    if (ok) return Effect.void
    const interrupted = file !== undefined && !isMemory(file) && existsSync(`${SecretKey.keyFileFor(file)}.new`)
    return Effect.fail(
      new SecretKey.SecretKeyError({
        reason: "mismatch",
        detail: `the secret key from ${source} does not decrypt this database's secrets; ` +
          "start with the key they were encrypted with" +
          (interrupted
            ? ` (${SecretKey.keyFileFor(file)}.new exists: a key rotation was interrupted after it wrote that key)`
            : "")
      })
    )
  }))

/**
 * Runs `f` with `secure_delete` on, so that what it overwrites (plaintext secrets, secrets under an old
 * key) is zeroed, then moves the WAL into the file and truncates it, so that no old page stays in it.
 */
export const overwriting = <A, E>(database: SqliteDatabase, f: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const before = (database.prepare("PRAGMA secure_delete").all()[0] as { secure_delete: number }).secure_delete
      database.prepare("PRAGMA secure_delete = 1").all()
      return before
    }),
    () => f,
    (before) =>
      Effect.sync(() => {
        database.prepare(`PRAGMA secure_delete = ${before === 1 ? 1 : before === 2 ? "FAST" : 0}`).all()
        database.prepare("PRAGMA wal_checkpoint(TRUNCATE)").all()
      })
  )

/** Brings the schema up to date; what 0010 encrypts leaves no plaintext behind (see `overwriting`). */
const migrate = (database: SqliteDatabase, cipher: SecretKey.Cipher): Effect.Effect<void, MigrationError> =>
  overwriting(database, Effect.tryPromise({
    try: () =>
      new Migrator({
        db: new Kysely<unknown>({ dialect: new MigrationDialect({ database }) }),
        provider: { getMigrations: () => Promise.resolve(migrations(cipher)) },
        migrationTableName,
        migrationLockTableName
      }).migrateToLatest(),
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
  ))

/** The key under which a `Query` carries its types; never set. */
declare const shape: unique symbol

/** SQL compiled once from a Kysely builder: runs with positional parameters `P` and gives rows `R`. */
export interface Query<P extends ReadonlyArray<unknown>, R> {
  readonly sql: string
  readonly [shape]?: (...parameters: P) => R
}

/**
 * Compiles a query of `@botrelay/sql` once. `build` gets the Kysely and one placeholder per parameter and
 * must bind each exactly once, in the order of its parameters; constants go in as literals (`sql.lit`,
 * `eb.lit`). Throws otherwise.
 */
export const compile = <P extends ReadonlyArray<unknown>, R>(
  build: (db: Kysely<Tables.Database>, ...parameters: P) => Compilable<R>
): Query<P, R> => {
  const placeholders = Array.from({ length: build.length - 1 }, (_, i) => Symbol(`parameter ${i + 1}`))
  const compiled = build(db, ...(placeholders as ReadonlyArray<unknown> as P)).compile()
  if (
    compiled.parameters.length !== placeholders.length ||
    compiled.parameters.some((parameter, i) => parameter !== placeholders[i])
  ) throw new Error(`the parameters must be bound once each, in order: ${compiled.sql}`)
  return { sql: compiled.sql }
}

/** A query builder of `@botrelay/sql`: the Kysely, then the query's parameters. */
type Builder = (db: Kysely<Tables.Database>, ...parameters: any) => Compilable<any>

/** The compiled query of a builder. */
type Compiled<B> = B extends (db: Kysely<Tables.Database>, ...parameters: infer P) => Compilable<infer R> ? Query<P, R>
  : never

/** `compile` for each builder. */
export const compileAll = <B extends Record<string, Builder>>(builders: B): { readonly [K in keyof B]: Compiled<B[K]> } =>
  Object.fromEntries(Object.entries(builders).map(([name, build]) => [name, compile(build)])) as any

/** Opens the database with its key: checks the key, brings the schema up to date, checks the key again. */
export const openWithKey = (options: Options) =>
  Effect.gen(function*() {
    const sqlite = yield* open(options)
    const { key, source } = yield* resolveKey(options)
    const cipher = SecretKey.cipher(key)
    const file = "filename" in options ? options.filename : options.database.name
    yield* verifyKey(sqlite, cipher, source, file)
    yield* migrate(sqlite, cipher)
    yield* verifyKey(sqlite, cipher, source, file)
    return { cipher, sqlite }
  })


/** A query prepared on the database: `all` gives its rows, `run` how many rows it changed. */
export interface Prepared<P extends ReadonlyArray<unknown>, R> {
  readonly all: (...parameters: P) => Array<R>
  readonly run: (...parameters: P) => number
  /** Runs an insert: the rowid of the row it added. */
  readonly insert: (...parameters: P) => number
}

/** An open, migrated database and the synchronous machinery every store runs its queries on. */
export interface Connection {
  readonly sqlite: SqliteDatabase
  readonly cipher: SecretKey.Cipher
  /** A statement for a query compiled once (`compile`); the hot paths prepare theirs up front. */
  readonly prepare: <P extends ReadonlyArray<unknown>, R>(query: Query<P, R>) => Prepared<P, R>
  /** `prepare` for each query. */
  readonly prepareAll: <Q extends Record<string, Query<any, any>>>(
    queries: Q
  ) => { readonly [K in keyof Q]: Q[K] extends Query<infer P, infer R> ? Prepared<P, R> : never }
  /** Compiles the query and runs it on a cached statement: its rows (none for a write). */
  readonly all: <R>(query: Compilable<R>) => Array<R>
  /** Compiles the query and runs it on a cached statement: how many rows it changed (or read). */
  readonly run: (query: Compilable) => number
  /** The cached statement of this SQL. */
  readonly statement: (sql: string) => SqliteStatement
  /** `f` in a transaction (a savepoint when nested). */
  readonly transaction: <A extends Array<any>, R>(f: (...args: A) => R) => (...args: A) => R
  /**
   * Runs the write in the transaction of this event-loop turn's writes (group commit): each runs in its
   * own savepoint (a lone write needs none), so one failing write fails alone, and each caller resumes
   * after the commit. Under load many bots write per turn, which saves most of the per-commit cost.
   */
  readonly groupCommit: <A>(operation: string, write: () => A) => Effect.Effect<A, Errors.StorageError>
  /** Whether writes wait for this turn's group commit: a read now does not see what they will write. */
  readonly pending: () => boolean
  /**
   * Runs `f` once the group-commit write now running is committed, in the order of the writes; never when
   * it fails or its transaction rolls back. Outside a group-commit write, `f` runs at once.
   */
  readonly afterCommit: (f: () => void) => void
}

/** Runs `f`, a failure becoming a `StorageError` of the operation. */
export const attempt = <A>(operation: string, f: () => A): Effect.Effect<A, Errors.StorageError> =>
  Effect.try({ try: f, catch: (cause) => new Errors.StorageError({ operation, cause }) })

/** The first row, mapped; `None` when there is none. */
export const first = <A, B>(rows: ReadonlyArray<A>, f: (row: A) => B): Option.Option<B> =>
  rows.length === 0 ? Option.none() : Option.some(f(rows[0]!))

/**
 * How many WAL frames (pages) a checkpoint is meant to find: a quarter of SQLite's own default for its
 * autocheckpoint. A checkpoint's time grows with its frames (on the 2-core test VM about 0.6 ms plus 7 µs a frame), and whatever comes
 * in meanwhile waits for it: smaller ones keep that wait near 2 ms instead of 8.
 */
const checkpointFrames = 250

/** Commits until the first checkpoint: about ten frames a commit is assumed until one has run. */
const initialDue = checkpointFrames / 10

/** Where SQLite checkpoints on its own, inside a commit, should the WAL outgrow the deferred checkpoints. */
const autocheckpointFrames = 4000

/**
 * Checkpoints the WAL after the event-loop turn whose group commits filled it, rather than inside the commit
 * that crossed SQLite's threshold: a checkpoint's `fsync` blocks the thread for milliseconds, which would delay
 * that commit's update on its way to the backend. Returns what a group commit calls after each commit; nothing
 * for a database not in WAL mode. SQLite's autocheckpoint stays on, at a larger size, for the other writes.
 */
const deferredCheckpoints = (sqlite: SqliteDatabase): (() => void) | undefined => {
  const [mode] = sqlite.prepare("PRAGMA journal_mode").all() as Array<{ readonly journal_mode: string }>
  if (mode?.journal_mode !== "wal") return undefined
  sqlite.prepare(`PRAGMA wal_autocheckpoint = ${autocheckpointFrames}`).all()
  const checkpoint = sqlite.prepare("PRAGMA wal_checkpoint(PASSIVE)")
  /** Commits until the next checkpoint, from the frames per commit the last checkpoint found. */
  let due = initialDue
  let commits = 0
  let scheduled = false
  const run = () => {
    scheduled = false
    try {
      const [{ log }] = checkpoint.all() as [{ readonly log: number }]
      due = Math.min(10_000, Math.max(1, Math.round(commits * checkpointFrames / Math.max(log, 1))))
    } catch {
      due = initialDue
    }
    commits = 0
  }
  return () => {
    if (++commits < due || scheduled) return
    scheduled = true
    setImmediate(run)
  }
}

const makeGroupCommit = (sqlite: SqliteDatabase): Pick<Connection, "groupCommit" | "pending" | "afterCommit"> => {
  const checkpointLater = deferredCheckpoints(sqlite)
  type Outcome =
    | { readonly ok: true; readonly value: unknown; readonly committed: Array<() => void> | undefined }
    | { readonly ok: false; readonly error: unknown }
  type Queued = { readonly write: () => unknown; readonly done: (outcome: Outcome) => void }
  let queued: Array<Queued> = []
  /** What runs once the write now running is committed; `undefined` outside a group-commit write. */
  let committing: Array<() => void> | undefined
  /** Runs a write in a transaction, or in a savepoint when one is open (made once: each costs a few closures). */
  const transaction = sqlite.transaction((write: () => unknown) => write())
  const run = (write: () => unknown): Outcome => {
    const committed: Array<() => void> = []
    committing = committed
    try {
      const value = transaction(write)
      return { ok: true, value, committed: committed.length === 0 ? undefined : committed }
    } catch (error) {
      return { ok: false, error }
    } finally {
      committing = undefined
    }
  }
  const all = sqlite.transaction((batch: ReadonlyArray<Queued>) => batch.map(({ write }) => run(write)))
  const flush = () => {
    const batch = queued
    queued = []
    let outcomes: Array<Outcome>
    try {
      outcomes = batch.length === 1 ? [run(batch[0]!.write)] : all(batch)
    } catch (error) {
      outcomes = batch.map(() => ({ ok: false, error }))
    }
    checkpointLater?.()
    try {
      for (const outcome of outcomes) {
        if (outcome.ok && outcome.committed !== undefined) for (const f of outcome.committed) f()
      }
    } finally {
      batch.forEach(({ done }, i) => done(outcomes[i]!))
    }
  }
  return {
    groupCommit: <A>(operation: string, write: () => A): Effect.Effect<A, Errors.StorageError> =>
      Effect.async((resume) => {
        if (queued.length === 0) setImmediate(flush)
        queued.push({
          write,
          done: (outcome) =>
            resume(
              outcome.ok
                ? Effect.succeed(outcome.value as A)
                : Effect.fail(new Errors.StorageError({ operation, cause: outcome.error }))
            )
        })
      }),
    pending: () => queued.length > 0,
    afterCommit: (f) => {
      if (committing === undefined) f()
      else committing.push(f)
    }
  }
}

/** The execution machinery over an open, migrated database. */
export const connection = (sqlite: SqliteDatabase, cipher: SecretKey.Cipher): Connection => {
  const statements = new Map<string, SqliteStatement>()

  const statement = (sql: string): SqliteStatement => {
    let stmt = statements.get(sql)
    if (stmt === undefined) {
      stmt = sqlite.prepare(sql)
      statements.set(sql, stmt)
    }
    return stmt
  }

  const prepare = <P extends ReadonlyArray<unknown>, R>(query: Query<P, R>): Prepared<P, R> => {
    const stmt = sqlite.prepare(query.sql)
    return {
      all: (...parameters: P): Array<R> => stmt.all(...parameters) as Array<R>,
      run: (...parameters: P): number => Number(stmt.run(...parameters).changes),
      insert: (...parameters: P): number => Number(stmt.run(...parameters).lastInsertRowid)
    }
  }

  return {
    sqlite,
    cipher,
    prepare,
    prepareAll: (queries) =>
      Object.fromEntries(Object.entries(queries).map(([name, query]) => [name, prepare(query)])) as any,
    all: <R>(query: Compilable<R>): Array<R> => {
      const compiled = query.compile()
      const stmt = statement(compiled.sql)
      if (stmt.reader) return stmt.all(...compiled.parameters) as Array<R>
      stmt.run(...compiled.parameters)
      return []
    },
    run: (query: Compilable): number => {
      const compiled = query.compile()
      const stmt = statement(compiled.sql)
      return stmt.reader ? stmt.all(...compiled.parameters).length : Number(stmt.run(...compiled.parameters).changes)
    },
    statement,
    transaction: <A extends Array<any>, R>(f: (...args: A) => R): (...args: A) => R => sqlite.transaction(f),
    ...makeGroupCommit(sqlite)
  }
}
