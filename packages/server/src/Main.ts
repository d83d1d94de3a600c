import { chmodSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import {
  Accounts,
  ApiKeys,
  AuditLog,
  Bots,
  type Errors,
  type LlmSettings,
  StoreLock,
  type Stores,
  Supervisor
} from "@botrelay/core"
import { App, RateLimit } from "@botrelay/http"
import { Botrelay, NodeHandler } from "@botrelay/node"
import { Console, Duration, Effect, Layer, Logger, Option, Redacted } from "effect"
import type { Config } from "./Config.js"
import * as DatabaseLock from "./DatabaseLock.js"
import * as LogFormat from "./LogFormat.js"
import * as MetricsExposition from "./MetricsExposition.js"

const inMemory = (database: string) => database === ":memory:" || database === ""

/** Whether the database has no data dir: in memory, or on PostgreSQL. */
const noDataDir = (database: string) => inMemory(database) || Botrelay.isPostgresUrl(database)

/** The secret key options: `BOTRELAY_SECRET_KEY` when set, else the key file beside the database. */
const secretKeyOptions = (config: Partial<Pick<Config, "secretKey">>) =>
  config.secretKey === undefined ? {} : { secretKey: config.secretKey, secretKeySource: "BOTRELAY_SECRET_KEY" }

/**
 * The configured storage: PostgreSQL for a URL, else SQLite on the file (creating its folder); secrets
 * encrypted with the configured key.
 */
export const storageLayer = (
  config: Pick<Config, "database" | "secretKey"> & Partial<Pick<Config, "databasePool">>
): Layer.Layer<Stores.Stores, Botrelay.StorageOpenError> =>
  Botrelay.storageLayer(config.database, secretKeyOptions(config), config.databasePool)

/** The server package's version: what this instance reports in `GET /api/status`. */
export const version: string = (createRequire(import.meta.url)("@botrelay/server/package.json") as {
  readonly version: string
}).version

/** The LLM router's fixed settings: those the environment sets. */
const llmOverrides = (
  config: Partial<Pick<Config, "llmBaseUrl" | "llmApiKey" | "llmModel" | "llmTimeoutMs">>
): LlmSettings.Overrides => ({
  ...(config.llmBaseUrl === undefined ? {} : { base_url: config.llmBaseUrl }),
  ...(config.llmApiKey === undefined ? {} : { api_key: config.llmApiKey }),
  ...(config.llmModel === undefined ? {} : { model: config.llmModel }),
  ...(config.llmTimeoutMs === undefined ? {} : { timeout_ms: config.llmTimeoutMs })
})

/** The instance options the configuration sets; the library defaults for what it does not. */
export const botrelayOptions = (
  config:
    & Pick<Config, "database" | "telegramApi">
    & Partial<
      Pick<
        Config,
        | "instanceId"
        | "databasePool"
        | "secretKey"
        | "publicUrl"
        | "bufferMaxUpdates"
        | "bufferMaxAge"
        | "routeMappingTtl"
        | "llmBaseUrl"
        | "llmApiKey"
        | "llmModel"
        | "llmTimeoutMs"
        | "backendPolicy"
        | "backendAllowPrivate"
        | "eventsHeartbeat"
        | "eventsMaxPending"
        | "eventsRetention"
        | "eventsKeep"
        | "sessionIdleTimeout"
        | "sessionMaxAge"
        | "auditRetention"
        | "deliveryMaxAge"
      >
    >,
  runtime: Supervisor.Options = Supervisor.defaults
): Botrelay.Options => ({
  database: config.database,
  instanceId: config.instanceId,
  version,
  databasePool: config.databasePool,
  ...secretKeyOptions(config),
  telegramApi: config.telegramApi,
  publicUrl: config.publicUrl,
  longPoll: {
    ...(config.bufferMaxUpdates === undefined ? {} : { maxUpdates: config.bufferMaxUpdates }),
    ...(config.bufferMaxAge === undefined ? {} : { maxAge: Duration.seconds(config.bufferMaxAge) })
  },
  llm: llmOverrides(config),
  backendPolicy: {
    ...(config.backendPolicy === undefined ? {} : { mode: config.backendPolicy }),
    ...(config.backendAllowPrivate === undefined ? {} : { allowPrivate: config.backendAllowPrivate })
  },
  events: {
    ...(config.eventsHeartbeat === undefined ? {} : { heartbeat: Duration.seconds(config.eventsHeartbeat) }),
    ...(config.eventsMaxPending === undefined ? {} : { maxPending: config.eventsMaxPending }),
    ...(config.eventsRetention === undefined ? {} : { retention: Duration.seconds(config.eventsRetention) }),
    ...(config.eventsKeep === undefined ? {} : { keep: config.eventsKeep })
  },
  accounts: {
    ...(config.sessionIdleTimeout === undefined ? {} : { idleTimeout: Duration.seconds(config.sessionIdleTimeout) }),
    ...(config.sessionMaxAge === undefined ? {} : { maxAge: Duration.seconds(config.sessionMaxAge) })
  },
  audit: config.auditRetention === undefined ? {} : { retention: Duration.seconds(config.auditRetention) },
  runtime: {
    ...runtime,
    ...(config.routeMappingTtl === undefined ? {} : { routing: { mappingTtl: Duration.seconds(config.routeMappingTtl) } }),
    ...(config.deliveryMaxAge === undefined
      ? {}
      : { outbox: { ...runtime.outbox, maxAge: Duration.seconds(config.deliveryMaxAge) } })
  }
})

/** Where the generated admin key is written. */
export const adminKeyFile = (database: string) => join(dirname(database), "admin.key")

/** An argument as a POSIX shell reads it back. */
const shellWord = (word: string) => /^[\w./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/** How to create the first admin account, for the startup output. */
export const firstAccountHint = (database: string): string =>
  inMemory(database)
    ? "no console account exists; the database is in memory, so create one with POST /api/accounts and an admin key"
    : Botrelay.isPostgresUrl(database)
    ? "no console account exists yet; create the first admin with: botrelay accounts create --username NAME " +
      "--role admin (with BOTRELAY_DATABASE and BOTRELAY_SECRET_KEY set as for the server)"
    : `no console account exists yet; create the first admin with: botrelay accounts create --database ${
      shellWord(database)
    } --username NAME --role admin`

/** Records, as Botrelay's own doing, the creation of the admin key with this secret. */
const recordKeyCreated = (keys: ApiKeys.ApiKeysService, secret: Redacted.Redacted<string>) =>
  keys.identify(secret).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.void,
      onSome: (key) =>
        AuditLog.recordDone(AuditLog.system, "keys.create", {
          target_type: "key",
          target_id: key.id,
          details: { name: key.name, role: key.role }
        })
    }))
  )

