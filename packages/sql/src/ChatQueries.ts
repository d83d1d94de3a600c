import type { Chat, ChatTag, Message, Sighting } from "@botrelay/core"
import type { Expression, InferResult, Kysely, Selectable, SqlBool } from "kysely"
import { sql } from "kysely"
import { toMessage } from "./MessageQueries.js"
import { inFilter } from "./ScopeQueries.js"
import type { ChatsTable, Database, TagsTable } from "./Tables.js"
import { toTag } from "./TagQueries.js"

/**
 * Moved messages get ids `old id - movedIdOffset` (from -2^53 + 1 up to -2^52 - 1): apart from the
 * supergroup's own (positive) and from button presses (-1 down to -2^52), in the order of the old ids.
 */
export const movedIdOffset = 2 ** 53

/** The id of a moved message in SQL: real ids shifted by `movedIdOffset`, button presses (negative) as they are. */
const movedId = (column: "id" | "reply_to_message_id") =>
  sql<number>`case when ${sql.ref(column)} > 0 then ${sql.ref(column)} - ${sql.lit(movedIdOffset)} else ${sql.ref(column)} end`

/** What `q` searches in: the names in lower case, one per line. */
export const searchText = (...names: ReadonlyArray<string>): string => names.join("\n").toLowerCase()

/** A LIKE pattern (with `\` escaping) for text containing `q`, in lower case. */
export const containsPattern = (q: string): string => `%${q.toLowerCase().replace(/[\\%_]/g, "\\$&")}%`

/** Whether the column's text contains the pattern `containsPattern` made. */
export const matches = (column: string, pattern: string): Expression<SqlBool> =>
  sql<SqlBool>`${sql.ref(column)} like ${pattern} escape ${sql.lit("\\")}`

/** The columns of a listed chat, its last message's prefixed `m_`. */
const chatSelection = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_chats as c")
    .leftJoin("botrelay_messages as m", (join) =>
      join.onRef("m.bot_id", "=", "c.bot_id").onRef("m.chat_id", "=", "c.chat_id").onRef("m.id", "=", "c.last_message_id"))
    .leftJoin("botrelay_accounts as a", "a.id", "c.assignee_id")
    .select([
      "c.bot_id",
      "c.chat_id",
      "c.type",
      "c.title",
      "c.username",
      "c.first_name",
      "c.last_name",
      "c.last_message_at",
      "c.unread_count",
      "c.message_count",
      "c.member_count",
      "c.state",
      "c.status",
      "c.priority",
      "c.assignee_id",
      "c.snoozed_until",
      "a.display_name as a_display_name",
      "a.username as a_username",
      "c.unreachable_since",
      "c.unreachable_reason",
      "m.id as m_id",
      "m.user_id as m_user_id",
      "m.username as m_username",
      "m.first_name as m_first_name",
      "m.last_name as m_last_name",
      "m.text as m_text",
      "m.date as m_date",
      "m.media_type as m_media_type",
      "m.file_id as m_file_id",
      "m.reply_to_message_id as m_reply_to_message_id",
      "m.direction as m_direction",
      "m.edit_date as m_edit_date",
      "m.deleted as m_deleted",
      "m.local_id as m_local_id",
      "m.delivery as m_delivery",
      "m.delivery_error as m_delivery_error",
      "m.delivery_at as m_delivery_at"
    ])

/** A row of `listChats` or `findChat`. */
export type ChatRow = InferResult<ReturnType<typeof chatSelection>>[number]

/** The chat a row holds, with its tags. */
export const toChat = (r: ChatRow, tags: ReadonlyArray<ChatTag.Tag>): Chat.Chat => ({
  bot_id: r.bot_id,
  chat_id: r.chat_id,
  type: r.type,
  title: r.title,
  username: r.username,
  first_name: r.first_name,
  last_name: r.last_name,
  last_message: r.m_id === null ? null : lastMessageOf(r),
  last_message_at: r.last_message_at,
  unread_count: r.unread_count,
  message_count: r.message_count,
  member_count: r.member_count,
  tags,
  state: r.state,
  status: r.status,
  priority: r.priority,
  assignee_id: r.assignee_id,
  assignee_name: r.a_display_name === null || r.a_display_name === "" ? r.a_username ?? "" : r.a_display_name,
  snoozed_until: r.snoozed_until,
  reachable: r.unreachable_since === 0,
  unreachable_since: r.unreachable_since,
  unreachable_reason: r.unreachable_reason
})

