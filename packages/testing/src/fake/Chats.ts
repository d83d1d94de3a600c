import type { BotApi } from "@botrelay/telegram"
import { badRequest, failure, type Failure, isFailure, ok } from "./Answer.js"
import { asInt, asText, isEmpty } from "./Params.js"
import { type Bot, botOf, type Group, type Handler, type History, type Person, type State } from "./State.js"

const chatActions = new Set([
  "typing", "upload_photo", "record_video", "upload_video", "record_voice", "upload_voice", "upload_document",
  "choose_sticker", "find_location", "record_video_note", "upload_video_note"
])

/** The private chat with `user`. */
export const privateChat = (user: BotApi.User): BotApi.Chat => ({
  id: user.id,
  first_name: user.first_name,
  ...(user.last_name === undefined ? {} : { last_name: user.last_name }),
  ...(user.username === undefined ? {} : { username: user.username }),
  type: "private"
})

/** Whether the bot is in the group: named in `members` (or all are) and has not left. */
export const isMember = (group: Group, bot: Bot) =>
  (group.members === "all" || group.members.has(bot.id)) && !group.left.has(bot.id)

/** Telegram's answer to a bot that left a group and still uses it. */
export const notAMember = (chat: BotApi.Chat): Failure =>
  failure(403, `Forbidden: bot is not a member of the ${chat.type === "supergroup" || chat.type === "channel" ? chat.type : "group"} chat`)

/** The answer for a group the bot cannot use: "not a member" once it left, else "chat not found". */
const unusable = (group: Group, bot: Bot): Failure =>
  group.left.has(bot.id) ? notAMember(group.chat) : badRequest("chat not found")
const hasStarted = (person: Person, bot: Bot) => person.started === "all" || person.started.has(bot.id)

/** The chat as `bot` may use it; `source` chats that it cannot see are "not found" rather than forbidden. */
export const chatFor = (state: State, bot: Bot, value: unknown, use: "write" | "read"): BotApi.Chat | Failure => {
  if (isEmpty(value)) return badRequest("chat_id is empty")
  const chatNotFound = badRequest("chat not found")
  if (typeof value === "string" && value.startsWith("@")) {
    const group = state.groups.get(state.groupsByUsername.get(value.slice(1).toLowerCase()) ?? 0)
    if (group === undefined) return chatNotFound
    return isMember(group, bot) ? group.chat : unusable(group, bot)
  }
  const id = asInt(value)
  if (id === undefined) return chatNotFound
  const person = state.people.get(id)
  if (person !== undefined) {
    if (hasStarted(person, bot)) return privateChat(person.user)
    return use === "write" ? failure(403, "Forbidden: bot can't initiate conversation with a user") : chatNotFound
  }
  const group = state.groups.get(id)
  if (group !== undefined) return isMember(group, bot) ? group.chat : unusable(group, bot)
  return state.botsById.has(id) ? failure(403, "Forbidden: bot can't send messages to bots") : chatNotFound
}

/** The messages of `chat` as `bot` sees them. */
export const history = (state: State, bot: Bot, chat: BotApi.Chat): History => {
  const key = chat.type === "private" ? `${bot.id}/${chat.id}` : `${chat.id}`
  let found = state.histories.get(key)
  if (found === undefined) {
    found = { nextId: 1, messages: new Map(), authors: new Map(), pinned: [] }
    state.histories.set(key, found)
  }
  return found
}

/** The group or channel `chatId`; throws for an unknown one. */
export const groupOf = (state: State, chatId: number): Group => {
  const group = state.groups.get(chatId)
  if (group === undefined) throw new Error(`FakeTelegram: no group or channel ${chatId}`)
  return group
}

