import { mkdirSync, writeFileSync, chmodSync } from "node:fs"
import { createServer } from "node:http"
import { dirname, join } from "node:path"
import { HttpApiBuilder, HttpServer, type HttpServerError } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import {
  ApiKeys,
  BotActivity,
  Bots,
  Deliveries,
  type Errors,
  FloodControl,
  Messages,
  Routes,
  type Storage,
  Supervisor,
  Tags,
  Webhook
} from "@botrelay/core"
import { HttpApp } from "@botrelay/http"
import { SqliteStorage } from "@botrelay/sqlite"
import { TelegramClient } from "@botrelay/telegram"
import { Console, Effect, Layer, Logger, Option, Redacted } from "effect"
import type { Config } from "./Config.js"
import * as NodeHttpPost from "./NodeHttpPost.js"

const inMemory = (database: string) => database === ":memory:" || database === ""

/** SQLite storage on the configured file, creating its folder. */
export const storageLayer = (
  config: Pick<Config, "database">
): Layer.Layer<Storage.Storage, SqliteStorage.MigrationError | Errors.StorageError> =>
  Layer.unwrapEffect(
    Effect.sync(() => {
      if (!inMemory(config.database)) mkdirSync(dirname(config.database), { recursive: true })
      return SqliteStorage.layer({ filename: config.database })
    })
  )

/** The core services on SQLite and the configured Telegram API; webhook mode when a public URL is configured. */
export const servicesLayer = (
  config: Pick<Config, "database" | "telegramApi"> & Partial<Pick<Config, "publicUrl">>,
  runtime: Supervisor.Options = Supervisor.defaults
): Layer.Layer<
  | Bots.Bots
  | Routes.Routes
  | Messages.Messages
  | Tags.Tags
  | ApiKeys.ApiKeys
  | Supervisor.Supervisor
  | Deliveries.Deliveries
  | BotActivity.BotActivity
  | TelegramClient.TelegramClient
  | Storage.Storage,
  SqliteStorage.MigrationError | Errors.StorageError
> =>
  Layer.mergeAll(
    Bots.layer.pipe(Layer.provide(Layer.succeed(Webhook.PublicUrl, Option.fromNullable(config.publicUrl)))),
    Routes.layer, Messages.layer, Tags.layer, ApiKeys.layer, Deliveries.layer).pipe(
    Layer.provideMerge(Supervisor.layer({ ...runtime, publicUrl: config.publicUrl ?? runtime.publicUrl })),
    Layer.provideMerge(TelegramClient.layerHttpPost({ apiRoot: config.telegramApi })),
    Layer.provideMerge(storageLayer(config)),
    Layer.provideMerge(BotActivity.layer),
    Layer.provideMerge(FloodControl.layer()),
    Layer.provideMerge(NodeHttpPost.layer)
  )

/** Where the generated admin key is written. */
export const adminKeyFile = (database: string) => join(dirname(database), "admin.key")

/**
 * First-start duties: the configured admin key exists; with no key at all, one is generated,
 * printed once and written to `<data dir>/admin.key` (mode 0600); the command-line bot is registered.
 */
export const bootstrap = (
  config: Pick<Config, "adminKey" | "botToken" | "database">
): Effect.Effect<void, Errors.InvalidInput | Errors.StorageError, ApiKeys.ApiKeys | Bots.Bots> =>
  Effect.gen(function*() {
    const keys = yield* ApiKeys.ApiKeys
    if (config.adminKey !== undefined) {
      const created = yield* keys.ensureAdmin(config.adminKey, "admin (BOTRELAY_ADMIN_KEY)")
      if (created) yield* Effect.logInfo("admin key from BOTRELAY_ADMIN_KEY registered")
    } else if (!(yield* keys.any)) {
      const secret = yield* ApiKeys.generateKey
      yield* keys.ensureAdmin(secret, "admin (generated)")
      const file = inMemory(config.database) ? undefined : adminKeyFile(config.database)
      if (file !== undefined) {
        yield* Effect.sync(() => {
          writeFileSync(file, `${Redacted.value(secret)}\n`, { mode: 0o600 })
          chmodSync(file, 0o600)
        })
      }
      yield* Console.log(
        `\nAdmin API key (shown once${file === undefined ? "" : `, also saved to ${file}`}):\n\n  ${
          Redacted.value(secret)
        }\n\nUse it as: Authorization: Bearer <key>\n`
      )
    }
    if (config.botToken !== undefined) {
      const bot = yield* Bots.Bots.pipe(Effect.flatMap((bots) => bots.ensureCli(config.botToken!)))
      yield* Effect.logInfo("command-line bot registered").pipe(Effect.annotateLogs({ bot_id: bot.id }))
    }
  }).pipe(Effect.withSpan("bootstrap"))

/**
 * The whole standalone server: storage, services, first-start duties and the HTTP API on a socket.
 * Storage is opened before the socket and closed after it, so in-flight requests finish first.
 * `runtime` tunes polling and delivery (tests shorten the waits).
 */
export const layer = (
  config: Config,
  runtime: Supervisor.Options = Supervisor.defaults
): Layer.Layer<
  HttpServer.HttpServer,
  HttpServerError.ServeError | SqliteStorage.MigrationError | Errors.InvalidInput | Errors.StorageError
> => {
  const services = Layer.effectDiscard(bootstrap(config)).pipe(Layer.provideMerge(servicesLayer(config, runtime)))
  return HttpApiBuilder.serve(HttpApp.withBodyLimit).pipe(
    Layer.provide(HttpApp.layer),
    HttpApp.withoutRequestSpans,
    HttpServer.withLogAddress,
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: config.port, host: config.host })),
    Layer.provide(services)
  )
}

/** Structured JSON logs at the configured level. */
export const loggerLayer = (config: Pick<Config, "logLevel">) =>
  Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(Logger.jsonLogger)),
    Logger.minimumLogLevel(config.logLevel)
  )