const lastMessageOf = (r: ChatRow): Message.Message =>
  toMessage(r.bot_id, r.chat_id, [
    r.m_id,
    r.m_user_id,
    r.m_username,
    r.m_first_name,
    r.m_last_name,
    r.m_text,
    r.m_date,
    r.m_media_type,
    r.m_file_id,
    r.m_reply_to_message_id,
    r.m_direction,
    r.m_edit_date,
    r.m_deleted,
    r.m_local_id,
    r.m_delivery,
    r.m_delivery_error,
    r.m_delivery_at
  ])

/** Chats of the query's bots and single chats (at least one of either), newest activity first; migrated-away chats left out. */
export const listChats = (db: Kysely<Database>, query: Chat.ChatQuery) => {
  let select = chatSelection(db).where("c.migrated_to_chat_id", "=", sql.lit(0))
  // Several bots: `+bot_id` keeps SQLite from reading each bot's chats by key and sorting them all; it walks
  // the activity index instead and stops at the page's end. One bot: its own activity index.
  if (query.chats !== undefined && query.chats.length > 0) {
    select = select.where(inFilter({ bot_ids: query.bot_ids, chats: query.chats }, "c.bot_id", "c.chat_id"))
  } else {
    select = query.bot_ids.length === 1
      ? select.where("c.bot_id", "=", query.bot_ids[0]!)
      : select.where(sql<number>`+${sql.ref("c.bot_id")}`, "in", query.bot_ids)
  }
  if (query.type !== undefined) select = select.where("c.type", "=", query.type)
  if (query.unread === true) select = select.where("c.unread_count", ">", sql.lit(0))
  if (query.q !== undefined && query.q !== "") select = select.where(matches("c.search", containsPattern(query.q)))
  if (query.statuses !== undefined) select = select.where("c.status", "in", query.statuses)
  if (query.priorities !== undefined) select = select.where("c.priority", "in", query.priorities)
  if (query.assignees !== undefined) select = select.where("c.assignee_id", "in", query.assignees)
  const after = query.after
  if (after !== undefined) {
    select = select.where((eb) =>
      eb(
        eb.refTuple("c.last_message_at", "c.bot_id", "c.chat_id"),
        "<",
        eb.tuple(after.last_message_at, after.bot_id, after.chat_id)
      )
    )
  }
  return select
    .orderBy("c.last_message_at", "desc")
    .orderBy("c.bot_id", "desc")
    .orderBy("c.chat_id", "desc")
    .limit(query.limit)
}

/** One chat that has not moved to a supergroup. */
export const findChat = (db: Kysely<Database>, botId: number, chatId: number) =>
  chatSelection(db)
    .where("c.bot_id", "=", botId)
    .where("c.chat_id", "=", chatId)
    .where("c.migrated_to_chat_id", "=", sql.lit(0))

/** The tags on the users of private chats: those whose user is the chat. */
const tagsOfChatUsers = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_tags").selectAll().whereRef("user_id", "=", "chat_id").orderBy("id")

/** The tags on the users of these private chats (at least one bot and chat). */
export const privateChatTags = (db: Kysely<Database>, botIds: ReadonlyArray<number>, chatIds: ReadonlyArray<number>) =>
  tagsOfChatUsers(db).where("bot_id", "in", botIds).where("chat_id", "in", chatIds)

/** The tags on the user of one private chat (`privateChatTags` of one chat, on a statement prepared once). */
export const chatTags = (db: Kysely<Database>, botId: number, chatId: number) =>
  tagsOfChatUsers(db).where("bot_id", "=", botId).where("chat_id", "=", chatId)

