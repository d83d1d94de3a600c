/** Schemas for the Bot API subset Botrelay uses. */
export * as BotApi from "./BotApi.js"

/** HTTP calls read whole: Bot API calls, updates forwarded to backends, calls the /tgapi proxy passes on. */
export * as HttpExchange from "./HttpExchange.js"

/** Telling public IP addresses from loopback, private, link-local and other reserved ones. */
export * as IpAddress from "./IpAddress.js"

/** The Bot API client service. */
export * as TelegramClient from "./TelegramClient.js"

/** Failures of Bot API calls. */
export * as TelegramError from "./TelegramError.js"

/** The metrics of Bot API calls: by method and status, and their durations. */
export * as TelegramMetrics from "./TelegramMetrics.js"
