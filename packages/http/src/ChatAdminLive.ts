import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { ChatAdmin } from "@botrelay/core"
// In scope so that the inferred types can name the services the handlers need.
import type { AuditLog as _AuditLog } from "@botrelay/core"
import { Effect } from "effect"
import { asChat } from "./Access.js"
import { Api } from "./Api.js"
import type * as ApiError from "./ApiError.js"
import { audited } from "./Audited.js"

const done = { ok: true } as const

/** A moderation action on the bot's scope, recorded with its chat and the user it concerns. */
const act = <E extends ApiError.DomainError>(
  action: string,
  payload: { readonly bot_id: number; readonly chat_id: number; readonly user_id?: number },
  effect: Effect.Effect<unknown, E>
) =>
  audited(
    action,
    {
      target_type: payload.user_id === undefined ? "chat" : "user",
      target_id: payload.user_id ?? payload.chat_id,
      bot_id: payload.bot_id,
      chat_id: payload.chat_id
    },
    asChat(payload.bot_id, payload.chat_id, "moderate", Effect.as(effect, done))
  )

/** The chat-admin endpoints, each on the bot's scope, through the one `ChatAdmin` service. */
export const layer = HttpApiBuilder.group(Api, "chatAdmin", (handlers) =>
  Effect.map(ChatAdmin.ChatAdmin, (admin) =>
    handlers
      .handle("admins", ({ urlParams }) => asChat(urlParams.bot_id, urlParams.chat_id, "read", admin.admins(urlParams)))
      .handle("ban", ({ payload }) => act("chats.ban", payload, admin.ban(payload)))
      .handle("unban", ({ payload }) => act("chats.unban", payload, admin.unban(payload)))
      .handle("restrict", ({ payload }) => act("chats.restrict", payload, admin.restrict(payload)))
      .handle("promote", ({ payload }) => act("chats.promote", payload, admin.promote(payload)))
      .handle("demote", ({ payload }) => act("chats.demote", payload, admin.demote(payload)))
      .handle("adminTitle", ({ payload }) => act("chats.admin_title", payload, admin.setTitle(payload)))
      .handle("leave", ({ payload }) => act("chats.leave", payload, admin.leave(payload)))))
