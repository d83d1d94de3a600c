import { parseArgs } from "node:util"
import { Bot, Status } from "@botrelay/core"
import { LogLevel, Redacted } from "effect"
import type * as Tracing from "./Tracing.js"

/** The standalone server's configuration; flags override environment variables. */
export interface Config {
  readonly port: number
  readonly host: string
  /** A SQLite file, or a `postgres://` / `postgresql://` URL. */
  readonly database: string
  /** This instance's id (`X-Botrelay-Instance`); a new random one at each start when unset. */
  readonly instanceId: string | undefined
  /** `BOTRELAY_DATABASE_POOL`: the most connections of the PostgreSQL pool. */
  readonly databasePool: number
  /**
   * `BOTRELAY_SECRET_KEY`: 64 hexadecimal characters; without it, the key file beside the (SQLite) database.
   * Required with PostgreSQL.
   */
  readonly secretKey: Redacted.Redacted<string> | undefined
  readonly telegramApi: string
  readonly adminKey: Redacted.Redacted<string> | undefined
  readonly publicUrl: string | undefined
  readonly botToken: Redacted.Redacted<string> | undefined
  readonly logLevel: LogLevel.LogLevel
  /** `BOTRELAY_LOG_FORMAT`: JSON lines, readable lines, or (auto) readable on a terminal and JSON otherwise. */
  readonly logFormat: "auto" | "json" | "pretty"
  /** `BOTRELAY_METRICS_TOKEN`: a Bearer token (at least 32 characters) that may read `/metrics`. */
  readonly metricsToken: Redacted.Redacted<string> | undefined
  /** The most unconfirmed updates a bot's long-poll buffer keeps. */
  readonly bufferMaxUpdates: number
  /** How long, in seconds, a bot's long-poll buffer keeps an unconfirmed update. */
  readonly bufferMaxAge: number
  /** How long, in seconds, replies to a routed message travel back to its sender. */
  readonly routeMappingTtl: number
  /** The LLM router's settings from the environment; each one set here cannot be changed through the API. */
  readonly llmBaseUrl: string | undefined
  readonly llmApiKey: Redacted.Redacted<string> | undefined
  readonly llmModel: string | undefined
  readonly llmTimeoutMs: number | undefined
  /** The most connections the server keeps open at once. */
  readonly httpMaxConnections: number
  /** How long, in seconds, a client may take to send a request's headers. */
  readonly httpHeadersTimeout: number
  /** How long, in seconds, a client may take to send a body read whole (/api, webhooks, local /tgapi methods). */
  readonly httpBodyTimeout: number
  /** How long, in seconds, a client may take to send a whole request, uploads through /tgapi included. */
  readonly httpRequestTimeout: number
  /** `strict`: backend URLs an admin set must reach public addresses too. */
  readonly backendPolicy: "default" | "strict"
  /** Every backend URL may reach loopback, private, link-local and this host's own addresses. */
  readonly backendAllowPrivate: boolean
  /** How often, in seconds, a live event stream sends a heartbeat comment. */
  readonly eventsHeartbeat: number
  /** A live event stream with more events than this waiting to be sent is cut off. */
  readonly eventsMaxPending: number
  /** How long, in seconds, the event log keeps events for replay... */
  readonly eventsRetention: number
  /** ...and how many of the newest it keeps, whatever their age. */
  readonly eventsKeep: number
  /** How long, in seconds, an unused console session lasts... */
  readonly sessionIdleTimeout: number
  /** ...and how long, in seconds, one lasts after its login, however much it is used. */
  readonly sessionMaxAge: number
  /** How long, in seconds, the audit log keeps entries. */
  readonly auditRetention: number
  /** How long, in seconds, a delivery to a backend is retried before it is dead. */
  readonly deliveryMaxAge: number
  /** /api requests a second refilled per caller (key, account, anonymous IP); 0: no limit. */
  readonly apiRateLimit: number
  /** ...and how many a caller may make at once. */
  readonly apiRateBurst: number
  /** Trace export from the `OTEL_*` variables: set when an OTLP endpoint is. */
  readonly traces: Tracing.Settings | undefined
}

/** A configuration value that cannot be used; the message names the setting and never its secret value. */
export class ConfigError extends Error {}

