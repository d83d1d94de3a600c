import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
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
  type Scope,
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
import { Api, Caller, type CallerInfo, type DeadQuery, type DeliveriesQuery, HealthUnavailable } from "./Api.js"
import { AuthorizationLive } from "./Authentication.js"
import {
  asAdmin,
  asBot,
  asChat,
  forbidden,
  mayOnBot,
  orDomain,
  requireAdmin,
  requireBot,
  requireBotAbility,
  requireChat,
  requireOptionalBot,
  requireOptionalBotAbility,
  requireTarget,
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

/** Whether the caller may configure every one of the bots: admins always; others some bots, each with configure. */
const configures = (caller: CallerInfo, botIds: ReadonlyArray<number>) =>
  caller.role === "admin" || (botIds.length > 0 && botIds.every((id) => mayOnBot(caller, id, "configure")))

/** Runs `effect` when the caller may configure every one of the bots (none: every bot, admins only). */
const configuring = <A, R>(botIds: ReadonlyArray<number>, effect: Effect.Effect<A, ApiError.ApiError | ApiError.DomainError, R>) =>
  Effect.flatMap(Caller, (caller) =>
    configures(caller, botIds)
      ? effect
      : botIds.length === 0
      ? forbidden(`this needs an admin ${caller.type}`)
      : Effect.forEach(botIds, (id) => requireBotAbility(id, "configure"), { discard: true }).pipe(
        Effect.zipRight(effect)
      )).pipe(Effect.catchAll(orDomain))

/** The bots a route joins; none when there is no such route. */
const routeBots = (routes: Routes.RoutesService, id: number) =>
  Effect.map(routes.list(), (list) => list.filter((r) => r.id === id).flatMap((r) => [r.source_bot_id, r.target_bot_id]))

/** The bots a bridge follows (none: every bot, or no such bridge). */
const bridgeBots = (bridges: Bridges.BridgesService, id: number) =>
  Effect.map(bridges.list, (list) => list.find((b) => b.id === id)?.bot_ids ?? [])

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
            : all.filter((b) => key.scopes.some((e) => e.bot_id === b.id)).map((b) =>
              Bot.view({ ...b, backend_url: withoutCredentials(b.backend_url) })
            )
        }))
      .handle("add", ({ payload }) =>
        audited("bots.add", { target_type: "bot" }, asAdmin(Effect.map(bots.add(payload), Bot.view)), botTarget))
      .handle("update", ({ payload }) =>
        audited(
          "bots.update",
          { target_type: "bot", target_id: payload.id, bot_id: payload.id, details: { fields: Object.keys(payload) } },
          ("token" in payload ? requireAdmin : requireBotAbility(payload.id, "configure")).pipe(
            Effect.zipRight(Effect.all([Caller, bots.update(payload)])),
            Effect.map(([caller, bot]) =>
              Bot.view(caller.role === "admin" ? bot : { ...bot, backend_url: withoutCredentials(bot.backend_url) })
            ),
            Effect.catchAll(orDomain)
          )
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
    requireOptionalBotAbility(urlParams.bot_id, "read").pipe(
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
          Effect.flatMap((d) => requireBotAbility(d.bot_id, "configure")),
          Effect.zipRight(deliveries.retry(id)),
          Effect.catchAll(orDomain)
        ),
        (d): Target => ({ bot_id: d.bot_id, details: { retried: 1, update_id: d.update_id } })
      )
      : audited(
        "deliveries.retry",
        { target_type: "bot", target_id: bot_id!, bot_id: bot_id! },
        asBot(bot_id!, "configure", Effect.map(deliveries.retryDead(bot_id!), (retried) => ({ retried }))),
        (r): Target => ({ details: r })
      ),
  discard: ({ urlParams: { bot_id, id } }: { readonly urlParams: typeof DeadQuery.Type }) =>
    id !== undefined
      ? audited(
        "deliveries.discard",
        { target_type: "delivery", target_id: id },
        deliveries.get(id).pipe(
          Effect.flatMap((d) => requireBotAbility(d.bot_id, "configure")),
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
        asBot(bot_id!, "configure", Effect.map(deliveries.discardDead(bot_id!), (discarded) => ({ discarded }))),
        (r): Target => ({ details: r })
      ),
  replay: ({ payload }: { readonly payload: Delivery.ReplayRequest }) => {
    const { bot_id, ...range } = payload
    return audited(
      "deliveries.replay",
      { target_type: "bot", target_id: bot_id, bot_id, details: range },
      asBot(bot_id, "configure", deliveries.replay(payload)),
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
        requireOptionalBotAbility(urlParams.bot_id, "read").pipe(
          Effect.zipRight(routes.list(urlParams.bot_id)),
          Effect.catchAll(orDomain)
        ))
      .handle("add", ({ payload }) =>
        audited(
          "routes.add",
          { target_type: "route", bot_id: payload.source_bot_id },
          configuring([payload.source_bot_id, payload.target_bot_id], routes.add(payload)),
          (r) => ({ target_id: r.id })
        ))
      .handle("sends", ({ urlParams }) =>
        requireOptionalBot(urlParams.bot_id).pipe(
          Effect.zipRight(Effect.all([Caller, routes.sends(urlParams)])),
          Effect.map(([key, sends]) => sends.map((s) => mayOnBot(key, s.source_bot_id, "read") ? s : { ...s, payload: "" })),
          Effect.catchAll(orDomain)
        ))
      .handle("update", ({ payload }) =>
        audited(
          "routes.update",
          { target_type: "route", target_id: payload.id, bot_id: payload.source_bot_id },
          routeBots(routes, payload.id).pipe(
            Effect.flatMap((current) =>
              configuring([...current, payload.source_bot_id, payload.target_bot_id], routes.update(payload))
            ),
            Effect.catchAll(orDomain)
          )
        ))
      .handle("delete", ({ urlParams }) =>
        audited(
          "routes.delete",
          { target_type: "route", target_id: urlParams.id },
          routeBots(routes, urlParams.id).pipe(
            Effect.flatMap((current) => configuring(current, routes.remove(urlParams.id))),
            Effect.catchAll(orDomain)
          )
        ))))

const BridgesLive = HttpApiBuilder.group(Api, "bridges", (handlers) =>
  Effect.map(Bridges.Bridges, (bridges) =>
    handlers
      .handle("list", () =>
        Effect.flatMap(Caller, (caller) =>
          caller.role === "admin" || caller.scopes.some((e) => e.chat_ids.length === 0 && e.abilities.includes("configure"))
            ? Effect.map(bridges.list, (list) => list.filter((b) => configures(caller, b.bot_ids))).pipe(
              Effect.catchAll(orDomain)
            )
            : forbidden(`this needs an admin ${caller.type}, or configure on a bot`)))
      .handle("add", ({ payload }) =>
        audited("bridges.add", { target_type: "bridge" }, configuring(payload.bot_ids, bridges.add(payload)), (b) => ({
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
          bridgeBots(bridges, payload.id).pipe(
            Effect.flatMap((current) =>
              configuring(current, configuring(payload.bot_ids ?? current, bridges.update(payload)))
            ),
            Effect.catchAll(orDomain)
          )
        ))
      .handle("delete", ({ urlParams }) =>
        audited(
          "bridges.delete",
          { target_type: "bridge", target_id: urlParams.id },
          bridgeBots(bridges, urlParams.id).pipe(
            Effect.flatMap((current) => configuring(current, bridges.remove(urlParams.id))),
            Effect.catchAll(orDomain)
          )
        ))))

const MessagesLive = HttpApiBuilder.group(Api, "messages", (handlers) =>
  Effect.map(Messages.Messages, (messages) =>
    handlers
      .handle("list", ({ urlParams }) =>
        asChat(
          urlParams.bot_id,
          urlParams.chat_id,
          "read",
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
            requireTarget(payload.bot_id, payload.chat_id, "reply").pipe(
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
    const throughChat = <A>(
      botId: number | undefined,
      chatId: number,
      ability: Scope.Ability,
      effect: Effect.Effect<A, ApiError.DomainError>
    ) =>
      (botId === undefined ? requireOptionalBot(botId) : requireChat(botId, chatId, ability)).pipe(
        Effect.zipRight(botId === undefined ? Effect.void : Effect.asVoid(bots.get(botId))),
        Effect.zipRight(effect),
        Effect.catchAll(orDomain)
      )
    /** The tag, when it belongs to `botId` (if given) and to a bot in the key's scope; else "not found", as if it did not exist. */
    const ownTag = (id: number, botId: number | undefined) =>
      Effect.gen(function*() {
        const key = yield* Caller
        const tag = yield* tags.get(id)
        const visible = (botId === undefined || tag.bot_id === botId) && sees(key, tag.bot_id, tag.chat_id)
        if (!visible) return yield* Effect.fail(new ChatTag.TagNotFound({ id }))
        if (key.role !== "admin") yield* requireChat(tag.bot_id, tag.chat_id, "reply")
        return tag
      })
    return handlers
      .handle("list", ({ urlParams }) => throughChat(urlParams.bot_id, urlParams.chat_id, "read", tags.list(urlParams)))
      .handle("add", ({ payload }) =>
        audited(
          "tags.add",
          { target_type: "user", target_id: payload.user_id, bot_id: payload.bot_id ?? null, chat_id: payload.chat_id },
          throughChat(payload.bot_id, payload.chat_id, "reply", tags.add(payload)),
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
        "read",
        bots.get(bot_id).pipe(
          Effect.flatMap((bot) => longPoll.getUpdates(bot, params)),
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
      .handle("update", ({ payload }) =>
        audited(
          "keys.update",
          { target_type: "key", target_id: payload.id },
          asAdmin(keys.update(payload)),
          (k) => ({ details: { scopes: k.scopes } })
        ))
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
