import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { type Errors, type PasswordHasher, Runtime, type Stores } from "@botrelay/core"
import type { PostgresStores } from "@botrelay/postgres"
import { SecretKey, SqliteStores } from "@botrelay/sqlite"
import type { HttpExchange } from "@botrelay/telegram"
import { Effect, Layer, Redacted } from "effect"
import * as NodeHttpExchange from "./NodeHttpExchange.js"
import * as NodePasswordHasher from "./NodePasswordHasher.js"

/** How a Botrelay instance is set up: where it keeps its data, which Telegram it talks to, and its runtime. */
export interface Options extends Runtime.Config {
  /**
   * A PostgreSQL URL (`postgres://` or `postgresql://`); else the SQLite file (its folder is created;
   * `":memory:"` keeps nothing), or a better-sqlite3 `Database` the host opened: Botrelay adds its
   * `botrelay_*` tables and never closes it.
   */
  readonly database: string | SqliteStores.SqliteDatabase
  /** The most connections of the PostgreSQL pool; 10 by default. Unused with SQLite. */
  readonly databasePool?: number | undefined
  /**
   * The key that encrypts bot tokens, webhook secrets and the LLM key at rest: 64 hexadecimal characters.
   * Required with PostgreSQL (the same on every instance). With SQLite, without it the key is read from
   * `secret.key` beside the database file, generated (mode 0600) on first start; an in-memory database
   * gets a new key each time.
   */
  readonly secretKey?: string | Redacted.Redacted<string> | undefined
  /** How error messages name where `secretKey` came from; "the secretKey option" by default. */
  readonly secretKeySource?: string | undefined
}

/** The default Bot API root. */
export const telegramApi = Runtime.telegramApi

const isFile = (database: string) => database !== ":memory:" && database !== ""

/** Whether `database` selects PostgreSQL: a `postgres://` or `postgresql://` URL; anything else is SQLite. */
export const isPostgresUrl = (database: Options["database"]): database is string =>
  typeof database === "string" && /^postgres(ql)?:\/\//i.test(database)

/**
 * The errors of opening storage: a database that cannot be reached (PostgreSQL), a migration that failed, a
 * secret key that does not fit or is missing, storage itself.
 */
export type StorageOpenError =
  | PostgresStores.ConnectionError
  | PostgresStores.MigrationError
  | SqliteStores.MigrationError
  | SqliteStores.SecretKeyError
  | Errors.StorageError

/** The key options of the SQLite driver from `secretKey`; fails when it is not 64 hexadecimal characters. */
const keyOptions = (
  secret: Pick<Options, "secretKey" | "secretKeySource">
): Effect.Effect<SqliteStores.KeyOptions, SqliteStores.SecretKeyError> => {
  if (secret.secretKey === undefined) return Effect.succeed({})
  const source = secret.secretKeySource ?? "the secretKey option"
  const key = SecretKey.fromHex(
    typeof secret.secretKey === "string" ? secret.secretKey : Redacted.value(secret.secretKey)
  )
  return key === undefined
    ? Effect.fail(
      new SecretKey.SecretKeyError({ reason: "invalid", detail: `${source} must be 64 hexadecimal characters` })
    )
    : Effect.succeed({ secretKey: key, secretKeySource: source })
}

/**
 * The storage `database` selects: PostgreSQL for a `postgres://` or `postgresql://` URL (a pool of `pool`
 * connections; `secretKey` required), else SQLite on a file (creating its folder, mode 0700) or on a database
 * the host opened, secrets encrypted with `secretKey` or the key file beside the database.
 */
export const storageLayer = (
  database: Options["database"],
  secret: Pick<Options, "secretKey" | "secretKeySource"> = {},
  pool?: number
): Layer.Layer<Stores.Stores, StorageOpenError> =>
  Layer.unwrapEffect(Effect.flatMap(keyOptions(secret), (keys) => {
    if (isPostgresUrl(database)) {
      const secretKey = keys.secretKey
      return secretKey === undefined
        ? Effect.fail(
          new SecretKey.SecretKeyError({
            reason: "invalid",
            detail: `a secret key (${secret.secretKeySource ?? "the secretKey option"}: 64 hexadecimal characters) ` +
              "is required with PostgreSQL: there is no key file, and every instance must use the same key"
          })
        )
        : Effect.map(
          // loaded only for PostgreSQL: a SQLite instance does without the driver and pg
          Effect.promise(() => import("@botrelay/postgres")),
          ({ PostgresStores }) =>
            PostgresStores.layer({
              url: database,
              pool,
              secretKey,
              secretKeySource: keys.secretKeySource
            })
        )
    }
    if (typeof database !== "string") return Effect.succeed(SqliteStores.layer({ database, ...keys }))
    if (isFile(database)) mkdirSync(dirname(database), { recursive: true, mode: 0o700 })
    return Effect.succeed(SqliteStores.layer({ filename: database, ...keys }))
  }))

/** Everything an instance runs: the services and the runtime, their stores, HTTP client and password hasher. */
export type Services = Runtime.Services | HttpExchange.HttpExchange | Stores.Stores | PasswordHasher.PasswordHasher

/**
 * `Runtime.layer` on SQLite or PostgreSQL, node:http and Argon2id: the runtime starts when the layer is built and stops
 * when it is released. Fails with `InvalidInput` when `instanceId` is not a valid instance id.
 */
export const servicesLayer = (options: Options): Layer.Layer<Services, StorageOpenError | Errors.InvalidInput> =>
  Runtime.layer(options).pipe(
    Layer.provideMerge(storageLayer(options.database, options, options.databasePool)),
    Layer.provideMerge(NodeHttpExchange.layer),
    Layer.provideMerge(NodePasswordHasher.layer)
  )
