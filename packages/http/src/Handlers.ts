import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import {
  ApiKeys,
  Bot,
  Bots,
  Bridges,
  ChatTag,
  Deliveries,
  type Delivery,
  Health,
  LlmSettings,
  LongPoll,
  Messages,
  Routes,
  StatusReport,
  Tags
} from "@botrelay/core"
// In scope so that the inferred type of `layer` can name the services these groups need.
import type {
  Accounts as _Accounts,
  AuditLog as _AuditLog,
  Idempotency as _Idempotency,
  ChatAdmin as _ChatAdmin,
  EventLog as _EventLog,
  LoginThrottle as _LoginThrottle,
  MediaFiles as _MediaFiles
} from "@botrelay/core"
import { TelegramClient } from "@botrelay/telegram"
import { Effect, Layer, ParseResult, Schema } from "effect"
import { Api, Caller, type DeadQuery, type DeliveriesQuery, HealthUnavailable } from "./Api.js"
import { AuthorizationLive } from "./Authentication.js"
import {
  asAdmin,
  asBot,
  orDomain,
  requireBot,
  requireBotAbility,
  requireChat,
  requireOptionalBot,
  sees,
  withoutCredentials
} from "./Access.js"
import * as ApiError from "./ApiError.js"
import * as AuditHandlers from "./AuditHandlers.js"
import { audited, type Target } from "./Audited.js"
import * as ChatAdminLive from "./ChatAdminLive.js"
import * as ConfigHandlers from "./ConfigHandlers.js"
import * as MediaLive from "./MediaLive.js"
import * as MessageActionsLive from "./MessageActionsLive.js"
import * as LiveEvents from "./LiveEvents.js"
import * as Search from "./Search.js"
import * as Sends from "./Sends.js"

const decodeToken = Schema.decodeUnknown(Bot.BotToken)

const botTarget = (bot: Bot.BotView) => ({ target_id: bot.id, bot_id: bot.id })

const HealthLive = HttpApiBuilder.group(Api, "health", (handlers) =>
  Effect.map(Health.Health, (health) =>
    handlers.handle("health", () =>
      health.check.pipe(
        Effect.as({ status: "ok" as const, storage: "ok" as const }),
        Effect.catchAll(() =>
          Effect.fail(
            new HealthUnavailable({
              status: "unavailable",
              storage: "unavailable",
              error: "storage is unavailable",
              code: "storage_unavailable"
            })
          )
        )
      ))))

const StatusLive = HttpApiBuilder.group(Api, "status", (handlers) =>
  Effect.map(StatusReport.StatusReport, (report) => handlers.handle("get", () => asAdmin(report.get))))

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
      .handle("add", ({ payload }) =>
        audited("bots.add", { target_type: "bot" }, asAdmin(Effect.map(bots.add(payload), Bot.view)), botTarget))
      .handle("update", ({ payload }) =>
        audited(
          "bots.update",
          { target_type: "bot", target_id: payload.id, bot_id: payload.id, details: { fields: Object.keys(payload) } },
          asAdmin(Effect.map(bots.update(payload), Bot.view))
        ))
      .handle("toggleDisabled", ({ urlParams }) =>
        audited(
          "bots.toggle",
          { target_type: "bot", target_id: urlParams.id, bot_id: urlParams.id },
          asAdmin(Effect.map(bots.toggleDisabled(urlParams.id), Bot.view)),
          (bot) => ({ details: { disabled: bot.disabled } })
        ))
      .handle("delete", ({ urlParams }) =>
        audited(
          "bots.delete",
          { target_type: "bot", target_id: urlParams.id, bot_id: urlParams.id },
          asAdmin(Effect.map(bots.remove(urlParams.id), Bot.view))
        ))
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