/** Every setting: its flag, its environment variable and its default. */
export const settings = {
  port: { flag: "port", env: "BOTRELAY_PORT", default: "8080" },
  host: { flag: "host", env: "BOTRELAY_HOST", default: "0.0.0.0" },
  database: { flag: "database", env: "BOTRELAY_DATABASE", default: "./data/botrelay.db" },
  instanceId: { flag: "instance-id", env: "BOTRELAY_INSTANCE_ID", default: undefined, shown: "a new random id" },
  databasePool: { flag: "database-pool", env: "BOTRELAY_DATABASE_POOL", default: "10" },
  telegramApi: { flag: "telegram-api", env: "BOTRELAY_TELEGRAM_API", default: "https://api.telegram.org" },
  adminKey: { flag: "admin-key", env: "BOTRELAY_ADMIN_KEY", default: undefined },
  publicUrl: { flag: "public-url", env: "BOTRELAY_PUBLIC_URL", default: undefined },
  botToken: { flag: "token", env: "BOTRELAY_BOT_TOKEN", default: undefined },
  logLevel: { flag: "log-level", env: "BOTRELAY_LOG_LEVEL", default: "info" },
  logFormat: { flag: "log-format", env: "BOTRELAY_LOG_FORMAT", default: "auto" },
  metricsToken: { flag: "metrics-token", env: "BOTRELAY_METRICS_TOKEN", default: undefined },
  bufferMaxUpdates: { flag: "buffer-max-updates", env: "BOTRELAY_BUFFER_MAX_UPDATES", default: "10000" },
  bufferMaxAge: { flag: "buffer-max-age", env: "BOTRELAY_BUFFER_MAX_AGE", default: "24h" },
  routeMappingTtl: { flag: "route-mapping-ttl", env: "BOTRELAY_ROUTE_MAPPING_TTL", default: "30d" },
  llmBaseUrl: { flag: "llm-base-url", env: "BOTRELAY_LLM_BASE_URL", default: undefined },
  llmApiKey: { flag: "llm-api-key", env: "BOTRELAY_LLM_API_KEY", default: undefined },
  llmModel: { flag: "llm-model", env: "BOTRELAY_LLM_MODEL", default: undefined },
  llmTimeout: { flag: "llm-timeout", env: "BOTRELAY_LLM_TIMEOUT", default: undefined },
  httpMaxConnections: { flag: "http-max-connections", env: "BOTRELAY_HTTP_MAX_CONNECTIONS", default: "4096" },
  httpHeadersTimeout: { flag: "http-headers-timeout", env: "BOTRELAY_HTTP_HEADERS_TIMEOUT", default: "20s" },
  httpBodyTimeout: { flag: "http-body-timeout", env: "BOTRELAY_HTTP_BODY_TIMEOUT", default: "30s" },
  httpRequestTimeout: { flag: "http-request-timeout", env: "BOTRELAY_HTTP_REQUEST_TIMEOUT", default: "10m" },
  backendPolicy: { flag: "backend-policy", env: "BOTRELAY_BACKEND_POLICY", default: "default" },
  backendAllowPrivate: { flag: "backend-allow-private", env: "BOTRELAY_BACKEND_ALLOW_PRIVATE", default: "false" },
  eventsHeartbeat: { flag: "events-heartbeat", env: "BOTRELAY_EVENTS_HEARTBEAT", default: "15s" },
  eventsMaxPending: { flag: "events-max-pending", env: "BOTRELAY_EVENTS_MAX_PENDING", default: "10000" },
  eventsRetention: { flag: "events-retention", env: "BOTRELAY_EVENTS_RETENTION", default: "24h" },
  eventsKeep: { flag: "events-keep", env: "BOTRELAY_EVENTS_KEEP", default: "100000" },
  sessionIdleTimeout: { flag: "session-idle-timeout", env: "BOTRELAY_SESSION_IDLE_TIMEOUT", default: "7d" },
  sessionMaxAge: { flag: "session-max-age", env: "BOTRELAY_SESSION_MAX_AGE", default: "30d" },
  auditRetention: { flag: "audit-retention", env: "BOTRELAY_AUDIT_RETENTION", default: "365d" },
  deliveryMaxAge: { flag: "delivery-max-age", env: "BOTRELAY_DELIVERY_MAX_AGE", default: "24h" },
  apiRateLimit: { flag: "api-rate-limit", env: "BOTRELAY_API_RATE_LIMIT", default: "20" },
  apiRateBurst: { flag: "api-rate-burst", env: "BOTRELAY_API_RATE_BURST", default: "100" }
} as const

