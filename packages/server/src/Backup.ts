/**
 * `botrelay backup` and `botrelay restore`: a SQLite database copied whole with SQLite's online backup API
 * (better-sqlite3 `backup`), in one step, so the copy is one consistent snapshot even while a server writes
 * (in WAL mode a reader never blocks the writer). The secret key file of the database's folder travels with
 * the copy as `<FILE>.key`: without it the copy's tokens cannot be read.
 */
import { chmodSync, closeSync, copyFileSync, existsSync, openSync, renameSync, rmSync, statSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { SecretKey } from "@botrelay/sqlite"
import BetterSqlite3 from "better-sqlite3"
import { Data, Effect } from "effect"
import * as DatabaseLock from "./DatabaseLock.js"

/** Why a backup or a restore did not happen; the message is a sentence that names no secret. */
export class BackupError extends Data.TaggedError("BackupError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** Where the key file of a backup lives: beside it, `<FILE>.key`. */
export const keyFileOf = (backup: string) => `${backup}.key`

/** The Kysely migrations table, the only one a database Botrelay may restore into without `--force` may hold rows in. */
const bookkeeping = new Set(["botrelay_migrations", "botrelay_migrations_lock"])

/** The most pages one backup step copies: all of them, so the copy is one snapshot. */
const allPages = 0x7fffffff

const failed = (reason: string) => new BackupError({ reason })

const causeOf = (e: unknown) => e instanceof Error ? e.message : String(e)

/** A new empty file, mode 0600, in the folder of `file`, for a copy that is renamed over `file` once complete. */
const scratchFor = (file: string) => {
  const scratch = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`)
  rmSync(scratch, { force: true })
  closeSync(openSync(scratch, "wx", 0o600))
  return scratch
}

/** Copies the database `from` into the file `to` with the online backup API, then checks the copy. */
const copyDatabase = (from: string, to: string): Effect.Effect<void, BackupError> =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => new BetterSqlite3(from, { fileMustExist: true, timeout: 5000 }),
      catch: (e) => failed(`cannot open ${from}: ${causeOf(e)}`)
    }),
    (source) =>
      Effect.tryPromise({
        try: () => source.backup(to, { progress: () => allPages }),
        catch: (e) => failed(`the copy of ${from} failed: ${causeOf(e)}`)
      }).pipe(Effect.zipRight(Effect.try({
        try: () => {
          const copy = new BetterSqlite3(to, { readonly: true, fileMustExist: true })
          try {
            const check = copy.pragma("quick_check", { simple: true })
            if (check !== "ok") throw new Error(`integrity check: ${String(check)}`)
          } finally {
            copy.close()
          }
          chmodSync(to, 0o600)
        },
        catch: (e) => failed(`the copy of ${from} is not sound: ${causeOf(e)}`)
      }))),
    (source) => Effect.sync(() => source.close())
  )

/** What `backup` did. */
export interface BackedUp {
  readonly bytes: number
  /** Where the key file was copied; undefined when there is none or the key is `BOTRELAY_SECRET_KEY`. */
  readonly keyFile: string | undefined
}

/**
 * Copies the SQLite database `database` to `to` (0600), and its key file to `<to>.key` (0600) when it has
 * one and its key is not given by the environment (`keyFromEnv`). An existing `to` (or `<to>.key`) is refused
 * unless `force`. Works beside a running server.
 */
export const backup = (options: {
  readonly database: string
  readonly to: string
  readonly force: boolean
  readonly keyFromEnv: boolean
}): Effect.Effect<BackedUp, BackupError> =>
  Effect.gen(function*() {
    const { database, force, to } = options
    if (!existsSync(database)) return yield* failed(`there is no database at ${database}`)
    const keyFile = SecretKey.keyFileFor(database)
    const hasKey = !options.keyFromEnv && existsSync(keyFile)
    for (const file of hasKey ? [to, keyFileOf(to)] : [to]) {
      if (existsSync(file) && !force) return yield* failed(`${file} exists; pass --force to overwrite it`)
    }
    if (!existsSync(dirname(to))) return yield* failed(`the folder ${dirname(to)} does not exist`)
    const scratch = yield* Effect.try({
      try: () => scratchFor(to),
      catch: (e) => failed(`cannot write in ${dirname(to)}: ${causeOf(e)}`)
    })
    yield* copyDatabase(database, scratch).pipe(
      Effect.zipRight(Effect.try({
        try: () => {
          if (hasKey) {
            const keyScratch = `${scratch}.key`
            copyFileSync(keyFile, keyScratch)
            chmodSync(keyScratch, 0o600)
            renameSync(keyScratch, keyFileOf(to))
          }
          renameSync(scratch, to)
        },
        catch: (e) => failed(`cannot write ${to}: ${causeOf(e)}`)
      })),
      Effect.ensuring(Effect.sync(() => {
        rmSync(scratch, { force: true })
        rmSync(`${scratch}.key`, { force: true })
      }))
    )
    return { bytes: statSync(to).size, keyFile: hasKey ? keyFileOf(to) : undefined }
  })

/** The Botrelay tables of a database that hold rows, the migrations' own excepted. */
const tablesWithRows = (file: string): ReadonlyArray<string> => {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true })
  try {
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as Array<{ name: string }>).map((t) => t.name).filter((name) => !bookkeeping.has(name))
    return tables.filter((name) =>
      db.prepare(`SELECT 1 FROM "${name.replaceAll(`"`, `""`)}" LIMIT 1`).all().length > 0
    )
  } finally {
    db.close()
  }
}

