import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { BotStore, InboxStore, Supervisor, Webhook } from "@botrelay/core"
import { Clock, Effect, Option } from "effect"

/** Where Telegram posts the updates of a bot in webhook mode. */
export const path = "/telegram/webhook/:bot_id"

const json = (status: number, body: object) => HttpServerResponse.unsafeJson(body, { status })

const notFound = json(404, { error: "no bot takes webhook updates at this address", code: "not_found" })
const unauthorized = json(401, {
  error: "missing or wrong X-Telegram-Bot-Api-Secret-Token header",
  code: "unauthorized"
})
const invalid = json(400, {
  error: "the body must be a JSON object with an integer update_id",
  code: "invalid_request"
})

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

/**
 * `POST /telegram/webhook/:bot_id`: checks that the bot takes webhook updates and the secret header
 * (every byte compared), commits the update to the inbox, wakes processing, and only then answers
 * 200 `{}`. Unknown, disabled or non-webhook bots get 404, a wrong secret 401, a bad body 400.
 */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const botStore = yield* BotStore.BotStore
    const inbox = yield* InboxStore.InboxStore
    const supervisor = yield* Supervisor.Supervisor

    const handle = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const raw = (yield* HttpRouter.params).bot_id ?? ""
      if (!/^[1-9][0-9]{0,14}$/.test(raw)) return notFound
      const botId = Number(raw)
      const bot = yield* botStore.findBot(botId)
      if (Option.isNone(bot) || !bot.value.webhook_mode || bot.value.disabled) return notFound
      const secret = yield* inbox.webhookSecret(botId)
      if (Option.isNone(secret)) return notFound
      const given = request.headers["x-telegram-bot-api-secret-token"]
      if (given === undefined || !Webhook.secretsEqual(given, secret.value)) return unauthorized
      const text = yield* request.text
      const updateId = updateIdOf(text)
      if (updateId === undefined) return invalid
      const received_at = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* inbox.commitUpdates(botId, [{ update_id: updateId, payload: text, received_at }], 0)
      yield* botStore.updateBot(botId, { last_update_at: received_at }).pipe(Effect.ignore)
      yield* supervisor.inboxChanged(botId)
      return json(200, {})
    }).pipe(
      Effect.catchTag("StorageError", (e) =>
        Effect.logError("could not store a webhook update", e.cause).pipe(
          Effect.as(json(500, { error: "internal error", code: "internal_error" }))
        ))
    )

    yield* router.post(path, handle)
  })
)
