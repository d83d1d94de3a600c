import { HttpApiBuilder } from "@effect/platform"
import { ChatAdmin } from "@botrelay/core"
import { Effect } from "effect"
import { asBot } from "./Access.js"
import { Api } from "./Api.js"

const done = { ok: true } as const

/** The chat-admin endpoints, each on the bot's scope, through the one `ChatAdmin` service. */
export const layer = HttpApiBuilder.group(Api, "chatAdmin", (handlers) =>
  Effect.map(ChatAdmin.ChatAdmin, (admin) =>
    handlers
      .handle("admins", ({ urlParams }) => asBot(urlParams.bot_id, admin.admins(urlParams)))
      .handle("ban", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.ban(payload), done)))
      .handle("unban", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.unban(payload), done)))
      .handle("restrict", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.restrict(payload), done)))
      .handle("promote", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.promote(payload), done)))
      .handle("demote", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.demote(payload), done)))
      .handle("adminTitle", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.setTitle(payload), done)))
      .handle("leave", ({ payload }) => asBot(payload.bot_id, Effect.as(admin.leave(payload), done)))))
