import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Webhooks } from "@botrelay/core"
import { Effect } from "effect"

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

/**
 * `POST /telegram/webhook/:bot_id`: hands the update to `Webhooks.receive` (which checks that the bot
 * takes webhook updates and the secret header, and hands the update to the inbox),
 * and only then answers 200 `{}`. Unknown, disabled or non-webhook bots get 404, a wrong secret 401, a
 * bad body 400.
 */
export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const webhooks = yield* Webhooks.Webhooks

    const handle = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const raw = (yield* HttpRouter.params).bot_id ?? ""
      if (!/^[1-9][0-9]{0,14}$/.test(raw)) return notFound
      const text = yield* request.text
      yield* webhooks.receive(Number(raw), request.headers["x-telegram-bot-api-secret-token"], text)
      return json(200, {})
    }).pipe(
      Effect.catchTags({
        WebhookNotTaken: () => Effect.succeed(notFound),
        WrongSecret: () => Effect.succeed(unauthorized),
        InvalidUpdate: () => Effect.succeed(invalid),
        StorageError: (e) =>
          Effect.logError("could not store a webhook update", e.cause).pipe(
            Effect.as(json(500, { error: "internal error", code: "internal_error" }))
          )
      })
    )

    yield* router.post(path, handle)
  })
)
