import type { Message, MessageStore } from "@botrelay/core"
import { MessageCounts, MessageQueries, type Tables } from "@botrelay/sql"
import { Effect, Option } from "effect"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import { all, type Connection, pgDb, run } from "./PostgresConnection.js"
import * as Search from "./Search.js"

/** Postgres counts a JSON array's numbers with `jsonb_array_elements_text`. */
const addToChat = MessageCounts.addToChat((inDates, than) =>
  sql<number>`(select count(*) from jsonb_array_elements_text(${inDates}::jsonb) as d(value) where d.value::bigint > ${than})`
)

/** The columns a saved message sets besides its key. */
const replaced = [...MessageQueries.messageColumns, "search_vector"] as const

/**
 * Inserts or replaces a message with its words (`Search.vector`); one row telling whether it was new (an
 * upsert that updates leaves `xmax` set).
 */
const upsertMessage = (db: Kysely<Tables.Database>, m: Message.Message) => {
  const [botId, chatId, id, userId, username, firstName, lastName, text, date, mediaType, fileId, replyTo, direction, editDate, deleted] =
    MessageQueries.messageParameters(m)
  return pgDb(db).insertInto("botrelay_messages").values({
    bot_id: botId,
    chat_id: chatId,
    id,
    user_id: userId,
    username,
    first_name: firstName,
    last_name: lastName,
    text,
    date,
    media_type: mediaType,
    file_id: fileId,
    reply_to_message_id: replyTo,
    direction,
    edit_date: editDate,
    deleted,
    search_vector: Search.vector(text)
  }).onConflict((oc) =>
    oc.columns(["bot_id", "chat_id", "id"]).doUpdateSet((eb) =>
      Object.fromEntries(replaced.map((column) => [column, eb.ref(`excluded.${column}`)]))
    )
  ).returning(sql<boolean>`xmax = 0`.as("inserted"))
}

/**
 * Saves messages (inserts them, or replaces those stored) in the caller's transaction; the new ones are counted
 * into their chats' counters and the hourly and daily counts, one change per chat, hour and chat-day.
 */
export const saveMessages = async (db: Kysely<Tables.Database>, messages: ReadonlyArray<Message.Message>) => {
  const added: Array<Message.Message> = []
  for (const m of messages) {
    const [row] = await all(db, upsertMessage(db, m))
    if (row?.inserted === true) added.push(m)
  }
  if (added.length === 0) return
  const counts = MessageCounts.countsOf(added)
  for (const chat of counts.chats) await run(db, addToChat(db, ...MessageCounts.addToChatParameters(chat)))
  for (const h of counts.hours) await run(db, MessageCounts.addToHour(db, h.bot_id, h.hour, h.in_count, h.out_count))
  for (const d of counts.days) await run(db, MessageCounts.addToDay(db, d.bot_id, d.day, d.chat_id, d.messages))
}

/** The `MessageStore` on Postgres. */
export const make = (c: Connection): MessageStore.MessageStoreService => ({
  saveMessage: (m) => c.transaction("saveMessage", (db) => saveMessages(db, [m])),

  saveMessages: (messages) =>
    c.transaction("saveMessages", (db) => saveMessages(db, messages)).pipe(
      Effect.catchAll((failure) =>
        // One that cannot be saved (its bot was deleted meanwhile) does not keep the others from being saved.
        Effect.forEach(messages, (m) => Effect.either(c.transaction("saveMessages", (db) => saveMessages(db, [m])))).pipe(
          Effect.flatMap((results) => {
            const failed = results.find((r) => r._tag === "Left")
            return Effect.fail(failed?._tag === "Left" ? failed.left : failure)
          })
        )
      )
    ),

  listMessages: (query) =>
    c.use("listMessages", async (db) =>
      (await all(db, MessageQueries.messagePage(db, query.bot_id, query.chat_id, query.limit, query.offset))).map((r) =>
        MessageQueries.toMessage(query.bot_id, query.chat_id, MessageQueries.pageColumns.map((column) => r[column]))
      )),

  findMessage: (botId, chatId, id) =>
    c.use("findMessage", async (db) => {
      const [r] = await all(db, MessageQueries.findMessage(db, botId, chatId, id))
      return r === undefined
        ? Option.none()
        : Option.some(MessageQueries.toMessage(botId, chatId, MessageQueries.pageColumns.map((column) => r[column])))
    }),

  hasFile: (botId, fileId) =>
    c.use("hasFile", async (db) => (await all(db, MessageQueries.hasFile(db, botId, fileId))).length > 0),

  markMessagesDeleted: (botId, chatId, ids) =>
    c.use("markMessagesDeleted", (db) =>
      ids.length === 0 ? Promise.resolve(0) : run(db, MessageQueries.markDeleted(db, botId, chatId, ids)))
})
