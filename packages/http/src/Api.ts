import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as OpenApi from "@effect/platform/OpenApi"
import {
  ApiKey,
  Bot,
  Bridge,
  ChatTag,
  Delivery,
  LlmSettings,
  LongPoll,
  Message,
  Outgoing,
  Route,
  RouteSend,
  Scope,
  Status
} from "@botrelay/core"
import { BotApi } from "@botrelay/telegram"
import { Context, type Redacted, Schema } from "effect"
import { AccountsGroup, LoginGroup, SessionGroup } from "./AccountsApi.js"
import * as ApiError from "./ApiError.js"
import { AuditGroup } from "./AuditApi.js"
import { ChatAdminGroup } from "./ChatAdminGroup.js"
import { ConfigGroup } from "./ConfigApi.js"
import { MediaGroup } from "./MediaGroup.js"
import { MessageActionsGroup } from "./MessageActionsGroup.js"
import { EventsGroup } from "./EventsApi.js"
import { ChatsGroup, PeopleGroup, StatsGroup } from "./InboxApi.js"
import { ChatId, ChatPageQuery, Id } from "./QueryParams.js"
import { SearchGroup } from "./SearchApi.js"
import { CannedRepliesGroup, NotesGroup, TimelineGroup } from "./NotesApi.js"
import { DeliveryFailedAnswer, DeliveryUnknownAnswer, DeliveryUnsentAnswer } from "./SendAnswers.js"

/**
 * Who makes the current request: an API key or a signed-in account, with the role and bot scope that
 * authorise it (one rule for both).
 */
export interface CallerInfo {
  readonly type: "key" | "account"
  readonly id: number
  readonly name: string
  readonly role: ApiKey.Role
  readonly bot_ids: ReadonlyArray<number>
  /** What it may do per bot and chat (admins: nothing listed, everything allowed). */
  readonly scopes: ReadonlyArray<Scope.Entry>
  /** The session of a signed-in account. */
  readonly session?: Redacted.Redacted<string>
}

/** The caller of the current request. */
export class Caller extends Context.Tag("@botrelay/http/Caller")<Caller, CallerInfo>() {}

/** Authentication: a Bearer API key, or the session cookie of a signed-in account. */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("@botrelay/http/Authorization", {
  failure: Schema.Union(ApiError.Unauthorized, ApiError.Forbidden, ApiError.TooManyRequests),
  provides: Caller,
  security: {
    bearer: HttpApiSecurity.bearer,
    session: HttpApiSecurity.apiKey({ key: "botrelay_session", in: "cookie" })
  }
}) {}

const IdParam = Schema.Struct({ id: Id })

/** Query of `GET /api/messages`. */
export const MessagesQuery = ChatPageQuery

/** `GET /api/health`. */
export const Health = Schema.Struct({ status: Schema.Literal("ok"), storage: Schema.Literal("ok") })

/** `GET /api/health` while the storage does not answer: 503. */
export class HealthUnavailable extends Schema.TaggedError<HealthUnavailable>()(
  "HealthUnavailable",
  {
    status: Schema.Literal("unavailable"),
    storage: Schema.Literal("unavailable"),
    error: Schema.String,
    code: Schema.Literal("storage_unavailable")
  },
  HttpApiSchema.annotations({ status: 503 })
) {}

/** Liveness and storage readiness; no key needed. */
export class HealthGroup extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .addError(HealthUnavailable)
  )
{}

/** Which instances run and which bots each runs; admins only. */
export class StatusGroup extends HttpApiGroup.make("status")
  .add(HttpApiEndpoint.get("get", "/status").addSuccess(Status.Status))
  .middleware(Authorization)
{}

/** Registered bots. */
export class BotsGroup extends HttpApiGroup.make("bots")
  .add(HttpApiEndpoint.get("list", "/").addSuccess(Schema.Array(Bot.BotView)))
  .add(HttpApiEndpoint.post("add", "/add").setPayload(Bot.NewBot).addSuccess(Bot.BotView))
  .add(HttpApiEndpoint.post("update", "/update").setPayload(Bot.BotUpdate).addSuccess(Bot.BotView))
  .add(HttpApiEndpoint.post("toggleDisabled", "/toggle-disabled").setUrlParams(IdParam).addSuccess(Bot.BotView))
  .add(HttpApiEndpoint.post("delete", "/delete").setUrlParams(IdParam).addSuccess(Bot.BotView))
  .add(
    HttpApiEndpoint.get("validate", "/validate")
      .setUrlParams(Schema.Struct({ token: Schema.String }))
      .addSuccess(BotApi.User)
  )
  .middleware(Authorization)
  .prefix("/bots")
{}

