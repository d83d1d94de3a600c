import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { ApiKeys, Bot, Bots, Messages, Routes, Storage, Tags } from "@botrelay/core"
import { TelegramClient } from "@botrelay/telegram"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { Api, Authorization, CurrentKey } from "./Api.js"
import * as ApiError from "./ApiError.js"

const forbidden = (error: string) => Effect.fail(new ApiError.Forbidden({ error, code: "forbidden" }))

/** Fails with 403 unless the current key is an admin key. */
export const requireAdmin: Effect.Effect<void, ApiError.Forbidden, CurrentKey> = Effect.flatMap(
  CurrentKey,
  (key) => key.role === "admin" ? Effect.void : forbidden("this needs an admin key")
)

/** Fails with 403 unless the current key may act on the bot. */
export const requireBot = (botId: number): Effect.Effect<void, ApiError.Forbidden, CurrentKey> =>
  Effect.flatMap(
    CurrentKey,
    (key) =>
      key.role === "admin" || key.bot_ids.includes(botId)
        ? Effect.void
        : forbidden(`this key may not act on bot ${botId}`)
  )

/** Operators name the bot they act through; admins may omit it. */
const requireOptionalBot = (botId: number | undefined) =>
  botId !== undefined
    ? requireBot(botId)
    : Effect.flatMap(
      CurrentKey,
      (key) => key.role === "admin" ? Effect.void : forbidden("operator keys must name a bot_id in their scope")
    )

const masked = Redacted.make("")

/** What an operator sees of a bot: its secrets masked. */
const forKey = (bot: Bot.Bot, role: "admin" | "operator"): Bot.Bot =>
  role === "admin"
    ? bot
    : {
      ...bot,
      token: Redacted.make(`${Redacted.value(bot.token).split(":")[0]}:***`),
      secret_token: Redacted.value(bot.secret_token) === "" ? masked : Redacted.make("***")
    }

const decodeToken = Schema.decodeUnknown(Bot.BotToken)

/** Bearer authentication against stored API keys. */
export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.map(ApiKeys.ApiKeys, (keys) =>
    Authorization.of({
      bearer: (secret) =>
        keys.authenticate(secret).pipe(
          Effect.catchAll(ApiError.fromDomain),
          Effect.flatMap(Option.match({
            onNone: () =>
              Effect.fail(new ApiError.Unauthorized({ error: "missing or invalid API key", code: "unauthorized" })),
            onSome: Effect.succeed
          })),
          Effect.mapError((e) =>
            e._tag === "Unauthorized"
              ? e
              : new ApiError.Unauthorized({ error: "API key could not be checked", code: "unauthorized" })
          )
        )
    }))
)

const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.map(Storage.Storage, (storage) =>
    handlers.handle("health", () =>
      storage.ping.pipe(
        Effect.as({ status: "ok" as const, storage: "ok" as const }),
        Effect.catchAll(() =>
          Effect.fail(new ApiError.ServiceUnavailable({ error: "storage is unavailable", code: "storage_unavailable" }))
        )
      ))))

const BotsLive = HttpApiBuilder.group(Api, "bots", (handlers) =>
  Effect.gen(function*() {
    const bots = yield* Bots.Bots
    const telegram = yield* TelegramClient.TelegramClient
    return handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const key = yield* CurrentKey
          const all = yield* bots.list.pipe(Effect.catchAll(ApiError.fromDomain))
          return key.role === "admin" ? all : all.filter((b) => key.bot_ids.includes(b.id)).map((b) => forKey(b, key.role))
        }))
      .handle("add", ({ payload }) => requireAdmin.pipe(Effect.zipRight(bots.add(payload)), Effect.catchAll(orDomain)))
      .handle("update", ({ payload }) =>
        requireAdmin.pipe(Effect.zipRight(bots.update(payload)), Effect.catchAll(orDomain)))
      .handle("toggleDisabled", ({ urlParams }) =>
        requireAdmin.pipe(Effect.zipRight(bots.toggleDisabled(urlParams.id)), Effect.catchAll(orDomain)))
      .handle("delete", ({ urlParams }) =>
        requireAdmin.pipe(Effect.zipRight(bots.remove(urlParams.id)), Effect.catchAll(orDomain)))
      .handle("validate", ({ urlParams }) =>
        requireAdmin.pipe(
          Effect.zipRight(
            decodeToken(urlParams.token).pipe(
              Effect.mapError((e) =>
                new ApiError.BadRequest({
                  error: `invalid request: ${e.issue.actual === "" ? "token must not be empty" : "token is malformed"}`,
                  code: "invalid_request",
                  details: [{ path: "token", message: "token must be non-empty, without whitespace, at most 256 characters" }]
                })
              )
            )
          ),
          Effect.flatMap((token) =>
            telegram.getMe(token).pipe(
              Effect.catchIf(
                (e) => e._tag === "TelegramApiError" && (e.error_code === 401 || e.error_code === 404),
                () =>
                  Effect.fail(
                    new ApiError.BadRequest({ error: "Telegram rejected the token: Unauthorized", code: "invalid_token" })
                  )
              ),
              Effect.catchAll(orDomain)
            )
          )
        ))
  }))

