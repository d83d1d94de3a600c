import { Chat, type ChatStore, Sighting } from "@botrelay/core"
import { ChatQueries, ConversationQueries, NoteQueries, ScopeQueries, type Tables } from "@botrelay/sql"
import type { Kysely } from "kysely"
import * as Batches from "./Batches.js"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** Moves a group's history, members, tags, read mark, counts and the scopes naming it to the supergroup it became. */
const move = async (db: Kysely<Tables.Database>, botId: number, from: number, to: number) => {
  if (from === to || from === 0 || to === 0) return
  const [old] = await all(db, ChatQueries.chatRow(db, botId, from))
  await run(db, ChatQueries.insertMovedChat(db, botId, to, Chat.typeOfId(to), old?.title ?? "", old?.search ?? ""))
  if (old !== undefined) {
    await run(db, ChatQueries.carryOver(db, old.title, old.search, old.read_at, old.member_count, botId, to))
  } else {
    await run(db, ChatQueries.insertMovedChat(db, botId, from, Chat.typeOfId(from), "", ""))
  }
  await run(db, ChatQueries.dropMovedAgain(db, botId, to, from))
  await run(db, ChatQueries.moveMessages(db, to, botId, from))
  await run(db, ChatQueries.copyMembers(db, to, botId, from))
  await run(db, ChatQueries.deleteMembers(db, botId, from))
  await run(db, ChatQueries.dropDuplicateTags(db, botId, from, to))
  await run(db, ChatQueries.moveTags(db, to, botId, from))
  await run(db, NoteQueries.moveNotes(db, to, botId, from))
  await run(db, ChatQueries.recount(db, botId, to))
  await run(db, ChatQueries.deleteChatDays(db, botId, from))
  await run(db, ChatQueries.deleteChatDays(db, botId, to))
  await run(db, ChatQueries.countChatDays(db, botId, to))
  await run(db, ChatQueries.markMoved(db, to, botId, from))
  if (old !== undefined && !Chat.isNewConversation(old)) await run(db, ConversationQueries.carryConversation(db, old, botId, to))
  const [keyLinks, accountLinks] = ScopeQueries.linksNaming(db, botId, from)
  for (const link of await all(db, keyLinks)) {
    const chatIds = ScopeQueries.followed(link, from, to)
    if (chatIds !== undefined) await run(db, ScopeQueries.setKeyChats(db, link.owner, botId, chatIds))
  }
  for (const link of await all(db, accountLinks)) {
    const chatIds = ScopeQueries.followed(link, from, to)
    if (chatIds !== undefined) await run(db, ScopeQueries.setAccountChats(db, link.owner, botId, chatIds))
  }
}

/** Reopens the chats that are not open, each with its audit entry. */
const reopen = async (db: Kysely<Tables.Database>, botId: number, reopens: ReadonlyArray<Sighting.Reopen>) => {
  const at = new Map(reopens.map((r) => [r.chat_id, r.at]))
  for (const chunk of Batches.chunks([...at.keys()])) {
    for (const found of await all(db, ConversationQueries.notOpen(db, botId, chunk))) {
      if ((await run(db, ConversationQueries.reopen(db, botId, found.chat_id))) === 0) continue
      await run(db, ConversationQueries.reopenAudit(db, botId, found.chat_id, at.get(found.chat_id)!, found, "incoming"))
    }
  }
}

/** Writes sightings (see `ChatStore.recordSightings`) in the caller's transaction, after the messages written with them. */
export const writeSightings = async (db: Kysely<Tables.Database>, sightings: ReadonlyArray<Sighting.Sighting>) => {
  for (const f of Sighting.fold(sightings)) {
    const botId = f.bot_id
    for (const chat of f.chats) await run(db, ChatQueries.upsertChatInfo(db, ...ChatQueries.chatInfoParameters(botId, chat)))
    for (const person of f.people) await run(db, ChatQueries.upsertPerson(db, ...ChatQueries.personParameters(botId, person)))
    for (const m of f.members) await run(db, ChatQueries.upsertMember(db, botId, m.chat_id, m.user_id, m.date))
    for (const l of f.left) await run(db, ChatQueries.deleteMember(db, botId, l.chat_id, l.user_id, l.date))
    for (const s of f.states) await run(db, ChatQueries.setState(db, s.state, botId, s.chat_id))
    for (const r of f.reads) await run(db, ChatQueries.markRead(db, r.at, r.at, botId, r.chat_id))
    for (const m of f.migrations) await move(db, botId, m.from_chat_id, m.to_chat_id)
    if (f.reopens.length > 0) await reopen(db, botId, f.reopens)
  }
}