/** The bots and chats of the private chats among rows, for `privateChatTags`; `undefined` when there is none. */
export const privateChats = (
  rows: ReadonlyArray<ChatRow>
): { readonly botIds: ReadonlyArray<number>; readonly chatIds: ReadonlyArray<number> } | undefined => {
  const privates = rows.filter((r) => r.type === "private")
  return privates.length === 0 ? undefined : {
    botIds: [...new Set(privates.map((r) => r.bot_id))],
    chatIds: [...new Set(privates.map((r) => r.chat_id))]
  }
}

/** The chats of rows, each with the tags (rows of `privateChatTags`) on its user. */
export const withTags = (rows: ReadonlyArray<ChatRow>, found: ReadonlyArray<Selectable<TagsTable>>): Array<Chat.Chat> => {
  const tags = new Map<string, Array<ChatTag.Tag>>()
  for (const row of found) {
    const key = `${row.bot_id}/${row.chat_id}`
    const list = tags.get(key)
    if (list === undefined) tags.set(key, [toTag(row)])
    else list.push(toTag(row))
  }
  return rows.map((r) => toChat(r, tags.get(`${r.bot_id}/${r.chat_id}`) ?? []))
}

/** Records a chat's kind and names; writes only when they changed. */
export const upsertChatInfo = (
  db: Kysely<Database>,
  botId: number,
  chatId: number,
  type: ChatsTable["type"],
  title: string,
  username: string,
  firstName: string,
  lastName: string,
  search: string
) =>
  db.insertInto("botrelay_chats").values({
    bot_id: botId,
    chat_id: chatId,
    type,
    title,
    username,
    first_name: firstName,
    last_name: lastName,
    search
  }).onConflict((oc) =>
    oc.columns(["bot_id", "chat_id"]).doUpdateSet((eb) => ({
      type: eb.ref("excluded.type"),
      title: eb.ref("excluded.title"),
      username: eb.ref("excluded.username"),
      first_name: eb.ref("excluded.first_name"),
      last_name: eb.ref("excluded.last_name"),
      search: eb.ref("excluded.search")
    })).where((eb) =>
      eb.or([
        eb("botrelay_chats.type", "<>", eb.ref("excluded.type")),
        eb("botrelay_chats.title", "<>", eb.ref("excluded.title")),
        eb("botrelay_chats.username", "<>", eb.ref("excluded.username")),
        eb("botrelay_chats.first_name", "<>", eb.ref("excluded.first_name")),
        eb("botrelay_chats.last_name", "<>", eb.ref("excluded.last_name"))
      ])
    )
  )

/** A chat's kind and names, as `upsertChatInfo` compares them. */
export const chatInfo = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.selectFrom("botrelay_chats")
    .select(["type", "title", "username", "first_name", "last_name"])
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)

/** The parameters of `upsertChatInfo` for a chat a sighting shows. */
export const chatInfoParameters = (botId: number, chat: Sighting.ChatSeen) =>
  [
    botId,
    chat.chat_id,
    chat.type,
    chat.title,
    chat.username,
    chat.first_name,
    chat.last_name,
    searchText(chat.title, chat.username, chat.first_name, chat.last_name)
  ] as const

/** Sets whether the bot is in the chat; writes only when it changed. */
export const setState = (db: Kysely<Database>, state: Chat.ChatState, botId: number, chatId: number) =>
  db.updateTable("botrelay_chats").set({ state })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("state", "<>", state)

