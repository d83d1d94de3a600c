import type { BotApi } from "@botrelay/telegram"
import { type Answer, badRequest, type Failure, isFailure, ok } from "./Answer.js"
import { chatFor, groupOf, history, isMember } from "./Chats.js"
import { asBool, asInt, asObject, asText, isEmpty, type Json, type Params } from "./Params.js"
import type { Admin, Bot, Group, Handler, State } from "./State.js"

/** ChatAdministratorRights fields every chat type has. */
const commonRights = [
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
  "can_delete_stories"
] as const

/** ChatAdministratorRights fields of channels only. */
const channelRights = ["can_post_messages", "can_edit_messages", "can_manage_direct_messages"] as const

/** ChatAdministratorRights fields of groups and supergroups only. */
const groupRights = ["can_pin_messages", "can_manage_topics"] as const

/** Every ChatAdministratorRights field, as `promoteChatMember` takes them. */
export const rightNames: ReadonlyArray<string> = [...commonRights, ...channelRights, ...groupRights]

/** Every ChatPermissions field. */
export const permissionNames: ReadonlyArray<string> = [
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
]

/** The rights fields a chat of this type shows. */
const rightsOf = (chat: BotApi.Chat): ReadonlyArray<string> =>
  chat.type === "channel" ? [...commonRights, ...channelRights] : [...commonRights, ...groupRights]

/** Rights by name from `values` (booleans or their texts); absent ones false. */
export const rightsFrom = (values: Params): Record<string, boolean> =>
  Object.fromEntries(rightNames.map((name) => [name, asBool(values[name])]))

const invalidUserId = badRequest("invalid user_id specified")
const userNotFound = badRequest("user not found")
const ownerStays = badRequest("can't remove chat owner")
const isAnAdmin = badRequest("user is an administrator of the chat")
const cannotRestrict = badRequest("not enough rights to restrict/unrestrict chat member")
const cannotPin = badRequest("not enough rights to manage pinned messages in the chat")
const supergroupsOnly = badRequest("method is available only for supergroups")
const supergroupsAndChannelsOnly = badRequest("method is available for supergroup and channel chats only")

/** The user (person or bot) with this id, if the fake knows one. */
export const userOf = (state: State, id: number): BotApi.User | undefined =>
  state.people.get(id)?.user ?? state.botsById.get(id)?.user

/** The bot's administrator record in the group, if it is an administrator. */
const adminOf = (group: Group, bot: Bot): Admin | undefined => group.admins.get(bot.id)

/** Whether the bot holds `right` in the group. */
export const holds = (group: Group, bot: Bot, right: string): boolean => adminOf(group, bot)?.rights[right] === true

/** Whether a bot or person is in the group now. */
const inGroup = (state: State, group: Group, userId: number): boolean => {
  const bot = state.botsById.get(userId)
  return bot !== undefined ? isMember(group, bot) : group.users.has(userId)
}

/** A ChatMember object as `getChatMember` and `getChatAdministrators` answer for `viewer`. */
export const memberOf = (state: State, group: Group, user: BotApi.User, viewer: Bot): Json => {
  if (group.creator === user.id) return { status: "creator", user, is_anonymous: false }
  const admin = group.admins.get(user.id)
  if (admin !== undefined && inGroup(state, group, user.id)) {
    return {
      status: "administrator",
      user,
      can_be_edited: admin.promotedBy === viewer.id,
      ...Object.fromEntries(rightsOf(group.chat).map((name) => [name, admin.rights[name] === true])),
      ...(admin.custom_title === "" ? {} : { custom_title: admin.custom_title })
    }
  }
  const banned = group.banned.get(user.id)
  if (banned !== undefined) return { status: "kicked", user, until_date: banned }
  const restricted = group.restricted.get(user.id)
  if (restricted !== undefined) {
    return {
      status: "restricted",
      user,
      is_member: inGroup(state, group, user.id),
      ...Object.fromEntries(permissionNames.map((name) => [name, restricted.permissions[name] === true])),
      until_date: restricted.until_date
    }
  }
  return { status: inGroup(state, group, user.id) ? "member" : "left", user }
}

