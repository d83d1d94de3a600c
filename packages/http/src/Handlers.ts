import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { ApiKeys, Bot, Bots, Deliveries, Health, LlmSettings, LongPoll, Messages, Routes, ChatTag, Tags } from "@botrelay/core"
// In scope so that the inferred type of `layer` can name the services these groups need.
import type { ChatAdmin as _ChatAdmin, EventLog as _EventLog, MediaFiles as _MediaFiles } from "@botrelay/core"
import { TelegramClient } from "@botrelay/telegram"
import { Effect, Layer, Option, ParseResult, Schema } from "effect"
import { Api, Authorization, Caller } from "./Api.js"
import { asAdmin, asBot, orDomain, requireBot, requireOptionalBot, sees, withoutCredentials } from "./Access.js"
import * as ApiError from "./ApiError.js"
import * as AuditHandlers from "./AuditHandlers.js"
import * as ChatAdminLive from "./ChatAdminLive.js"
import * as MediaLive from "./MediaLive.js"
import * as MessageActionsLive from "./MessageActionsLive.js"
import * as LiveEvents from "./LiveEvents.js"
import * as Search from "./Search.js"

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
            onSome: (key) =>
              Effect.succeed(
                Caller.of({ type: "key", id: key.id, name: key.name, role: key.role, bot_ids: key.bot_ids })
              )
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
  Effect.map(Health.Health, (health) =>
    handlers.handle("health", () =>
      health.check.pipe(
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
          const key = yield* Caller
          const all = yield* bots.list.pipe(Effect.catchAll(ApiError.fromDomain))
          return key.role === "admin"
            ? all.map(Bot.view)
            : all.filter((b) => key.bot_ids.includes(b.id)).map((b) =>
              Bot.view({ ...b, backend_url: withoutCredentials(b.backend_url) })
            )
        }))
      .handle("add", ({ payload }) => asAdmin(Effect.map(bots.add(payload), Bot.view)))
      .handle("update", ({ payload }) => asAdmin(Effect.map(bots.update(payload), Bot.view)))
      .handle("toggleDisabled", ({ urlParams }) => asAdmin(Effect.map(bots.toggleDisabled(urlParams.id), Bot.view)))
      .handle("delete", ({ urlParams }) => asAdmin(Effect.map(bots.remove(urlParams.id), Bot.view)))
      .handle("validate", ({ urlParams }) =>
        asAdmin(
          decodeToken(urlParams.token).pipe(
            Effect.mapError((e) =>
              new ApiError.BadRequest({
                error: "invalid request: token must be non-empty, without whitespace, at most 256 characters",
                code: "invalid_request",
                details: ParseResult.ArrayFormatter.formatErrorSync(e).map((issue) => ({
                  path: "token",
                  message: issue.message
                }))
              })
            ),
            Effect.flatMap(telegram.getMe),
            Effect.catchIf(
              (e) => e._tag === "TelegramApiError" && (e.error_code === 401 || e.error_code === 404),
              () => Effect.fail(new ApiError.BadRequest({ error: "Telegram rejected the token", code: "invalid_token" }))
            )
          )
        ))
  }))

const DeliveriesLive = HttpApiBuilder.group(Api, "deliveries", (handlers) =>
  Effect.gen(function*() {
    const deliveries = yield* Deliveries.Deliveries
    return handlers
      .handle("list", ({ urlParams }) =>
        requireOptionalBot(urlParams.bot_id).pipe(
          Effect.zipRight(Effect.all([Caller, deliveries.list(urlParams)])),
          Effect.map(([key, list]) =>
            key.role === "admin" ? list : list.map((d) => ({ ...d, url: withoutCredentials(d.url) }))
          ),
          Effect.catchAll(orDomain)
        ))
      .handle("retry", ({ urlParams }) => asAdmin(deliveries.retry(urlParams.id)))
  }))

const RoutesLive = HttpApiBuilder.group(Api, "routes", (handlers) =>
  Effect.map(Routes.Routes, (routes) =>
    handlers
      .handle("list", ({ urlParams }) =>
        asAdmin(routes.list(urlParams.bot_id)))
      .handle("add", ({ payload }) => asAdmin(routes.add(payload)))
      .handle("sends", ({ urlParams }) =>
        requireOptionalBot(urlParams.bot_id).pipe(
          Effect.zipRight(Effect.all([Caller, routes.sends(urlParams)])),
          Effect.map(([key, sends]) => sends.map((s) => sees(key, s.source_bot_id) ? s : { ...s, payload: "" })),
          Effect.catchAll(orDomain)
        ))
      .handle("update", ({ payload }) =>
        asAdmin(routes.update(payload)))
      .handle("delete", ({ urlParams }) =>
        asAdmin(routes.remove(urlParams.id)))))