/** Records a user: names from the latest sighting, first and last seen widened; writes only when something changed. */
export const upsertPerson = (
  db: Kysely<Database>,
  botId: number,
  userId: number,
  username: string,
  firstName: string,
  lastName: string,
  languageCode: string,
  isBot: number,
  firstSeenAt: number,
  lastSeenAt: number,
  search: string
) =>
  db.insertInto("botrelay_people").values({
    bot_id: botId,
    user_id: userId,
    username,
    first_name: firstName,
    last_name: lastName,
    language_code: languageCode,
    is_bot: isBot,
    first_seen_at: firstSeenAt,
    last_seen_at: lastSeenAt,
    search
  }).onConflict((oc) =>
    oc.columns(["bot_id", "user_id"]).doUpdateSet({
      username: latest("username"),
      first_name: latest("first_name"),
      last_name: latest("last_name"),
      language_code: sql<string>`case when excluded.last_seen_at >= botrelay_people.last_seen_at and excluded.language_code <> '' then excluded.language_code else botrelay_people.language_code end`,
      is_bot: latest("is_bot"),
      search: latest("search"),
      first_seen_at: sql<number>`case when excluded.first_seen_at < botrelay_people.first_seen_at then excluded.first_seen_at else botrelay_people.first_seen_at end`,
      last_seen_at: sql<number>`case when excluded.last_seen_at > botrelay_people.last_seen_at then excluded.last_seen_at else botrelay_people.last_seen_at end`
    }).where((eb) =>
      eb.or([
        eb("botrelay_people.last_seen_at", "<", eb.ref("excluded.last_seen_at")),
        eb("botrelay_people.first_seen_at", ">", eb.ref("excluded.first_seen_at")),
        eb.and([
          eb("botrelay_people.last_seen_at", "=", eb.ref("excluded.last_seen_at")),
          eb.or([
            eb("botrelay_people.username", "<>", eb.ref("excluded.username")),
            eb("botrelay_people.first_name", "<>", eb.ref("excluded.first_name")),
            eb("botrelay_people.last_name", "<>", eb.ref("excluded.last_name")),
            eb("botrelay_people.is_bot", "<>", eb.ref("excluded.is_bot")),
            eb.and([
              eb("excluded.language_code", "<>", sql.lit("")),
              eb("botrelay_people.language_code", "<>", eb.ref("excluded.language_code"))
            ])
          ])
        ])
      ])
    )
  )

/** A column of `botrelay_people` from the newer of the stored row and the sighting. */
const latest = (column: "username" | "first_name" | "last_name" | "is_bot" | "search") =>
  sql<any>`case when excluded.last_seen_at >= botrelay_people.last_seen_at then ${sql.ref(`excluded.${column}`)} else ${
    sql.ref(`botrelay_people.${column}`)
  } end`

/** The parameters of `upsertPerson` for a user a batch of sightings shows. */
export const personParameters = (botId: number, p: Sighting.PersonSeenOver) =>
  [
    botId,
    p.user_id,
    p.username,
    p.first_name,
    p.last_name,
    p.language_code,
    p.is_bot ? 1 : 0,
    p.first_seen_at,
    p.last_seen_at,
    searchText(p.username, p.first_name, p.last_name)
  ] as const

/** Records that a user was seen in a chat; writes only when later than known. */
export const upsertMember = (db: Kysely<Database>, botId: number, chatId: number, userId: number, lastSeenAt: number) =>
  db.insertInto("botrelay_chat_members").values({ bot_id: botId, chat_id: chatId, user_id: userId, last_seen_at: lastSeenAt })
    .onConflict((oc) =>
      oc.columns(["bot_id", "chat_id", "user_id"])
        .doUpdateSet((eb) => ({ last_seen_at: eb.ref("excluded.last_seen_at") }))
        .where((eb) => eb("botrelay_chat_members.last_seen_at", "<", eb.ref("excluded.last_seen_at")))
    )

/** Forgets that a user is in a chat (they left it), unless they were seen there after `date`. */
export const deleteMember = (db: Kysely<Database>, botId: number, chatId: number, userId: number, date: number) =>
  db.deleteFrom("botrelay_chat_members")
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("user_id", "=", userId)
    .where("last_seen_at", "<=", date)

/** Moves the read mark to `at`; the unread count becomes the incoming messages dated after `after` (the same time). */
export const markRead = (db: Kysely<Database>, at: number, after: number, botId: number, chatId: number) =>
  db.updateTable("botrelay_chats").set((eb) => ({
    read_at: at,
    unread_count: eb.selectFrom("botrelay_messages as m")
      .select(sql<number>`count(*)`.as("n"))
      .whereRef("m.bot_id", "=", "botrelay_chats.bot_id")
      .whereRef("m.chat_id", "=", "botrelay_chats.chat_id")
      .where("m.direction", "=", sql.lit("in"))
      .where("m.deleted", "=", sql.lit(0))
      .where("m.date", ">", after)
  }))
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("migrated_to_chat_id", "=", sql.lit(0))