/** The `ChatStore` on Postgres. */
export const make = (c: Connection): ChatStore.ChatStoreService => {
  /** The chats of rows, with the tags of their private chats' users. */
  const withTags = async (db: Kysely<Tables.Database>, rows: ReadonlyArray<ChatQueries.ChatRow>): Promise<Array<Chat.Chat>> => {
    const privates = ChatQueries.privateChats(rows)
    const found = privates === undefined ? [] : await all(db, ChatQueries.privateChatTags(db, privates.botIds, privates.chatIds))
    return ChatQueries.withTags(rows, found)
  }


  return {
    recordSightings: (sightings) => c.transaction("recordSightings", (db) => writeSightings(db, sightings)),

    listChats: (query) =>
      c.use("listChats", async (db) => query.bot_ids.length === 0 && (query.chats ?? []).length === 0 ? [] : withTags(db, await all(db, ChatQueries.listChats(db, query)))),

    findChat: (botId, chatId) =>
      c.use("findChat", async (db) => {
        const rows = await all(db, ChatQueries.findChat(db, botId, chatId))
        return first(await withTags(db, rows), (chat) => chat)
      }),

    markRead: (botId, chatId, at) =>
      c.use("markRead", async (db) => (await run(db, ChatQueries.markRead(db, at, at, botId, chatId))) > 0),

    updateChat: (botId, chatId, info) =>
      c.use("updateChat", async (db) =>
        (await run(
          db,
          ChatQueries.updateInfo(
            db,
            info.title,
            info.username,
            info.first_name,
            info.last_name,
            ChatQueries.searchText(info.title, info.username, info.first_name, info.last_name),
            info.member_count,
            botId,
            chatId
          )
        )) > 0),

    replaceConversation: (botId, chatId, before, after) =>
      c.use("replaceConversation", async (db) =>
        (await run(db, ConversationQueries.replaceConversation(db, botId, chatId, before, after))) > 0),

    chatCounts: (filter) =>
      c.use("chatCounts", async (db) => [
        ...(filter.bot_ids.length === 0 ? [] : await all(db, ConversationQueries.chatCounts(db, filter.bot_ids))),
        ...(filter.chats.length === 0
          ? []
          : (await all(db, ConversationQueries.chatCountsOf(db, filter.chats))).map((row) => ({ ...row, chats: Number(row.chats) })))
      ]),

    wakeSnoozed: (now, limit) =>
      c.transaction("wakeSnoozed", async (db) => {
        const woken: Array<{ bot_id: number; chat_id: number }> = []
        for (const due of await all(db, ConversationQueries.dueSnoozes(db, now, limit))) {
          if ((await run(db, ConversationQueries.wake(db, due.bot_id, due.chat_id, now))) === 0) continue
          await run(
            db,
            ConversationQueries.reopenAudit(db, due.bot_id, due.chat_id, now, { status: "snoozed", snoozed_until: due.snoozed_until }, "snooze_expired")
          )
          woken.push({ bot_id: due.bot_id, chat_id: due.chat_id })
        }
        return woken
      }),

    historyBotIds: c.use("historyBotIds", async (db) => (await all(db, ConversationQueries.historyBotIds(db))).map((r) => r.id)),

    setReachable: (botId, chatId, unreachable) =>
      c.use("setReachable", async (db) =>
        (await run(
          db,
          unreachable === undefined
            ? ConversationQueries.markReachable(db, botId, chatId)
            : ConversationQueries.markUnreachable(db, unreachable.since, unreachable.reason, botId, chatId)
        )) > 0)
  }
}