/** The bots that get an update about a chat: the bot itself in private, else every member. */
export const audience = (state: State, bot: Bot, chat: BotApi.Chat): ReadonlyArray<Bot> => {
  if (chat.type === "private") return [bot]
  const group = groupOf(state, chat.id)
  if (!isMember(group, bot)) throw new Error(`FakeTelegram: bot ${bot.id} is not a member of chat ${chat.id}`)
  return [...state.botsById.values()].filter((member) => isMember(group, member))
}

/** A new user, whose private chat exists from now on; `startedBots` omitted means every bot. */
export const addUser = (state: State, options: {
  readonly first_name?: string
  readonly last_name?: string
  readonly username?: string
  readonly language_code?: string
  readonly startedBots?: ReadonlyArray<number>
}): BotApi.User => {
  const n = state.nextUser++
  const user: BotApi.User = {
    id: 100_000_000 + n,
    is_bot: false,
    first_name: options.first_name ?? `User ${n}`,
    ...(options.last_name === undefined ? {} : { last_name: options.last_name }),
    ...(options.username === undefined ? {} : { username: options.username }),
    ...(options.language_code === undefined ? {} : { language_code: options.language_code })
  }
  state.people.set(user.id, { user, started: options.startedBots === undefined ? "all" : new Set(options.startedBots) })
  return user
}

/** A new group, supergroup or channel; `members` omitted means every bot, present or future. */
export const addGroup = (state: State, options: {
  readonly type?: "group" | "supergroup" | "channel"
  readonly title?: string
  readonly username?: string
  readonly members?: ReadonlyArray<number>
  readonly creator?: number
}): BotApi.Chat => {
  const n = state.nextGroup++
  const type = options.type ?? "group"
  const chat: BotApi.Chat = {
    id: type === "group" ? -(4_000_000_000 + n) : -(1_002_000_000_000 + n),
    title: options.title ?? `Group ${n}`,
    ...(type !== "group" && options.username !== undefined ? { username: options.username } : {}),
    type
  }
  state.groups.set(chat.id, {
    chat,
    members: options.members === undefined ? "all" : new Set(options.members),
    left: new Set(),
    users: new Set(options.creator === undefined ? [] : [options.creator]),
    creator: options.creator,
    admins: new Map(),
    banned: new Map(),
    restricted: new Map()
  })
  if (chat.username !== undefined) state.groupsByUsername.set(chat.username.toLowerCase(), chat.id)
  return chat
}

/** Makes a bot a member of a group or channel. */
export const addToGroup = (state: State, chatId: number, botId: number) => {
  const group = groupOf(state, chatId)
  const bot = botOf(state, botId)
  group.left.delete(bot.id)
  if (group.members !== "all") group.members.add(bot.id)
}

/** Members of a group as the fake counts them: its bots, and the users who wrote in it. */
const memberCount = (state: State, chat: BotApi.Chat): number => {
  if (chat.type === "private") return 2
  const group = groupOf(state, chat.id)
  const bots = group.members === "all" ? state.botsById.size : group.members.size
  const writers = new Set<number>()
  for (const message of state.histories.get(`${chat.id}`)?.messages.values() ?? []) {
    if (message.from !== undefined && !message.from.is_bot) writers.add(message.from.id)
  }
  return bots + writers.size
}

/** The chat methods. */
export const chatMethods = (state: State): Readonly<Record<string, Handler>> => ({
  getChat: (bot, params) => {
    const chat = chatFor(state, bot, params["chat_id"], "read")
    return isFailure(chat) ? chat : ok({ ...chat, accent_color_id: 0, max_reaction_count: 11 })
  },
  getChatMemberCount: (bot, params) => {
    const chat = chatFor(state, bot, params["chat_id"], "read")
    return isFailure(chat) ? chat : ok(memberCount(state, chat))
  },
  sendChatAction: (bot, params) => {
    const chat = chatFor(state, bot, params["chat_id"], "write")
    if (isFailure(chat)) return chat
    if (!chatActions.has(asText(params["action"]))) return badRequest("wrong parameter action in request")
    return ok(true)
  }
})