/** Query of `GET /api/deliveries`. */
export const DeliveriesQuery = Schema.Struct({
  bot_id: Schema.optionalWith(Id, { exact: true }),
  status: Schema.optionalWith(Delivery.DeliveryStatus, { exact: true }),
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(1, 500, { message: () => "limit must be an integer from 1 to 500" })
    ),
    { default: () => 100 }
  )
})

/** Query of `POST /api/deliveries/retry` and `/discard`: one delivery (`id`), or every dead one of a bot (`bot_id`). */
export const DeadQuery = Schema.Struct({
  id: Schema.optionalWith(Id, { exact: true }),
  bot_id: Schema.optionalWith(Id, { exact: true })
}).pipe(
  Schema.filter((q) => (q.id === undefined) !== (q.bot_id === undefined), {
    message: () => "give exactly one of id (one delivery) or bot_id (every dead delivery of the bot)"
  })
)

const listDeliveries = HttpApiEndpoint.get("list", "/")
  .setUrlParams(DeliveriesQuery)
  .addSuccess(Schema.Array(Delivery.Delivery))
const retryDeliveries = HttpApiEndpoint.post("retry", "/retry")
  .setUrlParams(DeadQuery)
  .addSuccess(Schema.Union(Delivery.Delivery, Delivery.Retried))
const discardDeliveries = HttpApiEndpoint.post("discard", "/discard")
  .setUrlParams(DeadQuery)
  .addSuccess(Schema.Union(Delivery.Delivery, Delivery.Discarded))
const replayDeliveries = HttpApiEndpoint.post("replay", "/replay")
  .setPayload(Delivery.ReplayRequest)
  .addSuccess(Delivery.Replayed)

/** The outbox: updates on their way to bots' backends; retries, discards and replays. */
export class DeliveriesGroup extends HttpApiGroup.make("deliveries")
  .add(listDeliveries)
  .add(retryDeliveries)
  .add(discardDeliveries)
  .add(replayDeliveries)
  .middleware(Authorization)
  .prefix("/deliveries")
{}

/** `/api/bots/deliveries`: the same endpoints as `/api/deliveries`, kept as aliases. */
export class BotDeliveriesGroup extends HttpApiGroup.make("botDeliveries")
  .add(listDeliveries)
  .add(retryDeliveries)
  .add(discardDeliveries)
  .add(replayDeliveries)
  .middleware(Authorization)
  .prefix("/bots/deliveries")
{}

/** Query of `GET /api/routes/sends`. */
export const SendsQuery = Schema.Struct({
  bot_id: Schema.optionalWith(Id, { exact: true }),
  status: Schema.optionalWith(RouteSend.SendStatus, { exact: true }),
  limit: DeliveriesQuery.fields.limit
})

/** Routes between bots. */
export class RoutesGroup extends HttpApiGroup.make("routes")
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(Schema.Struct({ bot_id: Schema.optional(Id) }))
    .addSuccess(Schema.Array(Route.Route)))
  .add(HttpApiEndpoint.post("add", "/add").setPayload(Route.NewRoute).addSuccess(Route.Route))
  .add(HttpApiEndpoint.post("update", "/update").setPayload(Route.RouteUpdate).addSuccess(Route.Route))
  .add(HttpApiEndpoint.post("delete", "/delete").setUrlParams(IdParam).addSuccess(Route.Route))
  .add(HttpApiEndpoint.get("sends", "/sends").setUrlParams(SendsQuery).addSuccess(Schema.Array(RouteSend.RouteSend)))
  .middleware(Authorization)
  .prefix("/routes")
{}

/** Bridges: outbound webhooks of live events; admins only. */
export class BridgesGroup extends HttpApiGroup.make("bridges")
  .add(HttpApiEndpoint.get("list", "/").addSuccess(Schema.Array(Bridge.Bridge)))
  .add(HttpApiEndpoint.post("add", "/add").setPayload(Bridge.NewBridge).addSuccess(Bridge.Bridge))
  .add(HttpApiEndpoint.post("update", "/update").setPayload(Bridge.BridgeUpdate).addSuccess(Bridge.Bridge))
  .add(HttpApiEndpoint.post("delete", "/delete").setUrlParams(IdParam).addSuccess(Bridge.Bridge))
  .middleware(Authorization)
  .prefix("/bridges")
{}