const RoutesLive = HttpApiBuilder.group(Api, "routes", (handlers) =>
  Effect.map(Routes.Routes, (routes) =>
    handlers
      .handle("list", ({ urlParams }) =>
        requireAdmin.pipe(Effect.zipRight(routes.list(urlParams.bot_id)), Effect.catchAll(orDomain)))
      .handle("add", ({ payload }) => requireAdmin.pipe(Effect.zipRight(routes.add(payload)), Effect.catchAll(orDomain)))
      .handle("update", ({ payload }) =>
        requireAdmin.pipe(Effect.zipRight(routes.update(payload)), Effect.catchAll(orDomain)))
      .handle("delete", ({ urlParams }) =>
        requireAdmin.pipe(Effect.zipRight(routes.remove(urlParams.id)), Effect.catchAll(orDomain)))))

const MessagesLive = HttpApiBuilder.group(Api, "messages", (handlers) =>
  Effect.map(Messages.Messages, (messages) =>
    handlers
      .handle("list", ({ urlParams }) =>
        requireBot(urlParams.bot_id).pipe(
          Effect.zipRight(messages.list(urlParams)),
          Effect.map((page) => HttpServerResponse.raw(JSON.stringify(page), { contentType: "application/json" })),
          Effect.catchAll(orDomain)
        ))
      .handle("send", ({ payload }) =>
        requireBot(payload.bot_id).pipe(Effect.zipRight(messages.send(payload)), Effect.catchAll(orDomain)))))

const TagsLive = HttpApiBuilder.group(Api, "tags", (handlers) =>
  Effect.gen(function*() {
    const tags = yield* Tags.Tags
    const bots = yield* Bots.Bots
    const botExists = (botId: number | undefined) => botId === undefined ? Effect.void : Effect.asVoid(bots.get(botId))
    return handlers
      .handle("list", ({ urlParams }) =>
        requireOptionalBot(urlParams.bot_id).pipe(
          Effect.zipRight(botExists(urlParams.bot_id)),
          Effect.zipRight(tags.list(urlParams.chat_id, urlParams.user_id)),
          Effect.catchAll(orDomain)
        ))
      .handle("add", ({ payload }) =>
        requireOptionalBot(payload.bot_id).pipe(
          Effect.zipRight(botExists(payload.bot_id)),
          Effect.zipRight(tags.add(payload)),
          Effect.catchAll(orDomain)
        ))
      .handle("remove", ({ urlParams }) =>
        requireOptionalBot(urlParams.bot_id).pipe(
          Effect.zipRight(botExists(urlParams.bot_id)),
          Effect.zipRight(tags.remove(urlParams.id)),
          Effect.catchAll(orDomain)
        ))
  }))

const ApiKeysLive = HttpApiBuilder.group(Api, "apiKeys", (handlers) =>
  Effect.map(ApiKeys.ApiKeys, (keys) =>
    handlers
      .handle("list", () => requireAdmin.pipe(Effect.zipRight(keys.list), Effect.catchAll(orDomain)))
      .handle("create", ({ payload }) =>
        requireAdmin.pipe(Effect.zipRight(keys.create(payload)), Effect.catchAll(orDomain)))
      .handle("delete", ({ urlParams }) =>
        requireAdmin.pipe(Effect.zipRight(keys.remove(urlParams.id)), Effect.catchAll(orDomain)))
      .handle("toggle", ({ urlParams }) =>
        requireAdmin.pipe(Effect.zipRight(keys.toggle(urlParams.id)), Effect.catchAll(orDomain)))))

/** Passes API errors through and translates domain failures. */
const orDomain = (e: ApiError.ApiError | ApiError.DomainError): Effect.Effect<never, ApiError.ApiError> =>
  ApiError.isApiError(e) ? Effect.fail(e) : ApiError.fromDomain(e)

/** Every group of the API, on the core services and the Telegram client. */
export const layer = Layer.mergeAll(HealthLive, BotsLive, RoutesLive, MessagesLive, TagsLive, ApiKeysLive).pipe(
  Layer.provide(AuthorizationLive)
)