/** The deliveries endpoints, shared by `/api/deliveries` and its alias `/api/bots/deliveries`. */
const deliveryHandlers = (deliveries: Deliveries.DeliveriesService) => ({
  list: ({ urlParams }: { readonly urlParams: typeof DeliveriesQuery.Type }) =>
    requireOptionalBot(urlParams.bot_id).pipe(
      Effect.zipRight(Effect.all([Caller, deliveries.list(urlParams)])),
      Effect.map(([key, list]) =>
        key.role === "admin" ? list : list.map((d) => ({ ...d, url: withoutCredentials(d.url) }))
      ),
      Effect.catchAll(orDomain)
    ),
  retry: ({ urlParams: { bot_id, id } }: { readonly urlParams: typeof DeadQuery.Type }) =>
    id !== undefined
      ? audited(
        "deliveries.retry",
        { target_type: "delivery", target_id: id },
        deliveries.get(id).pipe(
          Effect.flatMap((d) => requireBot(d.bot_id)),
          Effect.zipRight(deliveries.retry(id)),
          Effect.catchAll(orDomain)
        ),
        (d): Target => ({ bot_id: d.bot_id, details: { retried: 1, update_id: d.update_id } })
      )
      : audited(
        "deliveries.retry",
        { target_type: "bot", target_id: bot_id!, bot_id: bot_id! },
        asBot(bot_id!, Effect.map(deliveries.retryDead(bot_id!), (retried) => ({ retried }))),
        (r): Target => ({ details: r })
      ),
  discard: ({ urlParams: { bot_id, id } }: { readonly urlParams: typeof DeadQuery.Type }) =>
    id !== undefined
      ? audited(
        "deliveries.discard",
        { target_type: "delivery", target_id: id },
        deliveries.get(id).pipe(
          Effect.flatMap((d) => requireBot(d.bot_id)),
          Effect.zipRight(deliveries.discard(id)),
          Effect.catchAll(orDomain)
        ),
        (d): Target => ({
          bot_id: d.bot_id,
          details: { discarded: 1, update_id: d.update_id, last_error: d.last_error }
        })
      )
      : audited(
        "deliveries.discard",
        { target_type: "bot", target_id: bot_id!, bot_id: bot_id! },
        asBot(bot_id!, Effect.map(deliveries.discardDead(bot_id!), (discarded) => ({ discarded }))),
        (r): Target => ({ details: r })
      ),
  replay: ({ payload }: { readonly payload: Delivery.ReplayRequest }) => {
    const { bot_id, ...range } = payload
    return audited(
      "deliveries.replay",
      { target_type: "bot", target_id: bot_id, bot_id, details: range },
      asBot(bot_id, deliveries.replay(payload)),
      (r): Target => ({ details: { ...range, ...r } })
    )
  }
})

const DeliveriesLive = HttpApiBuilder.group(Api, "deliveries", (handlers) =>
  Effect.map(Deliveries.Deliveries, (deliveries) => {
    const handle = deliveryHandlers(deliveries)
    return handlers
      .handle("list", handle.list)
      .handle("retry", handle.retry)
      .handle("discard", handle.discard)
      .handle("replay", handle.replay)
  }))

const BotDeliveriesLive = HttpApiBuilder.group(Api, "botDeliveries", (handlers) =>
  Effect.map(Deliveries.Deliveries, (deliveries) => {
    const handle = deliveryHandlers(deliveries)
    return handlers
      .handle("list", handle.list)
      .handle("retry", handle.retry)
      .handle("discard", handle.discard)
      .handle("replay", handle.replay)
  }))

const RoutesLive = HttpApiBuilder.group(Api, "routes", (handlers) =>
  Effect.map(Routes.Routes, (routes) =>
    handlers
      .handle("list", ({ urlParams }) =>
        asAdmin(routes.list(urlParams.bot_id)))
      .handle("add", ({ payload }) =>
        audited("routes.add", { target_type: "route", bot_id: payload.source_bot_id }, asAdmin(routes.add(payload)), (r) => ({
          target_id: r.id
        })))
      .handle("sends", ({ urlParams }) =>
        requireOptionalBot(urlParams.bot_id).pipe(
          Effect.zipRight(Effect.all([Caller, routes.sends(urlParams)])),
          Effect.map(([key, sends]) => sends.map((s) => sees(key, s.source_bot_id) ? s : { ...s, payload: "" })),
          Effect.catchAll(orDomain)
        ))
      .handle("update", ({ payload }) =>
        audited(
          "routes.update",
          { target_type: "route", target_id: payload.id, bot_id: payload.source_bot_id },
          asAdmin(routes.update(payload))
        ))
      .handle("delete", ({ urlParams }) =>
        audited("routes.delete", { target_type: "route", target_id: urlParams.id }, asAdmin(routes.remove(urlParams.id))))))