/** Replaces a chat's names and member count. */
export const updateInfo = (
  db: Kysely<Database>,
  title: string,
  username: string,
  firstName: string,
  lastName: string,
  search: string,
  memberCount: number,
  botId: number,
  chatId: number
) =>
  db.updateTable("botrelay_chats")
    .set({ title, username, first_name: firstName, last_name: lastName, search, member_count: memberCount })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("migrated_to_chat_id", "=", sql.lit(0))

/** A chat's row as a migration needs it, migrated or not. */
export const chatRow = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.selectFrom("botrelay_chats")
    .select([
      "type",
      "title",
      "username",
      "first_name",
      "last_name",
      "search",
      "read_at",
      "member_count",
      "state",
      "status",
      "priority",
      "assignee_id",
      "snoozed_until"
    ])
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)

/** Inserts a chat with what a migration carries over; nothing when it exists. */
export const insertMovedChat = (
  db: Kysely<Database>,
  botId: number,
  chatId: number,
  type: ChatsTable["type"],
  title: string,
  search: string
) =>
  db.insertInto("botrelay_chats").values({ bot_id: botId, chat_id: chatId, type, title, search })
    .onConflict((oc) => oc.columns(["bot_id", "chat_id"]).doNothing())

/** What a migration carries over to the new chat: its title when it has none, the later read mark, the member count when unknown. */
export const carryOver = (
  db: Kysely<Database>,
  title: string,
  search: string,
  readAt: number,
  memberCount: number,
  botId: number,
  chatId: number
) =>
  db.updateTable("botrelay_chats").set({
    title: sql<string>`case when title = '' then ${title} else title end`,
    search: sql<string>`case when title = '' then ${search} else search end`,
    read_at: sql<number>`case when read_at < ${readAt} then ${readAt} else read_at end`,
    member_count: sql<number>`case when member_count = 0 then ${memberCount} else member_count end`
  }).where("bot_id", "=", botId).where("chat_id", "=", chatId)

/** Drops the messages of a chat that a move already took there (the old chat got them again); the later copy moves. */
export const dropMovedAgain = (db: Kysely<Database>, botId: number, toChatId: number, fromChatId: number) =>
  db.deleteFrom("botrelay_messages")
    .where("bot_id", "=", botId)
    .where("chat_id", "=", toChatId)
    .where("id", "in", (eb) =>
      eb.selectFrom("botrelay_messages").select(movedId("id").as("id")).where("bot_id", "=", botId).where(
        "chat_id",
        "=",
        fromChatId
      ))

/**
 * Moves a chat's messages to another chat: real ids become `id - movedIdOffset`, and so do replies to
 * them; button presses (negative ids) keep theirs.
 */
export const moveMessages = (db: Kysely<Database>, toChatId: number, botId: number, fromChatId: number) =>
  db.updateTable("botrelay_messages").set({
    chat_id: toChatId,
    id: movedId("id"),
    reply_to_message_id: movedId("reply_to_message_id")
  }).where("bot_id", "=", botId).where("chat_id", "=", fromChatId)

/** Copies a chat's members to another chat, keeping the later last-seen time. */
export const copyMembers = (db: Kysely<Database>, toChatId: number, botId: number, fromChatId: number) =>
  db.insertInto("botrelay_chat_members")
    .columns(["bot_id", "chat_id", "user_id", "last_seen_at"])
    .expression((eb) =>
      eb.selectFrom("botrelay_chat_members")
        .select(["bot_id", eb.val(toChatId).as("chat_id"), "user_id", "last_seen_at"])
        .where("bot_id", "=", botId)
        .where("chat_id", "=", fromChatId)
    )
    .onConflict((oc) =>
      oc.columns(["bot_id", "chat_id", "user_id"])
        .doUpdateSet((eb) => ({ last_seen_at: eb.ref("excluded.last_seen_at") }))
        .where((eb) => eb("botrelay_chat_members.last_seen_at", "<", eb.ref("excluded.last_seen_at")))
    )

