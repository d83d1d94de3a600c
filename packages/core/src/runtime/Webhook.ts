import { TelegramClient } from "@botrelay/telegram"
import { Context, Effect, Either, Option, Redacted } from "effect"
import type { StoredBot } from "../domain/Bot.js"
import * as BotStatus from "./BotStatus.js"
import { Event, Events, publish } from "./Events.js"
import * as Ingress from "./Ingress.js"
import * as Retry from "./Retry.js"
import * as RandomToken from "../internal/RandomToken.js"
import { InboxStore } from "../stores/InboxStore.js"

/** The URL under which Telegram reaches this service (no trailing slash); webhook mode needs it. */
export class PublicUrl extends Context.Reference<PublicUrl>()("@botrelay/core/PublicUrl", {
  defaultValue: (): Option.Option<string> => Option.none()
}) {}

/** The address Telegram posts a bot's updates to. */
export const webhookUrl = (publicUrl: string, botId: number): string => `${publicUrl}/telegram/webhook/${botId}`

/** A new webhook secret: 32 random bytes, base64url (43 characters, within Telegram's rule). */
export const generateSecret: Effect.Effect<string> = RandomToken.make

/** Whether a given secret equals the expected one, comparing every byte (no early exit). */
export const secretsEqual = (given: string, expected: string): boolean => {
  const a = new TextEncoder().encode(given)
  const b = new TextEncoder().encode(expected)
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!
  return difference === 0
}

/**
 * Registers the bot's webhook and keeps it registered while it runs: reuses the stored secret or
 * stores a new one before `setWebhook`, retries with backoff (writing `last_error`) until Telegram
 * accepts it, then marks the bot running until interrupted. A webhook already registered at this URL
 * with the stored secret (Telegram's `getWebhookInfo` still shows the URL) is not registered again, so
 * a restart or a handover to another instance calls no `setWebhook`. Interruption leaves the webhook in
 * place; `unregister` removes it.
 */
export const register = (bot: StoredBot, publicUrl: string, options: Ingress.Options = Ingress.defaults) =>
  Effect.gen(function*() {
    const inbox = yield* InboxStore
    const telegram = yield* TelegramClient.TelegramClient
    const events = yield* Events
    let failures = 0
    const { identify, setError } = yield* BotStatus.make(bot, "webhook registration failed")

    const secret = inbox.webhookSecret(bot.id).pipe(
      Effect.flatMap(Option.match({
        onSome: Effect.succeed,
        onNone: () => Effect.tap(generateSecret, (s) => inbox.setWebhookSecret(bot.id, s))
      }))
    )

    const url = webhookUrl(publicUrl, bot.id)
    const registered = Effect.flatMap(inbox.webhookUrl(bot.id), (stored) =>
      stored !== url
        ? Effect.succeed(false)
        : Effect.map(telegram.getWebhookInfo(bot.token), (info) => info.url === url))
    const attempt = Effect.flatMap(secret, (s) =>
      Effect.flatMap(registered, (already) =>
        already ? Effect.void : telegram.setWebhook(bot.token, {
          url,
          secret_token: Redacted.make(s),
          allowed_updates: Ingress.allUpdateTypes
        }).pipe(Effect.zipRight(inbox.setWebhookUrl(bot.id, url)))))

    while (true) {
      const result = yield* Effect.either(attempt)
      if (Either.isRight(result)) break
      const e = result.left
      if (e._tag === "StorageError") {
        yield* Effect.logError("could not store the webhook secret", e.cause)
        yield* Effect.sleep(yield* Retry.delay(failures++, options.retryBase, options.retryCap))
      } else {
        const { lastError: message, wait } = yield* Ingress.assess(e, failures++, options)
        yield* setError(message)
        yield* Effect.sleep(wait)
      }
    }
    yield* setError("")
    yield* events.publish(Event.BotStatusChanged({ bot_id: bot.id, running: true }))
    yield* identify
    return yield* Effect.never
  }).pipe(
    Effect.ensuring(publish(Event.BotStatusChanged({ bot_id: bot.id, running: false }))),
    Effect.annotateLogs({ bot_id: bot.id })
  )

/**
 * Removes the bot's webhook (pending updates stay with Telegram) and then its stored secret,
 * retrying with backoff until Telegram answers; a rejected token has no webhook left to remove.
 */
export const unregister = (
  botId: number,
  token: Redacted.Redacted<string>,
  options: Ingress.Options = Ingress.defaults
) =>
  Effect.gen(function*() {
    const inbox = yield* InboxStore
    const telegram = yield* TelegramClient.TelegramClient
    let failures = 0
    while (true) {
      const result = yield* Effect.either(telegram.deleteWebhook(token, {}))
      if (Either.isRight(result)) break
      const e = result.left
      if (e._tag === "TelegramApiError" && (e.error_code === 401 || e.error_code === 404)) break
      const { lastError, wait } = yield* Ingress.assess(e, failures++, options)
      yield* Effect.logWarning("could not delete the webhook").pipe(Effect.annotateLogs({ error: lastError }))
      yield* Effect.sleep(wait)
    }
    yield* inbox.setWebhookSecret(botId, undefined).pipe(
      Effect.catchAll((e) => Effect.logError("could not clear the webhook secret", e.cause))
    )
  }).pipe(Effect.annotateLogs({ bot_id: botId }))
