import { Chat, type ChatStore, Sighting } from "@botrelay/core"
import { Effect } from "effect"
import { ChatQueries, ConversationQueries, NoteQueries, ScopeQueries } from "@botrelay/sql"
import { attempt, compileAll, type Connection, db, first } from "./SqliteConnection.js"

const writes = compileAll({
  upsertChatInfo: ChatQueries.upsertChatInfo,
  upsertPerson: ChatQueries.upsertPerson,
  upsertMember: ChatQueries.upsertMember,
  deleteMember: ChatQueries.deleteMember,
  markRead: ChatQueries.markRead,
  notOpenChat: ConversationQueries.notOpenChat,
  reopen: ConversationQueries.reopen
})

const queries = compileAll({
  chatInfo: ChatQueries.chatInfo,
  markRead: ChatQueries.markRead,
  findChat: ChatQueries.findChat,
  chatTags: ChatQueries.chatTags,
  updateInfo: ChatQueries.updateInfo,
  historyBotIds: ConversationQueries.historyBotIds,
  dueSnoozes: ConversationQueries.dueSnoozes,
  wake: ConversationQueries.wake
})

/**
 * Writes sightings (see `ChatStore.recordSightings`) on prepared statements, folded into one write per
 * bot; the caller runs it in a transaction, after the messages written with them.
 */
export const sightingWriter = (c: Connection): (sightings: ReadonlyArray<Sighting.Sighting>) => void => {
  const hot = c.prepareAll(writes)

  /** Moves a group's history, members, tags, read mark, counts and the scopes naming it to the supergroup it became. */
  const move = (botId: number, from: number, to: number) => {
    if (from === to || from === 0 || to === 0) return
    const old = c.all(ChatQueries.chatRow(db, botId, from))[0]
    c.run(ChatQueries.insertMovedChat(db, botId, to, Chat.typeOfId(to), old?.title ?? "", old?.search ?? ""))
    if (old !== undefined) {
      c.run(ChatQueries.carryOver(db, old.title, old.search, old.read_at, old.member_count, botId, to))
    } else {
      c.run(ChatQueries.insertMovedChat(db, botId, from, Chat.typeOfId(from), "", ""))
    }
    c.run(ChatQueries.dropMovedAgain(db, botId, to, from))
    c.run(ChatQueries.moveMessages(db, to, botId, from))
    c.run(ChatQueries.copyMembers(db, to, botId, from))
    c.run(ChatQueries.deleteMembers(db, botId, from))
    c.run(ChatQueries.dropDuplicateTags(db, botId, from, to))
    c.run(ChatQueries.moveTags(db, to, botId, from))
    c.run(NoteQueries.moveNotes(db, to, botId, from))
    c.run(ChatQueries.recount(db, botId, to))
    c.run(ChatQueries.deleteChatDays(db, botId, from))
    c.run(ChatQueries.deleteChatDays(db, botId, to))
    c.run(ChatQueries.countChatDays(db, botId, to))
    c.run(ChatQueries.markMoved(db, to, botId, from))
    if (old !== undefined && !Chat.isNewConversation(old)) c.run(ConversationQueries.carryConversation(db, old, botId, to))
    const [keyLinks, accountLinks] = ScopeQueries.linksNaming(db, botId, from)
    for (const link of c.all(keyLinks)) {
      const chatIds = ScopeQueries.followed(link, from, to)
      if (chatIds !== undefined) c.run(ScopeQueries.setKeyChats(db, link.owner, botId, chatIds))
    }
    for (const link of c.all(accountLinks)) {
      const chatIds = ScopeQueries.followed(link, from, to)
      if (chatIds !== undefined) c.run(ScopeQueries.setAccountChats(db, link.owner, botId, chatIds))
    }
  }

  /** Reopens the chats that are not open, each with its audit entry. */
  const reopen = (botId: number, reopens: ReadonlyArray<Sighting.Reopen>) => {
    for (const r of reopens) {
      const found = hot.notOpenChat.all(botId, r.chat_id)[0]
      if (found === undefined || hot.reopen.run(botId, r.chat_id) === 0) continue
      c.run(ConversationQueries.reopenAudit(db, botId, r.chat_id, r.at, found, "incoming"))
    }
  }

  return (sightings) => {
    for (const f of Sighting.fold(sightings)) {
      const botId = f.bot_id
      for (const chat of f.chats) hot.upsertChatInfo.run(...ChatQueries.chatInfoParameters(botId, chat))
      for (const person of f.people) hot.upsertPerson.run(...ChatQueries.personParameters(botId, person))
      for (const m of f.members) hot.upsertMember.run(botId, m.chat_id, m.user_id, m.date)
      for (const l of f.left) hot.deleteMember.run(botId, l.chat_id, l.user_id, l.date)
      for (const s of f.states) c.run(ChatQueries.setState(db, s.state, botId, s.chat_id))
      for (const r of f.reads) hot.markRead.run(r.at, r.at, botId, r.chat_id)
      for (const m of f.migrations) move(botId, m.from_chat_id, m.to_chat_id)
      if (f.reopens.length > 0) reopen(botId, f.reopens)
    }
  }
}