/** Fails unless `key` is the backup's: it decrypts the check value and a stored token (when there is one). */
const checkKey = (backupFile: string, key: SecretKey.SecretKey, source: string): void => {
  const cipher = SecretKey.cipher(key)
  const db = new BetterSqlite3(backupFile, { readonly: true, fileMustExist: true })
  try {
    const has = (table: string) =>
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").all(table).length > 0
    if (!has("botrelay_migrations")) throw failed(`${backupFile} is not a Botrelay database`)
    const check = has("botrelay_secret_key")
      ? (db.prepare("SELECT check_value FROM botrelay_secret_key WHERE id = 1").get() as
        | { check_value: string }
        | undefined)?.check_value
      : undefined
    const token = has("botrelay_bots")
      ? (db.prepare("SELECT token FROM botrelay_bots WHERE token <> '' ORDER BY id LIMIT 1").get() as
        | { token: string }
        | undefined)?.token
      : undefined
    try {
      if (check !== undefined && cipher.decrypt("check", check) !== SecretKey.checkPlaintext) throw new Error()
      if (token !== undefined) cipher.decrypt("token", token)
    } catch {
      throw failed(
        `the secret key from ${source} does not decrypt the tokens in ${backupFile}; restore with the key the ` +
          `backup was made with (its ${keyFileOf(backupFile)}, or BOTRELAY_SECRET_KEY)`
      )
    }
  } finally {
    db.close()
  }
}

/** The key the restored database will be opened with, and the key file to put beside it (if any). */
const keyForRestore = (
  from: string,
  database: string,
  secretKey: SecretKey.SecretKey | undefined,
  force: boolean
): { readonly key: SecretKey.SecretKey; readonly source: string; readonly install: string | undefined } => {
  if (secretKey !== undefined) return { key: secretKey, source: "BOTRELAY_SECRET_KEY", install: undefined }
  const beside = keyFileOf(from)
  const target = SecretKey.keyFileFor(database)
  if (existsSync(beside)) {
    const key = SecretKey.readFile(beside)
    const same = existsSync(target) && SecretKey.toHex(SecretKey.readFile(target)) === SecretKey.toHex(key)
    if (existsSync(target) && !same && !force) {
      throw failed(
        `${target} holds another secret key than ${beside}; pass --force to replace it (other databases in ` +
          `${dirname(target)} would then need their own key)`
      )
    }
    return { key, source: `the key file ${beside}`, install: same ? undefined : beside }
  }
  if (existsSync(target)) return { key: SecretKey.readFile(target), source: `the key file ${target}`, install: undefined }
  throw failed(
    `there is no key file ${beside} beside the backup, no ${target} and no BOTRELAY_SECRET_KEY: the backup's ` +
      "tokens could not be read"
  )
}

/**
 * Replaces the SQLite database `database` with the backup `from`, holding the server's lock on it throughout
 * (a running server refuses it). Refuses a database with any row outside the migrations table unless `force`,
 * and a key that does not decrypt the backup's tokens; nothing is changed when it refuses or fails.
 */
export const restore = (options: {
  readonly from: string
  readonly database: string
  readonly force: boolean
  readonly secretKey: SecretKey.SecretKey | undefined
}): Effect.Effect<{ readonly keyFile: string | undefined }, BackupError | DatabaseLock.DatabaseInUse | DatabaseLock.LockFileError> =>
  Effect.scoped(Effect.gen(function*() {
    const { database, force, from } = options
    if (!existsSync(from)) return yield* failed(`there is no backup at ${from}`)
    yield* DatabaseLock.acquire(database)
    const plan = yield* Effect.try({
      try: () => {
        if (existsSync(database) && statSync(database).size > 0) {
          const filled = tablesWithRows(database)
          if (filled.length > 0 && !force) {
            throw failed(
              `${database} is not empty (${filled.slice(0, 3).join(", ")}${filled.length > 3 ? ", …" : ""} hold rows); ` +
                "pass --force to replace it"
            )
          }
        }
        const key = keyForRestore(from, database, options.secretKey, force)
        checkKey(from, key.key, key.source)
        return key
      },
      catch: (e) => e instanceof BackupError ? e : failed(causeOf(e))
    })
    const scratch = yield* Effect.try({
      try: () => scratchFor(database),
      catch: (e) => failed(`cannot write in ${dirname(database)}: ${causeOf(e)}`)
    })
    yield* copyDatabase(from, scratch).pipe(
      Effect.zipRight(Effect.try({
        try: () => {
          if (plan.install !== undefined) {
            const target = SecretKey.keyFileFor(database)
            const keyScratch = `${scratch}.key`
            closeSync(openSync(keyScratch, "w", 0o600))
            copyFileSync(plan.install, keyScratch)
            chmodSync(keyScratch, 0o600)
            renameSync(keyScratch, target)
          }
          for (const companion of ["-wal", "-shm", "-journal"]) rmSync(`${database}${companion}`, { force: true })
          renameSync(scratch, database)
        },
        catch: (e) => failed(`cannot replace ${database}: ${causeOf(e)}`)
      })),
      Effect.ensuring(Effect.sync(() => {
        rmSync(scratch, { force: true })
        rmSync(`${scratch}.key`, { force: true })
      }))
    )
    return { keyFile: plan.install === undefined ? undefined : SecretKey.keyFileFor(database) }
  }))
