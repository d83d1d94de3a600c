import { parseArgs } from "node:util"
import { LogLevel, Redacted } from "effect"

/** The standalone server's configuration; flags override environment variables. */
export interface Config {
  readonly port: number
  readonly host: string
  readonly database: string
  readonly telegramApi: string
  readonly adminKey: Redacted.Redacted<string> | undefined
  readonly publicUrl: string | undefined
  readonly botToken: Redacted.Redacted<string> | undefined
  readonly logLevel: LogLevel.LogLevel
}

/** A configuration value that cannot be used; the message names the setting and never its secret value. */
export class ConfigError extends Error {}

/** Every setting: its flag, its environment variable and its default. */
export const settings = {
  port: { flag: "port", env: "BOTRELAY_PORT", default: "8080" },
  host: { flag: "host", env: "BOTRELAY_HOST", default: "0.0.0.0" },
  database: { flag: "database", env: "BOTRELAY_DATABASE", default: "./data/botrelay.db" },
  telegramApi: { flag: "telegram-api", env: "BOTRELAY_TELEGRAM_API", default: "https://api.telegram.org" },
  adminKey: { flag: "admin-key", env: "BOTRELAY_ADMIN_KEY", default: undefined },
  publicUrl: { flag: "public-url", env: "BOTRELAY_PUBLIC_URL", default: undefined },
  botToken: { flag: "token", env: "BOTRELAY_BOT_TOKEN", default: undefined },
  logLevel: { flag: "log-level", env: "BOTRELAY_LOG_LEVEL", default: "info" }
} as const

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

const isHttpUrl = (value: string) => {
  if (!URL.canParse(value)) return false
  const protocol = new URL(value).protocol
  return protocol === "http:" || protocol === "https:"
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
  if (botToken !== undefined && (/\s/.test(botToken) || botToken.length > 256)) {
    throw new ConfigError("BOTRELAY_BOT_TOKEN / --token must have no whitespace and at most 256 characters")
  }
  const logLevel = logLevels[read("logLevel")!.toLowerCase()]
  if (logLevel === undefined) {
    throw new ConfigError(`BOTRELAY_LOG_LEVEL / --log-level must be one of ${Object.keys(logLevels).join(", ")}`)
  }
  return {
    port,
    host: read("host")!,
    database: read("database")!,
    telegramApi,
    adminKey: adminKey === undefined ? undefined : Redacted.make(adminKey),
    publicUrl,
    botToken: botToken === undefined ? undefined : Redacted.make(botToken),
    logLevel
  }
}

/** Parses command-line flags (after the command) and reads the environment. */
export const load = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = process.env): Config => {
  const { values } = parseArgs({ args: [...args], options, strict: true, allowPositionals: false })
  return fromValues(values, env)
}
