import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import {
  type Accounts,
  type ApiKeys,
  type AuditLog,
  type Chat,
  Chats,
  People,
  type Person,
  type Scope,
  Statistics
} from "@botrelay/core"
import { Effect, Layer } from "effect"
import { Api, Caller } from "./Api.js"
import { orDomain, requireBot, requireChat, scopeOf } from "./Access.js"
import * as ApiError from "./ApiError.js"
import { actorOf, audited, record } from "./Audited.js"
import type { AssigneeFilter } from "./InboxApi.js"
import { AuthorizationLive } from "./Authentication.js"

/** The failures of the inbox services. */
type InboxError =
  | ApiError.ApiError
  | ApiError.DomainError
  | Chat.ChatNotFound
  | Chat.HistoryDisabled
  | Chat.InvalidAssignee
  | Person.PersonNotFound

/** Translates the inbox's own failures, and the others as every handler does. */
const orInbox = (e: InboxError): Effect.Effect<never, ApiError.ApiError> => {
  switch (e._tag) {
    case "ChatNotFound":
      return Effect.fail(new ApiError.NotFound({ error: e.message, code: "chat_not_found" }))
    case "PersonNotFound":
      return Effect.fail(new ApiError.NotFound({ error: e.message, code: "person_not_found" }))
    case "HistoryDisabled":
      return Effect.fail(new ApiError.Conflict({ error: e.message, code: "history_disabled" }))
    case "InvalidAssignee":
      return Effect.fail(
        new ApiError.BadRequest({
          error: e.message,
          code: "invalid_assignee",
          details: [{ path: "assignee_id", message: e.message }]
        })
      )
    default:
      return orDomain(e)
  }
}


/**
 * Runs `f` with the caller's readable scope once it may act on `botId` (when given; with `chatId`, may do
 * `ability` in that chat); failures become API errors.
 */
const inScope = <A, R>(
  botId: number | undefined,
  f: (scope: Scope.ChatScope) => Effect.Effect<A, InboxError, R>,
  chatId?: number,
  ability: Scope.Ability = "read"
) =>
  (botId === undefined ? Effect.void : chatId === undefined ? requireBot(botId) : requireChat(botId, chatId, ability)).pipe(
    Effect.zipRight(Caller),
    Effect.flatMap((caller) => f(scopeOf(caller))),
    Effect.catchAll(orInbox)
  )

/** A chat as the audit log records it. */
const onChat = (p: { readonly bot_id: number; readonly chat_id: number }) => ({
  target_type: "chat",
  target_id: p.chat_id,
  bot_id: p.bot_id,
  chat_id: p.chat_id
})

/** Account ids of `assignee=` values: `me` is the calling account (a key has none: 400), `none` is 0. */
const assigneeIds = (filter: ReadonlyArray<AssigneeFilter> | undefined) =>
  Effect.flatMap(Caller, (caller): Effect.Effect<ReadonlyArray<number> | undefined, ApiError.BadRequest> => {
    if (filter === undefined) return Effect.succeed(undefined)
    if (filter.includes("me") && caller.type !== "account") {
      const error = "assignee=me needs a signed-in account; an API key is assigned nothing"
      return Effect.fail(new ApiError.BadRequest({ error, code: "invalid_request", details: [{ path: "assignee", message: error }] }))
    }
    return Effect.succeed(filter.map((a) => a === "me" ? caller.id : a === "none" ? 0 : a))
  })

/** Changes a chat's conversation state: audited `chats.update` with `{field: [old, new]}` when something changed. */
const updateChat = (chats: Chats.ChatsService, payload: Chat.ChatUpdate) =>
  Effect.flatMap(Caller, (caller) =>
    requireChat(payload.bot_id, payload.chat_id, "reply").pipe(
      Effect.zipRight(chats.update(payload)),
      Effect.catchAll(orInbox),
      Effect.tapBoth({
        onSuccess: (change) =>
          Object.keys(change.changed).length === 0
            ? Effect.void
            : record("chats.update", actorOf(caller), "ok", { ...onChat(payload), details: change.changed }),
        onFailure: (e) =>
          e._tag === "Forbidden" ? Effect.void : record("chats.update", actorOf(caller), "failed", {
            ...onChat(payload),
            details: { error: e.error, code: e.code }
          })
      }),
      Effect.map((change) => change.chat)
    ))

const ChatsLive = HttpApiBuilder.group(Api, "chats", (handlers) =>
  Effect.map(Chats.Chats, (chats) =>
    handlers
      .handle("list", ({ urlParams }) =>
        inScope(urlParams.bot_id, (scope) =>
          Effect.flatMap(assigneeIds(urlParams.assignee), (assignees) =>
            chats.list({
              ...urlParams,
              statuses: urlParams.status,
              priorities: urlParams.priority,
              assignees
            }, scope))))
      .handle("update", ({ payload }) => updateChat(chats, payload))
      .handle("counts", ({ urlParams }) =>
        inScope(urlParams.bot_id, (scope) =>
          Effect.flatMap(Caller, (caller) => chats.counts(urlParams.bot_id, scope, caller.type === "account" ? caller.id : 0))))
      .handle("get", ({ urlParams }) =>
        inScope(urlParams.bot_id, () => chats.get(urlParams.bot_id, urlParams.chat_id), urlParams.chat_id))
      .handle("read", ({ payload }) =>
        audited(
          "chats.read",
          onChat(payload),
          inScope(payload.bot_id, () => chats.read(payload.bot_id, payload.chat_id), payload.chat_id, "reply")
        ))
      .handle("refresh", ({ payload }) =>
        audited(
          "chats.refresh",
          onChat(payload),
          inScope(payload.bot_id, () => chats.refresh(payload.bot_id, payload.chat_id), payload.chat_id, "moderate")
        ))))

const PeopleLive = HttpApiBuilder.group(Api, "people", (handlers) =>
  Effect.map(People.People, (people) =>
    handlers
      .handle("list", ({ urlParams }) =>
        inScope(urlParams.bot_id, (scope) => people.list(urlParams, scope), urlParams.chat_id))
      .handle("get", ({ urlParams }) => inScope(undefined, (scope) => people.get(urlParams.user_id, scope)))))

const StatsLive = HttpApiBuilder.group(Api, "stats", (handlers) =>
  Effect.map(Statistics.Statistics, (statistics) =>
    handlers.handle("get", ({ urlParams }) => inScope(urlParams.bot_id, (scope) => statistics.get(urlParams, scope)))))

/** The handlers of chats, people and stats, on the core services. */
export const layer: Layer.Layer<
  | HttpApiGroup.ApiGroup<"botrelay", "chats">
  | HttpApiGroup.ApiGroup<"botrelay", "people">
  | HttpApiGroup.ApiGroup<"botrelay", "stats">,
  never,
  Chats.Chats | People.People | Statistics.Statistics | ApiKeys.ApiKeys | Accounts.Accounts | AuditLog.AuditLog
> = Layer.mergeAll(ChatsLive, PeopleLive, StatsLive).pipe(Layer.provide(AuthorizationLive))