/** How many are in the group: its people and its bots. */
export const memberCount = (state: State, group: Group): number =>
  group.users.size + [...state.botsById.values()].filter((bot) => isMember(group, bot)).length

/** The chat `params.chat_id` names, for `bot`, with its group when it is not a private chat. */
const chatOf = (
  state: State,
  bot: Bot,
  params: Params,
  use: "read" | "write"
): { readonly chat: BotApi.Chat; readonly group: Group | undefined } | Failure => {
  const chat = chatFor(state, bot, params["chat_id"], use)
  if (isFailure(chat)) return chat
  return { chat, group: chat.type === "private" ? undefined : groupOf(state, chat.id) }
}

/** The user `params.user_id` names in a group of `bot`. */
const targetOf = (
  state: State,
  bot: Bot,
  params: Params
): { readonly chat: BotApi.Chat; readonly group: Group; readonly user: BotApi.User } | Failure => {
  const id = asInt(params["user_id"])
  if (id === undefined || id <= 0) return invalidUserId
  const found = chatOf(state, bot, params, "write")
  if (isFailure(found)) return found
  if (found.group === undefined) return badRequest("chat member status can't be changed in private chats")
  const user = userOf(state, id)
  return user === undefined ? userNotFound : { chat: found.chat, group: found.group, user }
}

/**
 * Why the bot may not ban, unban or restrict `user` in a supergroup or channel, as Telegram says it: the
 * owner stays, the bot needs `can_restrict_members`, and administrators that someone else promoted are out of reach.
 */
const restrictRefusal = (group: Group, bot: Bot, user: BotApi.User): Failure | undefined => {
  if (group.creator === user.id) return ownerStays
  if (!holds(group, bot, "can_restrict_members")) return cannotRestrict
  const admin = group.admins.get(user.id)
  return admin !== undefined && admin.promotedBy !== bot.id ? isAnAdmin : undefined
}

/** The ChatPermissions of a `permissions` parameter, or Telegram's refusal. */
const permissionsOf = (value: unknown): Record<string, boolean> | Failure => {
  const permissions = asObject(value)
  if (permissions === undefined) return badRequest("can't parse permissions JSON object")
  return Object.fromEntries(permissionNames.map((name) => [name, asBool(permissions[name])]))
}

/** The message a pin or unpin names in the chat, or Telegram's refusal. */
const pinTarget = (state: State, bot: Bot, params: Params) => {
  const found = chatOf(state, bot, params, "write")
  if (isFailure(found)) return found
  const { chat, group } = found
  if (group !== undefined) {
    const right = chat.type === "channel" ? "can_edit_messages" : "can_pin_messages"
    if (!holds(group, bot, right)) return cannotPin
  }
  return { chatHistory: history(state, bot, chat), id: asInt(params["message_id"]) }
}