/** Stored message history, and sending through a bot. */
export class MessagesGroup extends HttpApiGroup.make("messages")
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(MessagesQuery).addSuccess(Schema.Array(Message.Message)))
  .add(
    HttpApiEndpoint.post("send", "/send")
      .setPayload(Message.SendMessage)
      .addSuccess(Message.Message)
      .addError(DeliveryFailedAnswer)
      .addError(DeliveryUnsentAnswer)
      .addError(DeliveryUnknownAnswer)
  )
  .add(
    HttpApiEndpoint.post("resolveDelivery", "/resolve-delivery")
      .setPayload(Outgoing.ResolveDelivery)
      .addSuccess(Message.Message)
      .addError(DeliveryFailedAnswer)
      .addError(DeliveryUnsentAnswer)
      .addError(DeliveryUnknownAnswer)
  )
  .middleware(Authorization)
  .prefix("/messages")
{}

/** Tags on users in chats. */
export class TagsGroup extends HttpApiGroup.make("tags")
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(Schema.Struct({ chat_id: ChatId, user_id: Schema.optional(Id), bot_id: Schema.optional(Id) }))
      .addSuccess(Schema.Array(ChatTag.Tag))
  )
  .add(HttpApiEndpoint.post("add", "/add").setPayload(ChatTag.NewTag).addSuccess(ChatTag.Tag))
  .add(
    HttpApiEndpoint.post("remove", "/remove")
      .setUrlParams(Schema.Struct({ id: Id, bot_id: Schema.optional(Id) }))
      .addSuccess(ChatTag.Tag)
  )
  .middleware(Authorization)
  .prefix("/tags")
{}

const maxSafe = Number.MAX_SAFE_INTEGER

/** An update type as `allowed_updates` names it. */
const UpdateTypeName = Schema.String.pipe(
  Schema.pattern(LongPoll.updateTypeName, {
    message: () => "update types are lowercase names such as message or callback_query"
  })
)

/** Comma-separated update types; "" means every type but chat_member, message_reaction and message_reaction_count. */
const AllowedUpdates = Schema.transform(Schema.String, Schema.Array(UpdateTypeName), {
  strict: true,
  decode: (s) => s.trim() === "" ? [] : s.split(",").map((t) => t.trim()),
  encode: (types) => types.join(",")
}).pipe(
  Schema.filter((types) => types.length <= LongPoll.maxAllowedUpdates, {
    message: () => `allowed_updates may name at most ${LongPoll.maxAllowedUpdates} update types`
  })
).annotations({ description: "comma-separated update types, remembered per bot; empty for Telegram's default" })

/** Query of `GET /api/updates/poll`: Telegram's getUpdates parameters, out-of-range values refused. */
export const PollQuery = Schema.Struct({
  bot_id: Id,
  offset: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(-maxSafe, maxSafe, { message: () => "offset must be an integer" })
    ),
    { default: () => 0 }
  ),
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(1, LongPoll.maxLimit, { message: () => `limit must be an integer from 1 to ${LongPoll.maxLimit}` })
    ),
    { default: () => LongPoll.maxLimit }
  ),
  timeout: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(0, LongPoll.maxTimeout, {
        message: () => `timeout must be a whole number of seconds from 0 to ${LongPoll.maxTimeout}`
      })
    ),
    { default: () => 0 }
  ),
  allowed_updates: Schema.optionalWith(AllowedUpdates, { exact: true })
})

