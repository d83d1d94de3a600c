import type { Message, MessageStore } from "@botrelay/core"
import { Errors } from "@botrelay/core"
import { MessageQueries } from "@botrelay/sql"
import { Effect } from "effect"
import { attempt, compile, type Connection, db, first } from "./SqliteConnection.js"

const messagePageQuery = compile(MessageQueries.messagePage)
const findMessageQuery = compile(MessageQueries.findMessage)
const saveMessageQuery = compile(MessageQueries.saveMessage)
const hasFileQuery = compile(MessageQueries.hasFile)

/** Saves a message (inserts or replaces it) on a prepared statement: the pipeline's hottest write. */
export const messageWriter = (c: Connection): (message: Message.Message) => void => {
  const save = c.prepare(saveMessageQuery)
  return (m) => {
    save.run(...MessageQueries.saveMessageParameters(m))
  }
}

/** The `MessageStore` on SQLite: pages and single messages are read on raw statements. */
export const make = (c: Connection): MessageStore.MessageStoreService => {
  const messagePage = c.sqlite.prepare(messagePageQuery.sql).raw(true)
  const messageByKey = c.sqlite.prepare(findMessageQuery.sql).raw(true)
  const fileHeld = c.sqlite.prepare(hasFileQuery.sql).raw(true)
  const saveMessage = messageWriter(c)

  /** Saves the messages, all at once, or one by one when that fails; what the first unsaved one failed with. */
  const saveEach = (messages: ReadonlyArray<Message.Message>): unknown => {
    try {
      c.sqlite.transaction(() => messages.forEach(saveMessage))()
      return undefined
    } catch {
      let failure: unknown = undefined
      for (const m of messages) {
        try {
          c.sqlite.transaction(() => saveMessage(m))()
        } catch (error) {
          failure ??= error
        }
      }
      return failure
    }
  }

  return {
    saveMessage: (m) => c.groupCommit("saveMessage", () => saveMessage(m)),

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

    markMessagesDeleted: (botId, chatId, ids) =>
      attempt("markMessagesDeleted", () =>
        ids.length === 0 ? 0 : c.run(MessageQueries.markDeleted(db, botId, chatId, ids)))
  }
}
