import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Moderation } from "@botrelay/core"
import { Schema } from "effect"
import { ChatId, Id } from "./QueryParams.js"


/** Query of `GET /api/chats/admins`. */
export const AdminsQuery = Schema.Struct({ bot_id: Id, chat_id: ChatId })

/** `{"ok": true}`: the answer of an action that returns nothing else. */
export const Done = Schema.Struct({ ok: Schema.Literal(true) }).annotations({ identifier: "Done" })

/**
 * Moderation and administration of a chat through a bot, at full paths under /api/chats (the chats
 * themselves are another group's). Authorization is applied where the group joins the `Api`.
 */
export class ChatAdminGroup extends HttpApiGroup.make("chatAdmin")
  .add(
    HttpApiEndpoint.get("admins", "/chats/admins")
      .setUrlParams(AdminsQuery)
      .addSuccess(Schema.Array(Moderation.ChatAdministrator))
  )
  .add(HttpApiEndpoint.post("ban", "/chats/ban").setPayload(Moderation.BanMember).addSuccess(Done))
  .add(HttpApiEndpoint.post("unban", "/chats/unban").setPayload(Moderation.UnbanMember).addSuccess(Done))
  .add(HttpApiEndpoint.post("restrict", "/chats/restrict").setPayload(Moderation.RestrictMember).addSuccess(Done))
  .add(HttpApiEndpoint.post("promote", "/chats/promote").setPayload(Moderation.PromoteMember).addSuccess(Done))
  .add(HttpApiEndpoint.post("demote", "/chats/demote").setPayload(Moderation.MemberRef).addSuccess(Done))
  .add(HttpApiEndpoint.post("adminTitle", "/chats/admin-title").setPayload(Moderation.AdminTitle).addSuccess(Done))
  .add(HttpApiEndpoint.post("leave", "/chats/leave").setPayload(Moderation.ChatRef).addSuccess(Done))
{}
