import { Context, Data, Effect, Layer, Option } from "effect"
import type { StorageError } from "../domain/Errors.js"
import { Inbox } from "../runtime/Inbox.js"
import { BotStore } from "../stores/BotStore.js"
import { InboxStore } from "../stores/InboxStore.js"
import { secretsEqual } from "../runtime/Webhook.js"

/** No bot takes webhook updates under this id: unknown, disabled, not in webhook mode, or no webhook registered. */
export class WebhookNotTaken extends Data.TaggedError("WebhookNotTaken")<{ readonly bot_id: number }> {}

/** The secret Telegram sends with the update is missing or wrong. */
export class WrongSecret extends Data.TaggedError("WrongSecret")<{ readonly bot_id: number }> {}

/** The body is not a JSON object with an integer `update_id`. */
export class InvalidUpdate extends Data.TaggedError("InvalidUpdate")<{ readonly bot_id: number }> {}

/** Updates Telegram posts to bots in webhook mode. */
export interface WebhooksService {
  /**
   * Checks that the bot takes webhook updates and the secret sent with the update (every byte
   * compared) and hands the update to `Inbox.accept`; succeeds once the update is stored. `payload` is the body's JSON text, kept as it is.
   */
  readonly receive: (
    botId: number,
    secret: string | undefined,
    payload: string
  ) => Effect.Effect<void, WebhookNotTaken | WrongSecret | InvalidUpdate | StorageError>
}

/** Updates Telegram posts to bots in webhook mode. */
export class Webhooks extends Context.Tag("@botrelay/core/Webhooks")<Webhooks, WebhooksService>() {}

/** The update's `update_id`, or undefined when the text is not a JSON object with an integer one. */
const updateIdOf = (text: string): number | undefined => {
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return undefined
  const id: unknown = (body as Record<string, unknown>)["update_id"]
  return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined
}

/** Builds the service on the stores and the `Inbox`. */
export const make: Effect.Effect<WebhooksService, never, BotStore | InboxStore | Inbox> = Effect.gen(function*() {
  const bots = yield* BotStore
  const store = yield* InboxStore
  const inbox = yield* Inbox
  return Webhooks.of({
    receive: (botId, given, payload) =>
      Effect.gen(function*() {
        const bot = yield* bots.findBot(botId)
        if (Option.isNone(bot) || !bot.value.webhook_mode || bot.value.disabled) {
          return yield* new WebhookNotTaken({ bot_id: botId })
        }
        const secret = yield* store.webhookSecret(botId)
        if (Option.isNone(secret)) return yield* new WebhookNotTaken({ bot_id: botId })
        if (given === undefined || !secretsEqual(given, secret.value)) return yield* new WrongSecret({ bot_id: botId })
        const updateId = updateIdOf(payload)
        if (updateId === undefined) return yield* new InvalidUpdate({ bot_id: botId })
        yield* inbox.accept(botId, [{ update_id: updateId, payload }], 0).pipe(Effect.catchTag("LeaseLost", Effect.die))
      })
  })
})

/** The service on the stores and the `Inbox`. */
export const layer: Layer.Layer<Webhooks, never, BotStore | InboxStore | Inbox> = Layer.effect(Webhooks, make)
