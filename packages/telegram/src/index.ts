/** Schemas for the Bot API subset Botrelay uses. */
export * as BotApi from "./BotApi.js"

/** How Botrelay POSTs: Bot API calls and updates forwarded to backends. */
export * as HttpPost from "./HttpPost.js"

/** The Bot API client service. */
export * as TelegramClient from "./TelegramClient.js"

/** Failures of Bot API calls. */
export * as TelegramError from "./TelegramError.js"