/** The secret key's variable; read from the environment only, so that it never shows in a process list. */
export const secretKeyEnv = "BOTRELAY_SECRET_KEY"

/** The largest `bufferMaxUpdates`. */
const maxBufferUpdates = 1_000_000

const durationUnits: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }

/** Seconds from `90`, `90s`, `15m`, `24h` or `7d`; undefined when it is not a positive whole duration. */
const parseSeconds = (value: string): number | undefined => {
  const match = /^(\d{1,9})([smhd]?)$/.exec(value.trim())
  if (match === null) return undefined
  const seconds = Number(match[1]) * durationUnits[match[2]!]!
  return seconds > 0 && Number.isSafeInteger(seconds) ? seconds : undefined
}

/** Milliseconds from `5000`, `5000ms` or `5s`; undefined when it is not a whole number of them from 100 to 60000. */
const parseTimeoutMs = (value: string): number | undefined => {
  const match = /^(\d{1,6})(ms|s)?$/.exec(value.trim())
  if (match === null) return undefined
  const ms = Number(match[1]) * (match[2] === "s" ? 1000 : 1)
  return ms >= 100 && ms <= 60_000 ? ms : undefined
}

const logLevels: Record<string, LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

const booleans: Record<string, boolean> = { true: true, "1": true, yes: true, false: false, "0": false, no: false }

const isHttpUrl = (value: string) => {
  if (!URL.canParse(value)) return false
  const protocol = new URL(value).protocol
  return protocol === "http:" || protocol === "https:"
}

const samplers: ReadonlyArray<Tracing.Settings["sampler"]> = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio"
]

/**
 * Trace export as the standard `OTEL_*` variables set it: on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is (and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none`), over
 * http/protobuf only. Messages never repeat a value: endpoints and headers may hold credentials.
 */
