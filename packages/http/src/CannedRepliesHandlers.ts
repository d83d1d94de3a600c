import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { type Accounts, type ApiKeys, type AuditLog, Bots, CannedReplies, CannedReply, type Chat, Chats, Scope } from "@botrelay/core"
import { Effect, Layer } from "effect"
import { botScopeOf, orDomain, requireBotAbility, requireChat } from "./Access.js"
import { Api, Caller, type CallerInfo } from "./Api.js"
import * as ApiError from "./ApiError.js"
import { audited } from "./Audited.js"
import { AuthorizationLive } from "./Authentication.js"

/** The failures of canned replies. */
type RepliesError =
  | ApiError.ApiError
  | ApiError.DomainError
  | Chat.ChatNotFound
  | Chat.HistoryDisabled
  | CannedReply.CannedReplyNotFound
  | CannedReply.DuplicateCode

/** Translates the replies' own failures, and the others as every handler does. */
const orReplies = (e: RepliesError) => {
  switch (e._tag) {
    case "ChatNotFound":
      return Effect.fail(new ApiError.NotFound({ error: e.message, code: "chat_not_found" }))
    case "HistoryDisabled":
      return Effect.fail(new ApiError.Conflict({ error: e.message, code: "history_disabled" }))
    case "CannedReplyNotFound":
      return Effect.fail(new ApiError.NotFound({ error: e.message, code: "canned_reply_not_found" }))
    case "DuplicateCode":
      return Effect.fail(new ApiError.Conflict({ error: e.message, code: "duplicate_code" }))
    default:
      return orDomain(e)
  }
}

/** Whether the caller sees a reply: one for every bot, or for a bot in its scope. */
const visible = (caller: CallerInfo, reply: CannedReply.CannedReply) =>
  reply.bot_ids.length === 0 || reply.bot_ids.some((botId) => Scope.includes(botScopeOf(caller), botId))

/** Managing a reply limited to bots needs `reply` on each of them; one for every bot, any caller may manage. */
const mayManage = (botIds: ReadonlyArray<number>) =>
  Effect.forEach(botIds, (botId) => requireBotAbility(botId, "reply"), { discard: true })

/** A reply as the audit log records it. */
const onReply = (reply: CannedReply.CannedReply) => ({
  target_type: "canned_reply",
  target_id: reply.id,
  details: { code: reply.code, bot_ids: reply.bot_ids }
})

const CannedRepliesLive = HttpApiBuilder.group(Api, "cannedReplies", (handlers) =>
  Effect.gen(function*() {
    const replies = yield* CannedReplies.CannedReplies
    const chats = yield* Chats.Chats
    const bots = yield* Bots.Bots

    /** The reply, when the caller sees it (else not found, as if it did not exist) and may manage it. */
    const managed = (id: number) =>
      Effect.gen(function*() {
        const caller = yield* Caller
        const reply = yield* replies.get(id)
        if (!visible(caller, reply)) return yield* new CannedReply.CannedReplyNotFound({ id })
        yield* mayManage(reply.bot_ids)
        return reply
      })

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const caller = yield* Caller
          if (urlParams.bot_id !== undefined) yield* requireBotAbility(urlParams.bot_id, "read")
          const all = yield* replies.list(urlParams.bot_id)
          return all.filter((reply) => visible(caller, reply))
        }).pipe(Effect.catchAll(orReplies)))
      .handle("add", ({ payload }) =>
        audited(
          "canned_replies.add",
          { target_type: "canned_reply", details: { code: payload.code } },
          mayManage(payload.bot_ids).pipe(Effect.zipRight(replies.add(payload)), Effect.catchAll(orReplies)),
          onReply
        ))
      .handle("update", ({ payload }) =>
        audited(
          "canned_replies.update",
          { target_type: "canned_reply", target_id: payload.id },
          managed(payload.id).pipe(
            Effect.zipRight(payload.bot_ids === undefined ? Effect.void : mayManage(payload.bot_ids)),
            Effect.zipRight(replies.update(payload)),
            Effect.catchAll(orReplies)
          ),
          (reply) => ({ ...onReply(reply), details: { code: reply.code, bot_ids: reply.bot_ids, fields: Object.keys(payload).filter((k) => k !== "id") } })
        ))
      .handle("delete", ({ urlParams }) =>
        audited(
          "canned_replies.delete",
          { target_type: "canned_reply", target_id: urlParams.id },
          managed(urlParams.id).pipe(Effect.zipRight(replies.remove(urlParams.id)), Effect.catchAll(orReplies)),
          onReply
        ))
      .handle("render", ({ urlParams }) =>
        requireChat(urlParams.bot_id, urlParams.chat_id, "read").pipe(
          Effect.zipRight(Effect.all([bots.get(urlParams.bot_id), chats.get(urlParams.bot_id, urlParams.chat_id)])),
          Effect.flatMap(([bot, chat]) => replies.render(urlParams.code, chat, bot.name === "" ? bot.username : bot.name)),
          Effect.catchAll(orReplies)
        ))
  }))

/** The handlers of canned replies, on the core services. */
export const layer: Layer.Layer<
  HttpApiGroup.ApiGroup<"botrelay", "cannedReplies">,
  never,
  CannedReplies.CannedReplies | Chats.Chats | Bots.Bots | Accounts.Accounts | ApiKeys.ApiKeys | AuditLog.AuditLog
> = CannedRepliesLive.pipe(Layer.provide(AuthorizationLive))
