import type { Message, MessageStore } from "@botrelay/core"
import { Errors, Outgoing } from "@botrelay/core"
import { MessageCounts, MessageQueries } from "@botrelay/sql"
import { Effect, Option } from "effect"
import { sql } from "kysely"
import { attempt, compile, compileAll, type Connection, db, first } from "./SqliteConnection.js"

const messagePageQuery = compile(MessageQueries.messagePage)
const findMessageQuery = compile(MessageQueries.findMessage)
const hasFileQuery = compile(MessageQueries.hasFile)
const writes = compileAll({
  insertMessage: MessageQueries.insertMessage,
  addToChat: MessageCounts.addToChat((inDates, than) =>
    sql<number>`(select count(*) from json_each(${inDates}) where value > ${than})`
  ),
  addToHour: MessageCounts.addToHour,
  addToDay: MessageCounts.addToDay
})

/**
 * Saves messages (inserts them, or replaces those stored) on prepared statements: the pipeline's hottest
 * write. The new ones are counted into their chats' counters and the hourly and daily counts, one change
 * per chat, hour and chat-day; the caller runs it in a transaction.
 */
export const messageWriter = (c: Connection): (messages: ReadonlyArray<Message.Message>) => void => {
  const hot = c.prepareAll(writes)
  return (messages) => {
    const added: Array<Message.Message> = []
    for (const m of messages) {
      const parameters = MessageQueries.messageParameters(m)
      if (hot.insertMessage.run(...parameters) > 0) added.push(m)
      else c.run(MessageQueries.saveMessage(db, ...parameters))
    }
    if (added.length === 0) return
    const counts = MessageCounts.countsOf(added)
    for (const chat of counts.chats) hot.addToChat.run(...MessageCounts.addToChatParameters(chat))
    for (const h of counts.hours) hot.addToHour.run(h.bot_id, h.hour, h.in_count, h.out_count)
    for (const d of counts.days) hot.addToDay.run(d.bot_id, d.day, d.chat_id, d.messages)
  }
}

/** The `MessageStore` on SQLite: pages and single messages are read on raw statements. */
export const make = (c: Connection): MessageStore.MessageStoreService => {
  const messagePage = c.sqlite.prepare(messagePageQuery.sql).raw(true)
  const messageByKey = c.sqlite.prepare(findMessageQuery.sql).raw(true)
  const fileHeld = c.sqlite.prepare(hasFileQuery.sql).raw(true)
  const save = messageWriter(c)
  const saveInTransaction = c.transaction(save)

  /** Saves the messages, all at once, or one by one when that fails; what the first unsaved one failed with. */
  const saveEach = (messages: ReadonlyArray<Message.Message>): unknown => {
    try {
      saveInTransaction(messages)
      return undefined
    } catch {
      let failure: unknown = undefined
      for (const m of messages) {
        try {
          saveInTransaction([m])
        } catch (error) {
          failure ??= error
        }
      }
      return failure
    }
  }

  /** The message sent through the API with this `local_id`, and its request. */
  const outgoing = (localId: number): MessageStore.OutgoingMessage | undefined => {
    const row = c.all(MessageQueries.findOutgoing(db, localId))[0]
    return row === undefined ? undefined : {
      message: MessageQueries.toMessage(row.bot_id, row.chat_id, MessageQueries.pageColumns.map((column) => row[column])),
      request: row.request
    }
  }

  return {
    saveMessage: (m) => c.groupCommit("saveMessage", () => save([m])),

    saveMessages: (messages) =>
      c.groupCommit("saveMessages", () => saveEach(messages)).pipe(
        Effect.flatMap((failure) =>
          failure === undefined
            ? Effect.void
            : Effect.fail(new Errors.StorageError({ operation: "saveMessages", cause: failure }))
        )
      ),

    listMessages: (query) =>
      attempt("listMessages", () =>
        (messagePage.all(query.bot_id, query.chat_id, query.limit, query.offset) as Array<ReadonlyArray<unknown>>)
          .map((row) => MessageQueries.toMessage(query.bot_id, query.chat_id, row))),

    findMessage: (botId, chatId, id) =>
      attempt("findMessage", () =>
        first(
          messageByKey.all(botId, chatId, id) as Array<ReadonlyArray<unknown>>,
          (row) => MessageQueries.toMessage(botId, chatId, row)
        )),

    hasFile: (botId, fileId) => attempt("hasFile", () => fileHeld.all(botId, fileId).length > 0),

    chatsWithFile: (botId, fileId) =>
      attempt("chatsWithFile", () => c.all(MessageQueries.chatsWithFile(db, botId, fileId)).map((r) => r.chat_id)),
    queueMessage: (message, request) =>
      c.groupCommit("queueMessage", () => {
        const [row] = c.all(MessageQueries.insertOutgoing(db, message.bot_id, message.chat_id, request, message.date))
        const localId = Number(row!.local_id)
        save([{ ...message, id: Outgoing.placeholderId(localId) }])
        c.run(MessageQueries.queueMessage(db, localId, message.date))
        return outgoing(localId)!.message
      }),

    setDelivery: (localId, change) =>
      c.groupCommit("setDelivery", () => {
        const before = c.all(MessageQueries.findOutgoing(db, localId))[0]
        if (before === undefined) return Option.none()
        c.run(
          MessageQueries.setDelivery(
            db,
            change.delivery,
            change.delivery_error,
            change.delivery_at,
            change.message_id,
            change.date,
            localId
          )
        )
        const after = c.all(MessageQueries.findOutgoing(db, localId))[0]!
        if (after.id !== before.id || after.date !== before.date) {
          c.run(MessageQueries.pointLastMessage(db, after.id, after.date, before.bot_id, before.chat_id, before.id))
        }
        if (after.date !== before.date && before.deleted === 0) {
          const counts = MessageCounts.moved(before.bot_id, before.chat_id, before.date, after.date)
          for (const hour of counts.hours) c.run(MessageCounts.addToHour(db, ...hour))
          for (const day of counts.days) c.run(MessageCounts.addToDay(db, ...day))
        }
        return Option.some(outgoing(localId)!.message)
      }),

    findOutgoing: (localId) => attempt("findOutgoing", () => Option.fromNullable(outgoing(localId))),

    markMessagesDeleted: (botId, chatId, ids) =>
      attempt("markMessagesDeleted", () =>
        ids.length === 0 ? 0 : c.run(MessageQueries.markDeleted(db, botId, chatId, ids)))
  }
}
