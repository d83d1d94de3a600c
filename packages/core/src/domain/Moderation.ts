import { Schema } from "effect"

/** The fields of Telegram's ChatAdministratorRights. */
export const rightNames = [
  "is_anonymous",
  "can_manage_chat",
  "can_delete_messages",
  "can_manage_video_chats",
  "can_restrict_members",
  "can_promote_members",
  "can_change_info",
  "can_invite_users",
  "can_post_stories",
  "can_edit_stories",
  "can_delete_stories",
  "can_post_messages",
  "can_edit_messages",
  "can_pin_messages",
  "can_manage_topics",
  "can_manage_direct_messages"
] as const
export type RightName = typeof rightNames[number]

/** The fields of Telegram's ChatPermissions. */
export const permissionNames = [
  "can_send_messages",
  "can_send_audios",
  "can_send_documents",
  "can_send_photos",
  "can_send_videos",
  "can_send_video_notes",
  "can_send_voice_notes",
  "can_send_polls",
  "can_send_other_messages",
  "can_add_web_page_previews",
  "can_change_info",
  "can_invite_users",
  "can_pin_messages",
  "can_manage_topics"
] as const
export type PermissionName = typeof permissionNames[number]

const booleans = <const K extends string>(names: ReadonlyArray<K>) =>
  Object.fromEntries(names.map((name) => [name, Schema.Boolean])) as { readonly [N in K]: typeof Schema.Boolean }

const optionalBooleans = <const K extends string>(names: ReadonlyArray<K>) =>
  Object.fromEntries(names.map((name) => [name, Schema.optionalWith(Schema.Boolean, { exact: true })])) as {
    readonly [N in K]: Schema.optionalWith<typeof Schema.Boolean, { exact: true }>
  }

/** An administrator's rights, every field present, by Telegram's ChatAdministratorRights names. */
export const AdminRights = Schema.Struct(booleans(rightNames)).annotations({ identifier: "AdminRights" })
export type AdminRights = typeof AdminRights.Type

/** Rights to grant (`POST /api/chats/promote`), by Telegram's names; an omitted right is not granted. */
export const RightsGrant = Schema.Struct(optionalBooleans(rightNames)).annotations({ identifier: "RightsGrant" })
export type RightsGrant = typeof RightsGrant.Type

/** What a restricted member may do (`POST /api/chats/restrict`), by Telegram's ChatPermissions names; omitted is false. */
export const ChatPermissions = Schema.Struct(optionalBooleans(permissionNames)).annotations({
  identifier: "ChatPermissions"
})
export type ChatPermissions = typeof ChatPermissions.Type

/** One administrator of a chat, as `GET /api/chats/admins` lists them. */
export const ChatAdministrator = Schema.Struct({
  user_id: Schema.Int,
  username: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  is_bot: Schema.Boolean,
  status: Schema.Literal("creator", "administrator"),
  custom_title: Schema.String,
  rights: AdminRights
}).annotations({ identifier: "ChatAdministrator" })
export type ChatAdministrator = typeof ChatAdministrator.Type

const BotId = Schema.Int.pipe(Schema.positive({ message: () => "bot_id must be a positive integer" }))
const ChatId = Schema.Int
const UserId = Schema.Int.pipe(Schema.positive({ message: () => "user_id must be a positive integer" }))
const MessageId = Schema.Int.pipe(Schema.positive({ message: () => "message_id must be a positive integer" }))
const UntilDate = Schema.Int.pipe(
  Schema.nonNegative({ message: () => "until_date must be Unix seconds (0 for ever)" })
)
const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** A chat of a bot: `POST /api/chats/leave`, and the query of `GET /api/chats/admins`. */
export const ChatRef = Schema.Struct({ bot_id: BotId, chat_id: ChatId }).annotations({ identifier: "ChatRef" })
export type ChatRef = typeof ChatRef.Type

/** A message of a chat of a bot: `POST /api/messages/delete` and `/unpin`. */
export const MessageRef = Schema.Struct({ bot_id: BotId, chat_id: ChatId, message_id: MessageId }).annotations({
  identifier: "MessageRef"
})
export type MessageRef = typeof MessageRef.Type

/** Body of `POST /api/messages/pin`. */
export const PinMessage = Schema.Struct({
  ...MessageRef.fields,
  disable_notification: optional(Schema.Boolean)
}).annotations({ identifier: "PinMessage" })
export type PinMessage = typeof PinMessage.Type

/** A member of a chat of a bot: `POST /api/chats/demote`. */
export const MemberRef = Schema.Struct({ bot_id: BotId, chat_id: ChatId, user_id: UserId }).annotations({
  identifier: "MemberRef"
})
export type MemberRef = typeof MemberRef.Type

/** Body of `POST /api/chats/ban`. */
export const BanMember = Schema.Struct({
  ...MemberRef.fields,
  until_date: optional(UntilDate),
  revoke_messages: optional(Schema.Boolean)
}).annotations({ identifier: "BanMember" })
export type BanMember = typeof BanMember.Type

/** Body of `POST /api/chats/unban`. */
export const UnbanMember = Schema.Struct({
  ...MemberRef.fields,
  only_if_banned: optional(Schema.Boolean)
}).annotations({ identifier: "UnbanMember" })
export type UnbanMember = typeof UnbanMember.Type

/** Body of `POST /api/chats/restrict`. */
export const RestrictMember = Schema.Struct({
  ...MemberRef.fields,
  permissions: ChatPermissions,
  until_date: optional(UntilDate)
}).annotations({ identifier: "RestrictMember" })
export type RestrictMember = typeof RestrictMember.Type

/** Body of `POST /api/chats/promote`. */
export const PromoteMember = Schema.Struct({
  ...MemberRef.fields,
  rights: RightsGrant
}).annotations({ identifier: "PromoteMember" })
export type PromoteMember = typeof PromoteMember.Type

/** Body of `POST /api/chats/admin-title`. */
export const AdminTitle = Schema.Struct({
  ...MemberRef.fields,
  title: Schema.String.pipe(Schema.maxLength(16, { message: () => "title must be at most 16 characters" }))
}).annotations({ identifier: "AdminTitle" })
export type AdminTitle = typeof AdminTitle.Type

/** What a moderation or chat-admin action does. */
export type ActionKind =
  | "delete"
  | "pin"
  | "unpin"
  | "ban"
  | "unban"
  | "restrict"
  | "promote"
  | "demote"
  | "admin_title"
  | "leave"
