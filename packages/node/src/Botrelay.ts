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
  type Storage,
  Supervisor,
  Tags,
  Webhook
} from "@botrelay/core"
import { SqliteStorage } from "@botrelay/sqlite"
import { type HttpExchange, TelegramClient } from "@botrelay/telegram"
import { Effect, Layer, Option } from "effect"
import * as NodeHttpExchange from "./NodeHttpExchange.js"

/** How a Botrelay instance is set up: where it keeps its data, which Telegram it talks to, and its runtime. */
export interface Options {
  /**
   * The SQLite file (its folder is created; `":memory:"` keeps nothing), or a better-sqlite3 `Database`
   * the host opened: Botrelay adds its `botrelay_*` tables and never closes it.
   */
  readonly database: string | SqliteStorage.SqliteDatabase
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

/** SQLite storage: on a file (creating its folder) or on a database the host opened. */
export const storageLayer = (
  database: Options["database"]
): Layer.Layer<Storage.Storage, SqliteStorage.MigrationError | Errors.StorageError> =>
  typeof database === "string"
    ? Layer.unwrapEffect(Effect.sync(() => {
      if (isFile(database)) mkdirSync(dirname(database), { recursive: true })
      return SqliteStorage.layer({ filename: database })
    }))
    : SqliteStorage.layer({ database })

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
  | Storage.Storage

/**
 * The services and the runtime on SQLite and node:http: the runtime starts when the layer is built and
 * stops when it is released.
 */
export const servicesLayer = (
  options: Options
): Layer.Layer<Services, SqliteStorage.MigrationError | Errors.StorageError> => {
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
    Layer.provideMerge(storageLayer(options.database)),
    Layer.provideMerge(BotActivity.layer),
    Layer.provideMerge(FloodControl.layer()),
    Layer.provideMerge(NodeHttpExchange.layer),
    Layer.provideMerge(Layer.succeed(BackendPolicy.BackendPolicy, {
      mode: options.backendPolicy?.mode ?? "default",
      allowPrivate: options.backendPolicy?.allowPrivate ?? false
    }))
  )
}