export const tracesFromEnv = (env: Record<string, string | undefined>): Tracing.Settings | undefined => {
  const get = (name: string) => {
    const value = env[name]?.trim()
    return value === undefined || value === "" ? undefined : value
  }
  if (get("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined
  const exporter = get("OTEL_TRACES_EXPORTER")
  if (exporter === "none") return undefined
  if (exporter !== undefined && exporter !== "otlp") throw new ConfigError("OTEL_TRACES_EXPORTER must be otlp or none")
  const traces = get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
  const endpoint = traces ?? get("OTEL_EXPORTER_OTLP_ENDPOINT")
  if (endpoint === undefined) return undefined
  if (!isHttpUrl(endpoint)) {
    throw new ConfigError(
      `${traces === undefined ? "OTEL_EXPORTER_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} must be an http or https URL`
    )
  }
  const protocol = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? get("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf"
  if (protocol !== "http/protobuf") {
    throw new ConfigError("OTEL_EXPORTER_OTLP_PROTOCOL / OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http/protobuf")
  }
  const resourceAttributes: Record<string, string> = {}
  for (const pair of (get("OTEL_RESOURCE_ATTRIBUTES") ?? "").split(",")) {
    if (pair.trim() === "") continue
    const at = pair.indexOf("=")
    const key = at <= 0 ? "" : pair.slice(0, at).trim()
    if (key === "") throw new ConfigError("OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas")
    try {
      resourceAttributes[key] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      throw new ConfigError("OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas, values percent-encoded")
    }
  }
  const sampler = (get("OTEL_TRACES_SAMPLER") ?? "parentbased_always_on") as Tracing.Settings["sampler"]
  if (!samplers.includes(sampler)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${samplers.join(", ")}`)
  const arg = get("OTEL_TRACES_SAMPLER_ARG")
  const samplerArg = arg === undefined ? 1 : Number(arg)
  if (!Number.isFinite(samplerArg) || samplerArg < 0 || samplerArg > 1) {
    throw new ConfigError("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1")
  }
  return {
    endpoint: traces ?? `${endpoint.replace(/\/+$/, "")}/v1/traces`,
    serviceName: get("OTEL_SERVICE_NAME") ?? resourceAttributes["service.name"] ?? "botrelay",
    resourceAttributes,
    sampler,
    samplerArg
  }
}

/** The option table of `node:util` parseArgs for every setting. */
export const options = Object.fromEntries(
  Object.values(settings).map((s) => [s.flag, { type: "string" as const }])
) as Record<(typeof settings)[keyof typeof settings]["flag"], { type: "string" }>

/** Reads the configuration from parsed flags and the environment; throws `ConfigError` on a bad value. */
export const fromValues = (
  flags: Partial<Record<string, string | boolean | undefined>>,
  env: Record<string, string | undefined>
): Config => {
  const read = (name: keyof typeof settings): string | undefined => {
    const setting = settings[name]
    const flag = flags[setting.flag]
    const value = typeof flag === "string" ? flag : env[setting.env]
    return value === undefined || value === "" ? setting.default : value
  }
  const port = Number(read("port"))
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`BOTRELAY_PORT / --port must be an integer from 0 to 65535`)
  }
  const telegramApi = read("telegramApi")!.replace(/\/+$/, "")
  if (!isHttpUrl(telegramApi)) {
    throw new ConfigError("BOTRELAY_TELEGRAM_API / --telegram-api must be an http or https URL")
  }
  const publicUrl = read("publicUrl")?.replace(/\/+$/, "")
  if (publicUrl !== undefined && !isHttpUrl(publicUrl)) {
    throw new ConfigError("BOTRELAY_PUBLIC_URL / --public-url must be an http or https URL")
  }
  const adminKey = read("adminKey")
  if (adminKey !== undefined && !/^brk_[A-Za-z0-9_-]{43}$/.test(adminKey)) {
    throw new ConfigError(
      "BOTRELAY_ADMIN_KEY / --admin-key must be brk_ followed by 43 base64url characters (see `botrelay keys create`)"
    )
  }
  const botToken = read("botToken")
  const tokenProblem = botToken === undefined ? undefined : Bot.tokenProblem(botToken, "BOTRELAY_BOT_TOKEN / --token")
  if (tokenProblem !== undefined) throw new ConfigError(tokenProblem)
  const secretKey = env[secretKeyEnv] === undefined || env[secretKeyEnv] === "" ? undefined : env[secretKeyEnv]
  if (secretKey !== undefined && !/^[0-9a-fA-F]{64}$/.test(secretKey)) {
    throw new ConfigError(
      `${secretKeyEnv} must be 64 hexadecimal characters (32 random bytes: \`openssl rand -hex 32\`)`
    )
  }
  const instanceId = read("instanceId")
  if (instanceId !== undefined && !Status.instanceIdPattern.test(instanceId)) {
    throw new ConfigError("BOTRELAY_INSTANCE_ID / --instance-id must be 1 to 64 characters of A-Z a-z 0-9 . _ -")
  }
  const database = read("database")!
  const postgres = /^postgres(ql)?:\/\//i.test(database)
  if (postgres && secretKey === undefined) {
    throw new ConfigError(
      `${secretKeyEnv} is required with a PostgreSQL database: 64 hexadecimal characters, the same on every ` +
        "instance (`openssl rand -hex 32`)"
    )
  }
  const databasePool = Number(read("databasePool"))
  if (!Number.isInteger(databasePool) || databasePool < 1 || databasePool > 1000) {
    throw new ConfigError("BOTRELAY_DATABASE_POOL / --database-pool must be an integer from 1 to 1000")
  }
  const logLevel = logLevels[read("logLevel")!.toLowerCase()]
  if (logLevel === undefined) {
    throw new ConfigError(`BOTRELAY_LOG_LEVEL / --log-level must be one of ${Object.keys(logLevels).join(", ")}`)
  }
  const logFormat = read("logFormat")!.trim().toLowerCase()
  if (logFormat !== "auto" && logFormat !== "json" && logFormat !== "pretty") {
    throw new ConfigError("BOTRELAY_LOG_FORMAT / --log-format must be auto, json or pretty")
  }
  const metricsToken = read("metricsToken")
  if (metricsToken !== undefined && (metricsToken.length < 32 || metricsToken.length > 1024 || /\s/.test(metricsToken))) {
    throw new ConfigError(
      "BOTRELAY_METRICS_TOKEN / --metrics-token must be 32 to 1024 characters without whitespace (`openssl rand -hex 32`)"
    )
  }
  const bufferMaxUpdates = Number(read("bufferMaxUpdates"))
  if (!Number.isInteger(bufferMaxUpdates) || bufferMaxUpdates < 1 || bufferMaxUpdates > maxBufferUpdates) {
    throw new ConfigError(
      `BOTRELAY_BUFFER_MAX_UPDATES / --buffer-max-updates must be an integer from 1 to ${maxBufferUpdates}`
    )
  }
  const bufferMaxAge = parseSeconds(read("bufferMaxAge")!)
  if (bufferMaxAge === undefined) {
    throw new ConfigError(
      "BOTRELAY_BUFFER_MAX_AGE / --buffer-max-age must be a positive whole number of seconds (3600), " +
        "or of minutes, hours or days (15m, 24h, 7d)"
    )
  }
  const routeMappingTtl = parseSeconds(read("routeMappingTtl")!)
  if (routeMappingTtl === undefined) {
    throw new ConfigError(
      "BOTRELAY_ROUTE_MAPPING_TTL / --route-mapping-ttl must be a positive whole number of seconds (3600), " +
        "or of minutes, hours or days (15m, 24h, 30d)"
    )
  }
  const llmBaseUrl = read("llmBaseUrl")?.trim().replace(/\/+$/, "")
  if (llmBaseUrl !== undefined && !isHttpUrl(llmBaseUrl)) {
    throw new ConfigError("BOTRELAY_LLM_BASE_URL / --llm-base-url must be an http or https URL")
  }
  const llmApiKey = read("llmApiKey")
  if (llmApiKey !== undefined && (/\s/.test(llmApiKey) || llmApiKey.length > 4096)) {
    throw new ConfigError("BOTRELAY_LLM_API_KEY / --llm-api-key must have no whitespace and at most 4096 characters")
  }
  const llmModel = read("llmModel")?.trim()
  if (llmModel !== undefined && (llmModel === "" || llmModel.length > 256)) {
    throw new ConfigError("BOTRELAY_LLM_MODEL / --llm-model must be 1 to 256 characters")
  }
  const llmTimeout = read("llmTimeout")
  const llmTimeoutMs = llmTimeout === undefined ? undefined : parseTimeoutMs(llmTimeout)
  if (llmTimeout !== undefined && llmTimeoutMs === undefined) {
    throw new ConfigError(
      "BOTRELAY_LLM_TIMEOUT / --llm-timeout must be milliseconds (5000) or seconds (5s), from 100 ms to 60 s"
    )
  }
  const httpMaxConnections = Number(read("httpMaxConnections"))
  if (!Number.isInteger(httpMaxConnections) || httpMaxConnections < 1 || httpMaxConnections > 1_000_000) {
    throw new ConfigError("BOTRELAY_HTTP_MAX_CONNECTIONS / --http-max-connections must be an integer from 1 to 1000000")
  }
  const timeout = (name: "httpHeadersTimeout" | "httpBodyTimeout" | "httpRequestTimeout") => {
    const seconds = parseSeconds(read(name)!)
    if (seconds === undefined) {
      const { env, flag } = settings[name]
      throw new ConfigError(`${env} / --${flag} must be a positive whole number of seconds (30), or of minutes (5m)`)
    }
    return seconds
  }
  const backendPolicy = read("backendPolicy")!.trim().toLowerCase()
  if (backendPolicy !== "default" && backendPolicy !== "strict") {
    throw new ConfigError("BOTRELAY_BACKEND_POLICY / --backend-policy must be default or strict")
  }
  const backendAllowPrivate = booleans[read("backendAllowPrivate")!.trim().toLowerCase()]
  if (backendAllowPrivate === undefined) {
    throw new ConfigError("BOTRELAY_BACKEND_ALLOW_PRIVATE / --backend-allow-private must be true or false")
  }
  const eventsHeartbeat = parseSeconds(read("eventsHeartbeat")!)
  if (eventsHeartbeat === undefined) {
    throw new ConfigError(
      "BOTRELAY_EVENTS_HEARTBEAT / --events-heartbeat must be a positive whole number of seconds (15), or of minutes (1m)"
    )
  }
  const eventsMaxPending = Number(read("eventsMaxPending"))
  if (!Number.isInteger(eventsMaxPending) || eventsMaxPending < 1 || eventsMaxPending > 1_000_000) {
    throw new ConfigError("BOTRELAY_EVENTS_MAX_PENDING / --events-max-pending must be an integer from 1 to 1000000")
  }
  const eventsRetention = parseSeconds(read("eventsRetention")!)
  if (eventsRetention === undefined) {
    throw new ConfigError(
      "BOTRELAY_EVENTS_RETENTION / --events-retention must be a positive whole number of seconds (3600), " +
        "or of minutes, hours or days (15m, 24h, 7d)"
    )
  }
  const eventsKeep = Number(read("eventsKeep"))
  if (!Number.isInteger(eventsKeep) || eventsKeep < 0 || eventsKeep > 100_000_000) {
    throw new ConfigError("BOTRELAY_EVENTS_KEEP / --events-keep must be an integer from 0 to 100000000")
  }
  const seconds = (name: "sessionIdleTimeout" | "sessionMaxAge" | "auditRetention" | "deliveryMaxAge") => {
    const value = parseSeconds(read(name)!)
    if (value === undefined) {
      const { env, flag } = settings[name]
      throw new ConfigError(
        `${env} / --${flag} must be a positive whole number of seconds (3600), or of minutes, hours or days (15m, 12h, 7d)`
      )
    }
    return value
  }
  const apiRateLimit = Number(read("apiRateLimit"))
  if (!/^\d{1,7}(\.\d{1,6})?$/.test(read("apiRateLimit")!.trim()) || apiRateLimit > 1_000_000) {
    throw new ConfigError("BOTRELAY_API_RATE_LIMIT / --api-rate-limit must be a number of requests a second from 0 (no limit) to 1000000")
  }
  const apiRateBurst = Number(read("apiRateBurst"))
  if (!/^\d{1,7}$/.test(read("apiRateBurst")!.trim()) || apiRateBurst < 1 || apiRateBurst > 1_000_000) {
    throw new ConfigError("BOTRELAY_API_RATE_BURST / --api-rate-burst must be an integer from 1 to 1000000")
  }
  return {
    port,
    host: read("host")!,
    database,
    instanceId,
    databasePool,
    secretKey: secretKey === undefined ? undefined : Redacted.make(secretKey),
    telegramApi,
    adminKey: adminKey === undefined ? undefined : Redacted.make(adminKey),
    publicUrl,
    botToken: botToken === undefined ? undefined : Redacted.make(botToken),
    logLevel,
    logFormat,
    metricsToken: metricsToken === undefined ? undefined : Redacted.make(metricsToken),
    bufferMaxUpdates,
    bufferMaxAge,
    routeMappingTtl,
    llmBaseUrl,
    llmApiKey: llmApiKey === undefined ? undefined : Redacted.make(llmApiKey),
    llmModel,
    llmTimeoutMs,
    httpMaxConnections,
    httpHeadersTimeout: timeout("httpHeadersTimeout"),
    httpBodyTimeout: timeout("httpBodyTimeout"),
    httpRequestTimeout: timeout("httpRequestTimeout"),
    backendPolicy,
    backendAllowPrivate,
    eventsHeartbeat,
    eventsMaxPending,
    eventsRetention,
    eventsKeep,
    sessionIdleTimeout: seconds("sessionIdleTimeout"),
    sessionMaxAge: seconds("sessionMaxAge"),
    auditRetention: seconds("auditRetention"),
    deliveryMaxAge: seconds("deliveryMaxAge"),
    apiRateLimit,
    apiRateBurst,
    traces: tracesFromEnv(env)
  }
}

/** Parses command-line flags (after the command) and reads the environment. */
export const load = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = process.env): Config => {
  const { values } = parseArgs({ args: [...args], options, strict: true, allowPositionals: false })
  return fromValues(values, env)
}