const BridgesLive = HttpApiBuilder.group(Api, "bridges", (handlers) =>
  Effect.map(Bridges.Bridges, (bridges) =>
    handlers
      .handle("list", () => asAdmin(bridges.list))
      .handle("add", ({ payload }) =>
        audited("bridges.add", { target_type: "bridge" }, asAdmin(bridges.add(payload)), (b) => ({
          target_id: b.id,
          details: { name: b.name, format: b.format, events: b.events, bot_ids: b.bot_ids }
        })))
      .handle("update", ({ payload }) =>
        audited(
          "bridges.update",
          {
            target_type: "bridge",
            target_id: payload.id,
            details: { fields: Object.keys(payload).filter((field) => field !== "id") }
          },
          asAdmin(bridges.update(payload))
        ))
      .handle("delete", ({ urlParams }) =>
        audited("bridges.delete", { target_type: "bridge", target_id: urlParams.id }, asAdmin(bridges.remove(urlParams.id))))))

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
        Sends.answer(
          `send ${JSON.stringify(payload)}`,
          audited(
            "messages.send",
            {
              target_type: "chat",
              target_id: payload.chat_id,
              bot_id: payload.bot_id,
              chat_id: typeof payload.chat_id === "number" ? payload.chat_id : null
            },
            (typeof payload.chat_id === "number"
              ? requireChat(payload.bot_id, payload.chat_id, "reply")
              : requireBotAbility(payload.bot_id, "reply")).pipe(
                Effect.zipRight(messages.send(payload)),
                Effect.catchAll(Sends.orUndelivered)
              ),
            (m) => ({ target_type: "message", target_id: m.id, details: { local_id: m.local_id ?? 0 } })
          )
        ))
      .handle("resolveDelivery", ({ payload }) =>
        audited(
          "messages.resolve_delivery",
          { target_type: "message", details: { local_id: payload.local_id, outcome: payload.outcome } },
          messages.outgoing(payload.local_id).pipe(
            Effect.tap((m) => requireChat(m.bot_id, m.chat_id, "reply")),
            Effect.zipRight(messages.resolve(payload)),
            Effect.catchAll(Sends.orUndelivered)
          ),
          (m) => ({ target_id: m.id, bot_id: m.bot_id, chat_id: m.chat_id })
        ).pipe(
          Effect.catchTag("Undelivered", (e) =>
            Effect.succeed(HttpServerResponse.unsafeJson(e.body, { status: e.status })))
        ))))

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
      .handle("add", ({ payload }) =>
        audited(
          "tags.add",
          { target_type: "user", target_id: payload.user_id, bot_id: payload.bot_id ?? null, chat_id: payload.chat_id },
          throughBot(payload.bot_id, tags.add(payload)),
          (t) => ({ details: { tag: t.tag, tag_id: t.id } })
        ))
      .handle("remove", ({ urlParams }) =>
        audited(
          "tags.remove",
          { target_type: "tag", target_id: urlParams.id, bot_id: urlParams.bot_id ?? null },
          (urlParams.bot_id === undefined ? Effect.void : requireBot(urlParams.bot_id)).pipe(
            Effect.zipRight(ownTag(urlParams.id, urlParams.bot_id)),
            Effect.zipRight(tags.remove(urlParams.id)),
            Effect.catchAll(orDomain)
          )
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
        audited("keys.create", { target_type: "key" }, asAdmin(keys.create(payload)), (k) => ({
          target_id: k.id,
          details: { name: k.name, role: k.role, bot_ids: k.bot_ids }
        })))
      .handle("delete", ({ urlParams }) =>
        audited("keys.delete", { target_type: "key", target_id: urlParams.id }, asAdmin(keys.remove(urlParams.id))))
      .handle("toggle", ({ urlParams }) =>
        audited(
          "keys.toggle",
          { target_type: "key", target_id: urlParams.id },
          asAdmin(keys.toggle(urlParams.id)),
          (k) => ({ details: { enabled: k.enabled } })
        ))))

const LlmLive = HttpApiBuilder.group(Api, "llm", (handlers) =>
  Effect.map(LlmSettings.LlmSettings, (settings) =>
    handlers
      .handle("get", () => asAdmin(settings.view))
      .handle("update", ({ payload }) =>
        audited(
          "settings.update",
          { target_type: "settings", target_id: "llm", details: { fields: Object.keys(payload) } },
          asAdmin(settings.update(payload))
        ))))

/** Every group of the API, on the core services and the Telegram client. */
export const layer = Layer.mergeAll(
  HealthLive,
  StatusLive,
  BotsLive,
  DeliveriesLive,
  BotDeliveriesLive,
  RoutesLive,
  BridgesLive,
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
  AuditHandlers.AuditLive,
  ConfigHandlers.ConfigLive
).pipe(
  Layer.provide(AuthorizationLive)
)
