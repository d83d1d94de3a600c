/**
 * The standalone server's hold on its SQLite file: one server per file, enforced by the OS.
 *
 * Node has no flock API, so the lock is taken through SQLite's own POSIX locks (better-sqlite3, already
 * compiled for the driver) on a separate file, `<database>.lock`: a tiny SQLite database opened with
 * `locking_mode=EXCLUSIVE` that, once written, keeps its exclusive lock until the connection closes. The
 * kernel drops the lock when the process dies, SIGKILL included, so a restart never finds a stale lock;
 * pid reuse cannot fool it either, since no liveness guess is involved. The holder writes its pid into the
 * file header's `user_version` (offset 60 of SQLite's documented file format); a second process, which
 * SQLite refuses with SQLITE_BUSY, reads it from the raw bytes to name the holder. SQLite's byte-range
 * locks sit at offset 1 GiB, so that read is never blocked.
 *
 * POSIX locks belong to the process and vanish when any descriptor of the file in that process closes:
 * nothing here opens the lock file with node:fs while this process holds it (the in-process table below
 * answers for this process instead). Like SQLite itself, the lock needs a local file system.
 */
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, realpathSync, statSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import BetterSqlite3 from "better-sqlite3"
import { Data, Duration, Effect, Layer, type Scope } from "effect"

/** Another server holds the SQLite file. */
export class DatabaseInUse extends Data.TaggedError("DatabaseInUse")<{
  readonly file: string
  /** The holder's pid; undefined when the lock file does not say. */
  readonly pid: number | undefined
}> {
  override get message() {
    return `this SQLite file is in use by another Botrelay server (pid ${
      this.pid ?? "unknown"
    }); several instances need PostgreSQL`
  }
}

/** The lock file cannot be created, opened or written. */
export class LockFileError extends Data.TaggedError("LockFileError")<{
  readonly file: string
  readonly cause: unknown
}> {
  override get message() {
    return `cannot lock ${this.file}: ${this.cause instanceof Error ? this.cause.message : String(this.cause)}`
  }
}

/** `application_id` of a Botrelay lock file ("BRLK"), so a file of another kind is never taken for one. */
const magic = 0x42524c4b

/** Where the lock of a database file lives: beside it, never the database itself. */
export const fileFor = (database: string) => `${database}.lock`

/** Databases that take no file lock: SQLite in memory, and PostgreSQL (where instances share by design). */
const takesNoLock = (database: string) => database === ":memory:" || database === "" || /^postgres(ql)?:\/\//i.test(database)

/** Lock files this process holds, by real path. */
const heldHere = new Set<string>()

/** The lock file's path with its folder's symbolic links resolved, so two spellings of one file meet. */
const canonical = (file: string) => join(realpathSync(dirname(file)), basename(file))

/** The holder's pid as the lock file's header gives it; undefined when it gives none. */
const holderPid = (file: string): number | undefined => {
  try {
    const header = readFileSync(file).subarray(0, 100)
    if (header.length < 72 || header.readUInt32BE(68) !== magic) return undefined
    const pid = header.readUInt32BE(60)
    return pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

const isBusy = (e: unknown) =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" && e.code.startsWith("SQLITE_BUSY")

/** Creates the lock file 0600 (its journal takes the same mode), or tightens an existing one. */
const secure = (file: string) => {
  closeSync(openSync(file, "a", 0o600))
  const mode = statSync(file).mode & 0o777
  if ((mode & 0o077) !== 0) chmodSync(file, mode & 0o700)
}

/** Takes the lock; undefined when another process holds it. */
const take = (file: string): BetterSqlite3.Database | undefined => {
  const db = new BetterSqlite3(file, { timeout: 0 })
  try {
    db.pragma("locking_mode = EXCLUSIVE")
    db.exec("BEGIN EXCLUSIVE")
    db.pragma(`user_version = ${process.pid}`)
    db.pragma(`application_id = ${magic}`)
    db.exec("COMMIT")
    return db
  } catch (e) {
    db.close()
    if (isBusy(e)) return undefined
    throw e
  }
}

/**
 * Holds `<database>.lock` for the scope's lifetime (creating the database's folder, 0700, when missing);
 * `:memory:` and PostgreSQL take none. Fails with `DatabaseInUse` when another server, in this process or another, holds it.
 */
export const acquire = (database: string): Effect.Effect<void, DatabaseInUse | LockFileError, Scope.Scope> =>
  takesNoLock(database) ? Effect.void : Effect.gen(function*() {
    const file = yield* Effect.try({
      try: () => {
        mkdirSync(dirname(database), { recursive: true, mode: 0o700 })
        return canonical(fileFor(database))
      },
      catch: (cause) => new LockFileError({ file: fileFor(database), cause })
    })
    if (heldHere.has(file)) return yield* Effect.fail(new DatabaseInUse({ file, pid: process.pid }))
    const taken = yield* Effect.try({
      try: () => {
        secure(file)
        return take(file)
      },
      catch: (cause) => new LockFileError({ file, cause })
    })
    if (taken === undefined) {
      // The holder writes its pid right after taking the lock: give it a moment to be readable.
      yield* Effect.sleep(Duration.millis(50))
      return yield* Effect.fail(new DatabaseInUse({ file, pid: holderPid(file) }))
    }
    heldHere.add(file)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        heldHere.delete(file)
        taken.close()
      })
    )
  })

/** `acquire` as a layer: the lock is held while the layer is alive. */
export const layer = (database: string): Layer.Layer<never, DatabaseInUse | LockFileError> =>
  Layer.scopedDiscard(acquire(database))