/** The chat methods of moderation and administration, and `getChat`. */
export const adminMethods = (state: State): Readonly<Record<string, Handler>> => {
  const getChatMemberCount: Handler = (bot, params) => {
    const found = chatOf(state, bot, params, "read")
    if (isFailure(found)) return found
    return ok(found.group === undefined ? 2 : memberCount(state, found.group))
  }
  return {
    getChat: (bot, params) => {
      const found = chatOf(state, bot, params, "read")
      if (isFailure(found)) return found
      const { chat, group } = found
      const chatHistory = history(state, bot, chat)
      const pinnedId = chatHistory.pinned.at(-1)
      const pinned = pinnedId === undefined ? undefined : chatHistory.messages.get(pinnedId)
      return ok({
        ...chat,
        accent_color_id: Math.abs(chat.id) % 7,
        max_reaction_count: 11,
        ...(group === undefined || chat.type === "channel"
          ? {}
          : { permissions: Object.fromEntries(permissionNames.map((name) => [name, true])) }),
        ...(pinned === undefined ? {} : { pinned_message: pinned })
      })
    },
    getChatMemberCount,
    getChatMembersCount: getChatMemberCount,
    getChatAdministrators: (bot, params) => {
      const found = chatOf(state, bot, params, "read")
      if (isFailure(found)) return found
      const { group } = found
      if (group === undefined) return badRequest("there are no administrators in the private chat")
      const ids = [...(group.creator === undefined ? [] : [group.creator]), ...group.admins.keys()]
      return ok(ids.flatMap((id) => {
        const user = userOf(state, id)
        const member = user === undefined ? undefined : memberOf(state, group, user, bot)
        return member === undefined || (member.status !== "creator" && member.status !== "administrator")
          ? []
          : [member]
      }))
    },
    getChatMember: (bot, params) => {
      const id = asInt(params["user_id"])
      if (id === undefined || id <= 0) return invalidUserId
      const found = chatOf(state, bot, params, "read")
      if (isFailure(found)) return found
      const user = userOf(state, id)
      if (user === undefined) return userNotFound
      if (found.group === undefined) {
        return ok({ status: id === found.chat.id || id === bot.id ? "member" : "left", user })
      }
      return ok(memberOf(state, found.group, user, bot))
    },
    banChatMember: (bot, params) => {
      const target = targetOf(state, bot, params)
      if (isFailure(target)) return target
      const { group, user } = target
      if (group.chat.type === "group") {
        if (group.creator === user.id) return ownerStays
        if (adminOf(group, bot) === undefined) return badRequest("CHAT_ADMIN_REQUIRED")
      } else {
        const refusal = restrictRefusal(group, bot, user)
        if (refusal !== undefined) return refusal
      }
      group.banned.set(user.id, asInt(params["until_date"]) ?? 0)
      group.users.delete(user.id)
      group.admins.delete(user.id)
      group.restricted.delete(user.id)
      const member = state.botsById.get(user.id)
      if (member !== undefined) group.left.add(member.id)
      return ok(true)
    },
    unbanChatMember: (bot, params) => {
      const target = targetOf(state, bot, params)
      if (isFailure(target)) return target
      const { group, user } = target
      if (group.chat.type === "group") return supergroupsAndChannelsOnly
      if (asBool(params["only_if_banned"]) && !group.banned.has(user.id)) return ok(true)
      const refusal = restrictRefusal(group, bot, user)
      if (refusal !== undefined) return refusal
      group.banned.delete(user.id)
      group.restricted.delete(user.id)
      group.users.delete(user.id)
      return ok(true)
    },
    restrictChatMember: (bot, params) => {
      const target = targetOf(state, bot, params)
      if (isFailure(target)) return target
      const { group, user } = target
      if (group.chat.type !== "supergroup") return supergroupsOnly
      const permissions = permissionsOf(params["permissions"])
      if (isFailure(permissions)) return permissions
      const refusal = restrictRefusal(group, bot, user)
      if (refusal !== undefined) return refusal
      group.admins.delete(user.id)
      if (Object.values(permissions).every((allowed) => allowed)) group.restricted.delete(user.id)
      else group.restricted.set(user.id, { permissions, until_date: asInt(params["until_date"]) ?? 0 })
      return ok(true)
    },
    promoteChatMember: (bot, params) => {
      const target = targetOf(state, bot, params)
      if (isFailure(target)) return target
      const { group, user } = target
      if (group.chat.type === "group") return supergroupsAndChannelsOnly
      if (group.creator === user.id) return ownerStays
      if (user.id === bot.id) return badRequest("can't promote self")
      if (!holds(group, bot, "can_promote_members")) return badRequest("not enough rights")
      const current = group.admins.get(user.id)
      if (current !== undefined && current.promotedBy !== bot.id) return badRequest("CHAT_ADMIN_REQUIRED")
      const rights = rightsFrom(params)
      const granted = Object.entries(rights).filter(([, value]) => value).map(([name]) => name)
      if (granted.length === 0) {
        group.admins.delete(user.id)
        return ok(true)
      }
      if (granted.some((name) => name !== "is_anonymous" && !holds(group, bot, name))) {
        return badRequest("RIGHT_FORBIDDEN")
      }
      group.admins.set(user.id, { rights, custom_title: current?.custom_title ?? "", promotedBy: bot.id })
      group.restricted.delete(user.id)
      group.banned.delete(user.id)
      if (!state.botsById.has(user.id)) group.users.add(user.id)
      return ok(true)
    },
    setChatAdministratorCustomTitle: (bot, params) => {
      const target = targetOf(state, bot, params)
      if (isFailure(target)) return target
      const { group, user } = target
      if (group.chat.type === "channel") return badRequest("method is available only for groups and supergroups")
      if (group.creator === user.id) return badRequest("only the owner can edit their custom title")
      const admin = group.admins.get(user.id)
      if (admin === undefined) return badRequest("user is not an administrator")
      if (admin.promotedBy !== bot.id) return badRequest("not enough rights to change custom title of the user")
      const title = asText(params["custom_title"])
      if ([...title].length > 16) return badRequest("CUSTOM_TITLE_INVALID")
      admin.custom_title = title
      return ok(true)
    },
    leaveChat: (bot, params) => {
      const found = chatOf(state, bot, params, "read")
      if (isFailure(found)) return found
      if (found.group === undefined) return badRequest("can't leave private chats")
      found.group.left.add(bot.id)
      found.group.admins.delete(bot.id)
      return ok(true)
    },
    pinChatMessage: (bot, params) => {
      const target = pinTarget(state, bot, params)
      if (isFailure(target)) return target
      const { chatHistory, id } = target
      if (id === undefined || !chatHistory.messages.has(id)) return badRequest("message to pin not found")
      const at = chatHistory.pinned.indexOf(id)
      if (at >= 0) chatHistory.pinned.splice(at, 1)
      chatHistory.pinned.push(id)
      return ok(true)
    },
    unpinChatMessage: (bot, params) => {
      const target = pinTarget(state, bot, params)
      if (isFailure(target)) return target
      const { chatHistory } = target
      const id = isEmpty(params["message_id"]) ? chatHistory.pinned.at(-1) : target.id
      if (id === undefined || !chatHistory.messages.has(id)) return badRequest("message to unpin not found")
      const at = chatHistory.pinned.indexOf(id)
      if (at >= 0) chatHistory.pinned.splice(at, 1)
      return ok(true)
    }
  }
}

