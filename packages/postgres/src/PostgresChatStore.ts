import { Chat, type ChatStore, Sighting } from "@botrelay/core"
import { ChatQueries, type Tables } from "@botrelay/sql"
import type { Kysely } from "kysely"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** Moves a group's history, members, tags, read mark and counts to the supergroup it became. */
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
  await run(db, ChatQueries.recount(db, botId, to))
  await run(db, ChatQueries.deleteChatDays(db, botId, from))
  await run(db, ChatQueries.deleteChatDays(db, botId, to))
  await run(db, ChatQueries.countChatDays(db, botId, to))
  await run(db, ChatQueries.markMoved(db, to, botId, from))
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
      c.use("listChats", async (db) => query.bot_ids.length === 0 ? [] : withTags(db, await all(db, ChatQueries.listChats(db, query)))),

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

    historyBotIds: c.use("historyBotIds", async (db) => (await all(db, ChatQueries.historyBotIds(db))).map((r) => r.id)),

    setReachable: (botId, chatId, unreachable) =>
      c.use("setReachable", async (db) =>
        (await run(
          db,
          unreachable === undefined
            ? ChatQueries.markReachable(db, botId, chatId)
            : ChatQueries.markUnreachable(db, unreachable.since, unreachable.reason, botId, chatId)
        )) > 0)
  }
}