/**
 * First-start duties: the configured admin key exists; with no key at all, one is generated,
 * printed once and written to `<data dir>/admin.key` (mode 0600); with no account, how to create the
 * first admin is printed; the command-line bot is registered. Under the storage-wide lock, so instances
 * starting together on one PostgreSQL database do them once.
 */
export const bootstrap = (
  config: Pick<Config, "adminKey" | "botToken" | "database">
): Effect.Effect<
  void,
  Errors.InvalidInput | Errors.StorageError,
  ApiKeys.ApiKeys | Accounts.Accounts | AuditLog.AuditLog | Bots.Bots | StoreLock.StoreLock
> =>
  Effect.flatMap(StoreLock.StoreLock, (lock) => lock.exclusive("bootstrap", Effect.gen(function*() {
    const keys = yield* ApiKeys.ApiKeys
    if (config.adminKey !== undefined) {
      const created = yield* keys.ensureAdmin(config.adminKey, "admin (BOTRELAY_ADMIN_KEY)")
      if (created) {
        yield* recordKeyCreated(keys, config.adminKey)
        yield* Effect.logInfo("admin key from BOTRELAY_ADMIN_KEY registered")
      }
    } else if (!(yield* keys.any)) {
      const secret = yield* ApiKeys.generateKey
      yield* keys.ensureAdmin(secret, "admin (generated)")
      yield* recordKeyCreated(keys, secret)
      const file = noDataDir(config.database) ? undefined : adminKeyFile(config.database)
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
    if (!(yield* Effect.flatMap(Accounts.Accounts, (accounts) => accounts.any))) {
      yield* Effect.logInfo(firstAccountHint(config.database))
    }
    if (config.botToken !== undefined) {
      const bot = yield* Bots.Bots.pipe(Effect.flatMap((bots) => bots.ensureCli(config.botToken!)))
      yield* Effect.logInfo("command-line bot registered").pipe(Effect.annotateLogs({ bot_id: bot.id }))
    }
  }))).pipe(Effect.withSpan("bootstrap"))

/**
 * The socket: a node:http server with the configured limits whose request listener is the embedding
 * handler (see NodeHandler): the proxy's hottest calls are served before the app (see ProxyFastPath),
 * the bodies the app reads whole are read first, within their limits (see BodyGuard), the rest goes to the app.
 */
const nodeServer = (
  config: Pick<
    Config,
    "port" | "host" | "httpMaxConnections" | "httpHeadersTimeout" | "httpBodyTimeout" | "httpRequestTimeout"
  >
) =>
  Layer.scoped(
    HttpServer.HttpServer,
    Effect.gen(function*() {
      const handler = yield* NodeHandler.make({
        body: { maxBytes: App.maxBodyBytes, timeoutMs: config.httpBodyTimeout * 1000 }
      })
      return yield* NodeHttpServer.make(() => {
        const server = createServer({
          headersTimeout: config.httpHeadersTimeout * 1000,
          requestTimeout: Math.max(config.httpRequestTimeout, config.httpHeadersTimeout) * 1000,
          connectionsCheckingInterval: 1000
        }, (req, res) => handler(req, res))
        server.maxConnections = config.httpMaxConnections
        return server
      }, { port: config.port, host: config.host })
    })
  )

/** Where a person opens the console: the public URL when set, else the socket's address (a wildcard host as 127.0.0.1). */
export const consoleUrl = (address: HttpServer.Address, publicUrl: string | undefined) =>
  publicUrl !== undefined
    ? `${publicUrl}/`
    : address._tag === "TcpAddress"
    ? `http://${
      address.hostname === "0.0.0.0" || address.hostname === "::" ? "127.0.0.1" : address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname
    }:${address.port}/`
    : HttpServer.formatAddress(address)

/** Prints the console's URL once the socket listens (the `serve` command's startup output). */
export const printConsoleUrl = (publicUrl: string | undefined): Layer.Layer<never, never, HttpServer.HttpServer> =>
  Layer.effectDiscard(
    HttpServer.addressWith((address) => Console.log(`\nConsole: ${consoleUrl(address, publicUrl)}\n`))
  )

/** Why the server cannot start. */
export type StartError =
  | HttpServerError.ServeError
  | Botrelay.StorageOpenError
  | Errors.InvalidInput
  | Errors.StorageError
  | DatabaseLock.DatabaseInUse
  | DatabaseLock.LockFileError

/**
 * The whole standalone server: the SQLite file's lock (see DatabaseLock), storage, services, first-start
 * duties and the HTTP API on a socket, with the /api rate limits, and traces exported when an OTLP endpoint is
 * set (flushed last). The lock is taken first and released last; storage is opened before the socket and
 * closed after it, so in-flight requests finish first. `runtime` tunes polling and delivery (tests shorten the
 * waits); the services stay reachable (tests use them).
 */
export const layer = (
  config: Config,
  runtime: Supervisor.Options = Supervisor.defaults
): Layer.Layer<HttpServer.HttpServer | Botrelay.Services, StartError> => {
  const services = Layer.effectDiscard(bootstrap(config)).pipe(
    Layer.provideMerge(Botrelay.servicesLayer(botrelayOptions(config, runtime)))
  )
  return NodeHandler.endHeldRequestsOnStop.pipe(
    Layer.provideMerge(
      HttpServer.withLogAddress(nodeServer(config)).pipe(Layer.provide(MetricsExposition.layer(config.metricsToken)))
    ),
    Layer.provide(NodeHandler.proxyLayer(config.telegramApi)),
    Layer.provideMerge(services),
    Layer.provide(DatabaseLock.layer(config.database)),
    Layer.provide(Layer.succeed(RateLimit.Limits, { rate: config.apiRateLimit, burst: config.apiRateBurst })),
    Layer.provide(tracingLayer(config.traces))
  )
}

/** Effect's own tracer, which exports nothing. */
const nativeTracer = Effect.runSync(Effect.tracer)

/**
 * Spans are not made at all while the tracer is Effect's own (no host set one, no traces are exported): it would
 * give each span ids and attributes that nobody reads.
 */
const untraced = Layer.unwrapEffect(
  Effect.map(Effect.tracer, (tracer) => tracer === nativeTracer ? Layer.setTracerEnabled(false) : Layer.empty)
)

/** Exports traces when configured; OpenTelemetry's exporter is loaded only then. */
const tracingLayer = (traces: Config["traces"]) =>
  traces === undefined
    ? untraced
    : Layer.unwrapEffect(Effect.map(Effect.promise(() => import("./Tracing.js")), (Tracing) => Tracing.otlpLayer(traces)))

/** Logs at the configured level, in the configured format (see LogFormat). */
export const loggerLayer = (config: Pick<Config, "logLevel"> & Partial<Pick<Config, "logFormat">>) =>
  Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, LogFormat.logger(LogFormat.resolve(config.logFormat ?? "auto"))),
    Logger.minimumLogLevel(config.logLevel)
  )