/** Why the bot may not delete message `id` of the chat, or undefined when it may. */
export const deleteRefusal = (state: State, bot: Bot, chat: BotApi.Chat, authorId: number | undefined): Answer | undefined => {
  if (chat.type === "private" || authorId === bot.id) return undefined
  return holds(groupOf(state, chat.id), bot, "can_delete_messages") ? undefined : badRequest("message can't be deleted")
}

/** Makes the bot an administrator of the group with these rights (the rest false), or a plain member with `undefined`. */
export const setRights = (state: State, chatId: number, bot: Bot, rights: Readonly<Record<string, boolean>> | undefined) => {
  const group = groupOf(state, chatId)
  if (!isMember(group, bot)) throw new Error(`FakeTelegram: bot ${bot.id} is not a member of chat ${chatId}`)
  if (rights === undefined) group.admins.delete(bot.id)
  else group.admins.set(bot.id, { rights: rightsFrom(rights), custom_title: "", promotedBy: undefined })
}

/** A person joins the group as a member, an administrator (promoted by a person) or its creator. */
export const addMember = (
  state: State,
  chatId: number,
  userId: number,
  options: {
    readonly status?: "member" | "administrator" | "creator"
    readonly rights?: Readonly<Record<string, boolean>>
    readonly custom_title?: string
  }
) => {
  const group = groupOf(state, chatId)
  if (!state.people.has(userId)) throw new Error(`FakeTelegram: no user ${userId}`)
  group.users.add(userId)
  group.banned.delete(userId)
  switch (options.status ?? "member") {
    case "creator":
      group.creator = userId
      break
    case "administrator":
      group.admins.set(userId, {
        rights: rightsFrom({ can_manage_chat: true, ...options.rights }),
        custom_title: options.custom_title ?? "",
        promotedBy: undefined
      })
      break
    case "member":
      break
  }
}