const MessagesLive = HttpApiBuilder.group(Api, "messages", (handlers) =>
  Effect.map(Messages.Messages, (messages) =>
    handlers
      .handle("list", ({ urlParams }) =>
        asBot(
          urlParams.bot_id,
          Effect.map(
            messages.list(urlParams),
            (page) => HttpServerResponse.raw(JSON.stringify(page), { contentType: "application/json" })
          )
        ))
      .handle("send", ({ payload }) =>
        asBot(payload.bot_id, messages.send(payload)))))

const TagsLive = HttpApiBuilder.group(Api, "tags", (handlers) =>
  Effect.gen(function*() {
    const tags = yield* Tags.Tags
    const bots = yield* Bots.Bots
    const throughBot = <A>(botId: number | undefined, effect: Effect.Effect<A, ApiError.DomainError>) =>
      requireOptionalBot(botId).pipe(
        Effect.zipRight(botId === undefined ? Effect.void : Effect.asVoid(bots.get(botId))),
        Effect.zipRight(effect),
        Effect.catchAll(orDomain)
      )
    /** The tag, when it belongs to `botId` (if given) and to a bot in the key's scope; else "not found", as if it did not exist. */
    const ownTag = (id: number, botId: number | undefined) =>
      Effect.gen(function*() {
        const key = yield* Caller
        const tag = yield* tags.get(id)
        const visible = (botId === undefined || tag.bot_id === botId) && sees(key, tag.bot_id)
        return visible ? tag : yield* Effect.fail(new ChatTag.TagNotFound({ id }))
      })
    return handlers
      .handle("list", ({ urlParams }) => throughBot(urlParams.bot_id, tags.list(urlParams)))
      .handle("add", ({ payload }) => throughBot(payload.bot_id, tags.add(payload)))
      .handle("remove", ({ urlParams }) =>
        (urlParams.bot_id === undefined ? Effect.void : requireBot(urlParams.bot_id)).pipe(
          Effect.zipRight(ownTag(urlParams.id, urlParams.bot_id)),
          Effect.zipRight(tags.remove(urlParams.id)),
          Effect.catchAll(orDomain)
        ))
  }))

const UpdatesLive = HttpApiBuilder.group(Api, "updates", (handlers) =>
  Effect.gen(function*() {
    const longPoll = yield* LongPoll.LongPoll
    const bots = yield* Bots.Bots
    return handlers.handle("poll", ({ urlParams: { bot_id, ...params } }) =>
      asBot(
        bot_id,
        bots.get(bot_id).pipe(
          Effect.zipRight(longPoll.getUpdates(bot_id, params)),
          Effect.map((updates) =>
            HttpServerResponse.raw(`[${updates.map((u) => u.payload).join(",")}]`, { contentType: "application/json" })
          )
        )
      ))
  }))

const ApiKeysLive = HttpApiBuilder.group(Api, "apiKeys", (handlers) =>
  Effect.map(ApiKeys.ApiKeys, (keys) =>
    handlers
      .handle("list", () => asAdmin(keys.list))
      .handle("create", ({ payload }) =>
        asAdmin(keys.create(payload)))
      .handle("delete", ({ urlParams }) =>
        asAdmin(keys.remove(urlParams.id)))
      .handle("toggle", ({ urlParams }) =>
        asAdmin(keys.toggle(urlParams.id)))))

const LlmLive = HttpApiBuilder.group(Api, "llm", (handlers) =>
  Effect.map(LlmSettings.LlmSettings, (settings) =>
    handlers
      .handle("get", () => asAdmin(settings.view))
      .handle("update", ({ payload }) => asAdmin(settings.update(payload)))))

/** Every group of the API, on the core services and the Telegram client. */
export const layer = Layer.mergeAll(
  HealthLive,
  BotsLive,
  DeliveriesLive,
  RoutesLive,
  MessagesLive,
  TagsLive,
  UpdatesLive,
  ApiKeysLive,
  LlmLive,
  MessageActionsLive.layer,
  ChatAdminLive.layer,
  MediaLive.layer,
  LiveEvents.layer,
  Search.SearchLive,
  AuditHandlers.AuditLive
).pipe(
  Layer.provide(AuthorizationLive)
)