/** A Telegram Update object, as Telegram sent it. */
export const Update = Schema.Struct(
  { update_id: Schema.Int },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({ identifier: "Update" })

/** A bot's long-poll buffer, served with Telegram's getUpdates semantics. */
export class UpdatesGroup extends HttpApiGroup.make("updates")
  .add(HttpApiEndpoint.get("poll", "/poll").setUrlParams(PollQuery).addSuccess(Schema.Array(Update)))
  .middleware(Authorization)
  .prefix("/updates")
{}

/** API keys. */
export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(HttpApiEndpoint.get("list", "/").addSuccess(Schema.Array(ApiKey.ApiKey)))
  .add(HttpApiEndpoint.post("create", "/").setPayload(ApiKey.NewApiKey).addSuccess(ApiKey.CreatedApiKey))
  .add(HttpApiEndpoint.post("delete", "/delete").setUrlParams(IdParam).addSuccess(ApiKey.ApiKey))
  .add(HttpApiEndpoint.post("toggle", "/toggle").setUrlParams(IdParam).addSuccess(ApiKey.ApiKey))
  .add(HttpApiEndpoint.post("update", "/update").setPayload(ApiKey.ApiKeyUpdate).addSuccess(ApiKey.ApiKey))
  .middleware(Authorization)
  .prefix("/auth/api-keys")
{}

/** The LLM router's settings. */
export class LlmGroup extends HttpApiGroup.make("llm")
  .add(HttpApiEndpoint.get("get", "/").addSuccess(LlmSettings.LlmSettingsView))
  .add(
    HttpApiEndpoint.post("update", "/")
      .setPayload(LlmSettings.LlmSettingsUpdate)
      .addSuccess(LlmSettings.LlmSettingsView)
  )
  .middleware(Authorization)
  .prefix("/llm")
{}

type Json = { [key: string]: unknown }

const decodeErrorRef = "#/components/schemas/HttpApiDecodeError"

/**
 * Documents errors as they travel: `{ error, code, details? }` without the `_tag` used inside,
 * and decode failures as `BadRequest` rather than the platform's own shape.
 */
const documentWireErrors = (spec: Json): Json => {
  const schemas = ((spec.components as Json).schemas ?? {}) as Record<string, Json>
  for (const name of [...Object.keys(ApiError.status), "HealthUnavailable"]) {
    const schema = schemas[name]
    if (schema === undefined) continue
    delete (schema.properties as Json)._tag
    schema.required = (schema.required as Array<string>).filter((field) => field !== "_tag")
  }
  delete schemas.HttpApiDecodeError
  delete schemas.Issue
  delete schemas.PropertyKey
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.filter((n) => (n as Json)?.$ref !== decodeErrorRef).map(strip)
    if (typeof node !== "object" || node === null) return node
    const out: Json = {}
    for (const [key, value] of Object.entries(node)) out[key] = strip(value)
    const anyOf = out.anyOf as Array<unknown> | undefined
    if (anyOf !== undefined && anyOf.length === 1) {
      delete out.anyOf
      Object.assign(out, anyOf[0])
    }
    return out
  }
  return { ...spec, paths: strip(spec.paths) }
}

/** The Botrelay management API. */
export class Api extends HttpApi.make("botrelay")
  .add(HealthGroup)
  .add(StatusGroup)
  .add(BotsGroup)
  .add(DeliveriesGroup)
  .add(BotDeliveriesGroup)
  .add(RoutesGroup)
  .add(BridgesGroup)
  .add(MessagesGroup)
  .add(TagsGroup)
  .add(UpdatesGroup)
  .add(ApiKeysGroup)
  .add(LlmGroup)
  .add(MessageActionsGroup.middleware(Authorization))
  .add(ChatAdminGroup.middleware(Authorization))
  .add(MediaGroup.middleware(Authorization))
  .add(EventsGroup.middleware(Authorization))
  .add(ChatsGroup.middleware(Authorization))
  .add(PeopleGroup.middleware(Authorization))
  .add(StatsGroup.middleware(Authorization))
  .add(SearchGroup.middleware(Authorization))
  .add(AuditGroup.middleware(Authorization))
  .add(ConfigGroup.middleware(Authorization))
  .add(LoginGroup)
  .add(SessionGroup.middleware(Authorization))
  .add(AccountsGroup.middleware(Authorization))
  .add(NotesGroup.middleware(Authorization))
  .add(TimelineGroup.middleware(Authorization))
  .add(CannedRepliesGroup.middleware(Authorization))
  .addError(ApiError.BadRequest)
  .addError(ApiError.Unauthorized)
  .addError(ApiError.Forbidden)
  .addError(ApiError.NotFound)
  .addError(ApiError.Conflict)
  .addError(ApiError.UnprocessableEntity)
  .addError(ApiError.TooManyRequests)
  .addError(ApiError.InternalServerError)
  .addError(ApiError.BadGateway)
  .addError(ApiError.ServiceUnavailable)
  .addError(ApiError.GatewayTimeout)
  .prefix("/api")
  .annotate(OpenApi.Title, "Botrelay API")
  .annotate(OpenApi.Description, "Manage, monitor and route Telegram bots.")
  .annotate(OpenApi.Transform, documentWireErrors)
{}
