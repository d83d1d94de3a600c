import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import {
  ApiKeys,
  BackendPolicy,
  BotActivity,
  Bots,
  Deliveries,
  type Errors,
  FloodControl,
  LlmRouter,
  LlmSettings,
  LongPoll,
  Messages,
  Routes,
  type Stores,
  Supervisor,
  Tags,
  Webhook
} from "@botrelay/core"
import { SecretKey, SqliteStores } from "@botrelay/sqlite"
import { type HttpExchange, TelegramClient } from "@botrelay/telegram"
import { Effect, Layer, Option, Redacted } from "effect"
import * as NodeHttpExchange from "./NodeHttpExchange.js"

/** How a Botrelay instance is set up: where it keeps its data, which Telegram it talks to, and its runtime. */
export interface Options {
  /**
   * The SQLite file (its folder is created; `":memory:"` keeps nothing), or a better-sqlite3 `Database`
   * the host opened: Botrelay adds its `botrelay_*` tables and never closes it.
   */
  readonly database: string | SqliteStores.SqliteDatabase
  /**
   * The key that encrypts bot tokens, webhook secrets and the LLM key at rest: 64 hexadecimal characters.
   * Without it the key is read from `secret.key` beside the database file, generated (mode 0600) on
   * first start; an in-memory database gets a new key each time.
   */
  readonly secretKey?: string | Redacted.Redacted<string> | undefined
  /** How error messages name where `secretKey` came from; "the secretKey option" by default. */
  readonly secretKeySource?: string | undefined
  /** The Bot API root; `https://api.telegram.org` by default. */
  readonly telegramApi?: string | undefined
  /**
   * Where Telegram reaches this instance's webhook ingress, path prefix included
   * (`https://example.com/botrelay`); without it, bots in webhook mode get no updates.
   */
  readonly publicUrl?: string | undefined
  /** How long bots' long-poll buffers keep unconfirmed updates. */
  readonly longPoll?: Partial<LongPoll.Options> | undefined
  /** LLM router settings that the API cannot change. */
  readonly llm?: LlmSettings.Overrides | undefined
  /** Polling, delivery, routing and housekeeping timings; `Supervisor.defaults` when omitted. */
  readonly runtime?: Supervisor.Options | undefined
  /**
   * Which addresses backend URLs may reach: by default URLs set through /tgapi `setWebhook` reach
   * public addresses only, URLs an admin set reach any (`mode: "strict"` holds them to public ones
   * too; `allowPrivate: true` lets every URL reach private ones).
   */
  readonly backendPolicy?: Partial<BackendPolicy.Policy> | undefined
}

/** The default Bot API root. */
export const telegramApi = "https://api.telegram.org"

const isFile = (database: string) => database !== ":memory:" && database !== ""

/** The errors of opening storage: a migration that failed, a secret key that does not fit, storage itself. */
export type StorageOpenError = SqliteStores.MigrationError | SqliteStores.SecretKeyError | Errors.StorageError

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
 * SQLite storage: on a file (creating its folder, mode 0700) or on a database the host opened; secrets
 * encrypted with `secretKey` or the key file beside the database.
 */
export const storageLayer = (
  database: Options["database"],
  secret: Pick<Options, "secretKey" | "secretKeySource"> = {}
): Layer.Layer<Stores.Stores, StorageOpenError> =>
  Layer.unwrapEffect(Effect.map(keyOptions(secret), (keys) => {
    if (typeof database !== "string") return SqliteStores.layer({ database, ...keys })
    if (isFile(database)) mkdirSync(dirname(database), { recursive: true, mode: 0o700 })
    return SqliteStores.layer({ filename: database, ...keys })
  }))

/** Everything an instance runs: the services, the runtime (polling, pipeline, deliveries, routes) and their storage. */
export type Services =
  | Bots.Bots
  | Routes.Routes
  | Messages.Messages
  | Tags.Tags
  | ApiKeys.ApiKeys
  | Supervisor.Supervisor
  | LongPoll.LongPoll
  | Deliveries.Deliveries
  | LlmSettings.LlmSettings
  | LlmRouter.LlmRouter
  | BotActivity.BotActivity
  | BackendPolicy.BackendPolicy
  | TelegramClient.TelegramClient
  | HttpExchange.HttpExchange
  | Stores.Stores

/**
 * The services and the runtime on SQLite and node:http: the runtime starts when the layer is built and
 * stops when it is released.
 */
export const servicesLayer = (
  options: Options
): Layer.Layer<Services, StorageOpenError> => {
  const runtime: Supervisor.Options = {
    ...(options.runtime ?? Supervisor.defaults),
    publicUrl: options.publicUrl ?? options.runtime?.publicUrl
  }
  return Layer.mergeAll(
    Bots.layer.pipe(Layer.provide(Layer.succeed(Webhook.PublicUrl, Option.fromNullable(runtime.publicUrl)))),
    Routes.layer,
    Messages.layer,
    Tags.layer,
    ApiKeys.layer,
    Deliveries.layer
  ).pipe(
    Layer.provideMerge(Supervisor.layer(runtime)),
    Layer.provideMerge(LlmRouter.layer),
    Layer.provideMerge(LlmSettings.layer(options.llm ?? {})),
    Layer.provideMerge(LongPoll.layer({ ...LongPoll.defaults, ...options.longPoll })),
    Layer.provideMerge(TelegramClient.layerHttpExchange({ apiRoot: options.telegramApi ?? telegramApi })),
    Layer.provideMerge(storageLayer(options.database, options)),
    Layer.provideMerge(BotActivity.layer),
    Layer.provideMerge(FloodControl.layer()),
    Layer.provideMerge(NodeHttpExchange.layer),
    Layer.provideMerge(Layer.succeed(BackendPolicy.BackendPolicy, {
      mode: options.backendPolicy?.mode ?? "default",
      allowPrivate: options.backendPolicy?.allowPrivate ?? false
    }))
  )
}