/** The `ChatStore` on SQLite. */
export const make = (c: Connection): ChatStore.ChatStoreService => {
  const hot = c.prepareAll(queries)
  const writeSightings = sightingWriter(c)

  /**
   * Whether the sightings show only chats, each as stored (what a bot's sends to the chats it knows show):
   * then they have nothing to write. Asked only when no write waits for the turn's commit, so the store is as
   * the sightings would find it.
   */
  const changeNothing = (sightings: ReadonlyArray<Sighting.Sighting>): boolean =>
    sightings.every((s) =>
      s.people.length === 0 && s.left.length === 0 && s.states.length === 0 && s.migrations.length === 0 &&
      s.reads.length === 0 && (s.reopens ?? []).length === 0 &&
      s.chats.every((chat) => {
        const stored = hot.chatInfo.all(s.bot_id, chat.chat_id)[0]
        return stored !== undefined && stored.type === chat.type && stored.title === chat.title &&
          stored.username === chat.username && stored.first_name === chat.first_name &&
          stored.last_name === chat.last_name
      })
    )

  /** The chats of rows, with the tags of their private chats' users. */
  const withTags = (rows: ReadonlyArray<ChatQueries.ChatRow>): Array<Chat.Chat> => {
    const privates = ChatQueries.privateChats(rows)
    return ChatQueries.withTags(
      rows,
      privates === undefined ? [] : c.all(ChatQueries.privateChatTags(db, privates.botIds, privates.chatIds))
    )
  }


  return {
    recordSightings: (sightings) =>
      Effect.flatMap(
        attempt("recordSightings", () => !c.pending() && changeNothing(sightings)),
        (nothing) => nothing ? Effect.void : c.groupCommit("recordSightings", () => writeSightings(sightings))
      ),

    listChats: (query) =>
      attempt("listChats", () => query.bot_ids.length === 0 && (query.chats ?? []).length === 0 ? [] : withTags(c.all(ChatQueries.listChats(db, query)))),

    findChat: (botId, chatId) =>
      attempt("findChat", () =>
        first(hot.findChat.all(botId, chatId), (row) =>
          ChatQueries.withTags([row], row.type === "private" ? hot.chatTags.all(botId, chatId) : [])[0]!)),

    markRead: (botId, chatId, at) => attempt("markRead", () => hot.markRead.run(at, at, botId, chatId) > 0),

    updateChat: (botId, chatId, info) =>
      attempt("updateChat", () =>
        hot.updateInfo.run(
          info.title,
          info.username,
          info.first_name,
          info.last_name,
          ChatQueries.searchText(info.title, info.username, info.first_name, info.last_name),
          info.member_count,
          botId,
          chatId
        ) > 0),

    replaceConversation: (botId, chatId, before, after) =>
      c.groupCommit("replaceConversation", () => c.run(ConversationQueries.replaceConversation(db, botId, chatId, before, after)) > 0),

    chatCounts: (filter) =>
      attempt("chatCounts", () => [
        ...(filter.bot_ids.length === 0 ? [] : c.all(ConversationQueries.chatCounts(db, filter.bot_ids))),
        ...(filter.chats.length === 0 ? [] : c.all(ConversationQueries.chatCountsOf(db, filter.chats)))
      ]),

    wakeSnoozed: (now, limit) =>
      c.groupCommit("wakeSnoozed", () => {
        const woken: Array<{ bot_id: number; chat_id: number }> = []
        for (const due of hot.dueSnoozes.all(now, limit)) {
          if (hot.wake.run(due.bot_id, due.chat_id, now) === 0) continue
          c.run(ConversationQueries.reopenAudit(db, due.bot_id, due.chat_id, now, { status: "snoozed", snoozed_until: due.snoozed_until }, "snooze_expired"))
          woken.push({ bot_id: due.bot_id, chat_id: due.chat_id })
        }
        return woken
      }),

    historyBotIds: attempt("historyBotIds", () => hot.historyBotIds.all().map((r) => r.id)),

    setReachable: (botId, chatId, unreachable) =>
      attempt("setReachable", () =>
        c.run(
          unreachable === undefined
            ? ConversationQueries.markReachable(db, botId, chatId)
            : ConversationQueries.markUnreachable(db, unreachable.since, unreachable.reason, botId, chatId)
        ) > 0)
  }
}