/** Forgets a chat's members. */
export const deleteMembers = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.deleteFrom("botrelay_chat_members").where("bot_id", "=", botId).where("chat_id", "=", chatId)

/** Drops a chat's tags that the other chat already has (same user and tag). */
export const dropDuplicateTags = (db: Kysely<Database>, botId: number, fromChatId: number, toChatId: number) =>
  db.deleteFrom("botrelay_tags")
    .where("bot_id", "=", botId)
    .where("chat_id", "=", fromChatId)
    .where((eb) =>
      eb.exists(
        eb.selectFrom("botrelay_tags as t")
          .select(sql.lit(1).as("one"))
          .whereRef("t.bot_id", "=", "botrelay_tags.bot_id")
          .where("t.chat_id", "=", toChatId)
          .whereRef("t.user_id", "=", "botrelay_tags.user_id")
          .whereRef("t.tag", "=", "botrelay_tags.tag")
      )
    )

/** Moves a chat's tags to another chat. */
export const moveTags = (db: Kysely<Database>, toChatId: number, botId: number, fromChatId: number) =>
  db.updateTable("botrelay_tags").set({ chat_id: toChatId }).where("bot_id", "=", botId).where("chat_id", "=", fromChatId)

/** The messages of the `botrelay_chats` row an update is at. */
const chatMessages = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_messages as m")
    .where("m.bot_id", "=", sql.ref<number>("botrelay_chats.bot_id"))
    .where("m.chat_id", "=", sql.ref<number>("botrelay_chats.chat_id"))

/** Counts a chat's messages, unread ones and its last message again from the history. */
export const recount = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.updateTable("botrelay_chats").set({
    message_count: chatMessages(db).select(sql<number>`count(*)`.as("n")).where("m.deleted", "=", sql.lit(0)),
    unread_count: chatMessages(db).select(sql<number>`count(*)`.as("n"))
      .where("m.deleted", "=", sql.lit(0))
      .where("m.direction", "=", sql.lit("in"))
      .where("m.date", ">", sql.ref<number>("botrelay_chats.read_at")),
    last_message_id: chatMessages(db).select("m.id").orderBy("m.date", "desc").orderBy("m.id", "desc").limit(sql.lit(1)),
    last_message_at: sql<number>`coalesce((${chatMessages(db).select(sql<number>`max(m.date)`.as("d"))}), 0)`
  }).where("bot_id", "=", botId).where("chat_id", "=", chatId)

/** Forgets a chat's daily counts. */
export const deleteChatDays = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.deleteFrom("botrelay_chat_days").where("bot_id", "=", botId).where("chat_id", "=", chatId)

/** Counts a chat's messages per day again from the history. */
export const countChatDays = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.insertInto("botrelay_chat_days")
    .columns(["bot_id", "day", "chat_id", "messages"])
    .expression((eb) =>
      eb.selectFrom("botrelay_messages")
        .select([
          "bot_id",
          sql<number>`date / 86400`.as("day"),
          "chat_id",
          sql<number>`count(*)`.as("messages")
        ])
        .where("bot_id", "=", botId)
        .where("chat_id", "=", chatId)
        .groupBy(["bot_id", "chat_id", sql`date / 86400`])
    )

/** Marks a chat moved to a supergroup: empty, unlisted, its conversation state a new chat's (it went with the move). */
export const markMoved = (db: Kysely<Database>, toChatId: number, botId: number, fromChatId: number) =>
  db.updateTable("botrelay_chats").set({
    migrated_to_chat_id: toChatId,
    status: sql.lit("open"),
    priority: sql.lit("none"),
    assignee_id: sql.lit(0),
    snoozed_until: sql.lit(0),
    last_message_id: sql<null>`null`,
    last_message_at: sql.lit(0),
    unread_count: sql.lit(0),
    message_count: sql.lit(0)
  }).where("bot_id", "=", botId).where("chat_id", "=", fromChatId)
