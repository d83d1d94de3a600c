import { type Message, type MessageStore, Outgoing } from "@botrelay/core"
import { MessageCounts, MessageQueries, type Tables } from "@botrelay/sql"
import { Effect, Option } from "effect"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import * as Batches from "./Batches.js"
import { all, type Connection, pgDb, run } from "./PostgresConnection.js"
import * as Search from "./Search.js"

/** The columns a saved message sets besides its key. */
const replaced = [...MessageQueries.messageColumns, "search_vector"] as const

/** A message's row, with its words (`Search.vector`). */
const rowOf = (m: Message.Message) => {
  const [botId, chatId, id, userId, username, firstName, lastName, text, date, mediaType, fileId, replyTo, direction, editDate, deleted] =
    MessageQueries.messageParameters(m)
  return {
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
  }
}

/**
 * Inserts or replaces messages, no two with the same key, in one statement; one row per message telling whether
 * it was new (an upsert that updates leaves `xmax` set).
 */
const upsertMessages = (db: Kysely<Tables.Database>, messages: ReadonlyArray<Message.Message>) =>
  pgDb(db).insertInto("botrelay_messages").values(messages.map(rowOf)).onConflict((oc) =>
    oc.columns(["bot_id", "chat_id", "id"]).doUpdateSet((eb) =>
      Object.fromEntries(replaced.map((column) => [column, eb.ref(`excluded.${column}`)]))
    )
  ).returning(["bot_id", "chat_id", "id", sql<boolean>`xmax = 0`.as("inserted")])

const keyOf = (botId: number, chatId: number, id: number) => `${botId}:${chatId}:${id}`

/** Messages in slices of at most `Batches.rowsPerStatement` in which no key repeats, in their order. */
const distinctRuns = (messages: ReadonlyArray<Message.Message>): Array<ReadonlyArray<Message.Message>> => {
  const runs: Array<Array<Message.Message>> = []
  let current: Array<Message.Message> = []
  let keys = new Set<string>()
  for (const m of messages) {
    const key = keyOf(m.bot_id, m.chat_id, m.id)
    if (keys.has(key) || current.length >= Batches.rowsPerStatement) {
      runs.push(current)
      current = []
      keys = new Set()
    }
    current.push(m)
    keys.add(key)
  }
  if (current.length > 0) runs.push(current)
  return runs
}

/** Arrays of a column per field, for `unnest`. */
const columns = <A, K extends keyof A>(rows: ReadonlyArray<A>, keys: ReadonlyArray<K>) =>
  keys.map((key) => rows.map((row) => row[key]))

/**
 * Adds new messages to their chats' counters as `MessageCounts.addToChat` does, many chats in two statements:
 * the chats not stored yet are inserted with their counts, then the others are updated (unread: the incoming
 * messages after the chat's read mark).
 */
const addToChats = async (db: Kysely<Tables.Database>, chats: ReadonlyArray<MessageCounts.ChatCount>) => {
  const rows = chats.map((c) => {
    const [botId, chatId, type, messages, inCount, lastId, lastAt, oldestIn, inDates] = MessageCounts.addToChatParameters(c)
    return { botId, chatId, type, messages, inCount, lastId, lastAt, oldestIn, inDates }
  })
  const [botIds, chatIds, types, messages, inCounts, lastIds, lastAts] = columns(
    rows,
    ["botId", "chatId", "type", "messages", "inCount", "lastId", "lastAt"] as const
  )
  const { rows: inserted } = await sql<{ bot_id: number; chat_id: number }>`
    insert into botrelay_chats (bot_id, chat_id, type, message_count, unread_count, last_message_id, last_message_at)
    select * from unnest(${botIds}::bigint[], ${chatIds}::bigint[], ${types}::text[], ${messages}::bigint[],
      ${inCounts}::bigint[], ${lastIds}::bigint[], ${lastAts}::bigint[])
    on conflict (bot_id, chat_id) do nothing
    returning bot_id, chat_id`.execute(db)
  if (inserted.length === rows.length) return
  const isNew = new Set(inserted.map((r) => `${r.bot_id}:${r.chat_id}`))
  const stored = rows.filter((r) => !isNew.has(`${r.botId}:${r.chatId}`))
  const [sBotIds, sChatIds, sMessages, sInCounts, sLastIds, sLastAts, sOldestIns, sInDates] = columns(
    stored,
    ["botId", "chatId", "messages", "inCount", "lastId", "lastAt", "oldestIn", "inDates"] as const
  )
  await sql`
    update botrelay_chats as c set
      message_count = c.message_count + v.messages,
      unread_count = c.unread_count + case when v.oldest_in > c.read_at then v.in_count
        else (select count(*) from jsonb_array_elements_text(v.in_dates::jsonb) as d(value) where d.value::bigint > c.read_at) end,
      last_message_id = case when v.last_at >= c.last_message_at then v.last_id else c.last_message_id end,
      last_message_at = case when v.last_at > c.last_message_at then v.last_at else c.last_message_at end,
      unreachable_since = case when v.in_count > 0 then 0 else c.unreachable_since end,
      unreachable_reason = case when v.in_count > 0 then '' else c.unreachable_reason end
    from unnest(${sBotIds}::bigint[], ${sChatIds}::bigint[], ${sMessages}::bigint[], ${sInCounts}::bigint[],
      ${sLastIds}::bigint[], ${sLastAts}::bigint[], ${sOldestIns}::bigint[], ${sInDates}::text[])
      as v(bot_id, chat_id, messages, in_count, last_id, last_at, oldest_in, in_dates)
    where c.bot_id = v.bot_id and c.chat_id = v.chat_id`.execute(db)
}

/** Adds to the bots' hourly counts as `MessageCounts.addToHour` does, many hours in one statement. */
const addToHours = (db: Kysely<Tables.Database>, hours: ReadonlyArray<MessageCounts.HourCount>) => {
  const [botIds, hourList, ins, outs] = columns(hours, ["bot_id", "hour", "in_count", "out_count"] as const)
  return sql`
    insert into botrelay_message_hours (bot_id, hour, in_count, out_count)
    select * from unnest(${botIds}::bigint[], ${hourList}::bigint[], ${ins}::bigint[], ${outs}::bigint[])
    on conflict (bot_id, hour) do update set
      in_count = botrelay_message_hours.in_count + excluded.in_count,
      out_count = botrelay_message_hours.out_count + excluded.out_count`.execute(db)
}

/** Adds to the chats' daily counts as `MessageCounts.addToDay` does, many chat-days in one statement. */
const addToDays = (db: Kysely<Tables.Database>, days: ReadonlyArray<MessageCounts.DayCount>) => {
  const [botIds, dayList, chatIds, messages] = columns(days, ["bot_id", "day", "chat_id", "messages"] as const)
  return sql`
    insert into botrelay_chat_days (bot_id, day, chat_id, messages)
    select * from unnest(${botIds}::bigint[], ${dayList}::bigint[], ${chatIds}::bigint[], ${messages}::bigint[])
    on conflict (bot_id, day, chat_id) do update set
      messages = botrelay_chat_days.messages + excluded.messages`.execute(db)
}

/**
 * Saves messages (inserts them, or replaces those stored) in the caller's transaction, a statement per slice
 * of up to `Batches.rowsPerStatement` (a key repeated starts a new slice, so a later version replaces an earlier
 * one as one by one); the new ones are counted into their chats' counters and the hourly and daily counts,
 * one change per chat, hour and chat-day, a statement or two per slice of each.
 */
export const saveMessages = async (db: Kysely<Tables.Database>, messages: ReadonlyArray<Message.Message>) => {
  const added: Array<Message.Message> = []
  for (const run of distinctRuns(messages)) {
    const inserted = new Set<string>()
    for (const row of await all(db, upsertMessages(db, run))) {
      if (row.inserted) inserted.add(keyOf(row.bot_id, row.chat_id, row.id))
    }
    for (const m of run) if (inserted.has(keyOf(m.bot_id, m.chat_id, m.id))) added.push(m)
  }
  if (added.length === 0) return
  const counts = MessageCounts.countsOf(added)
  for (const chunk of Batches.chunks(counts.chats)) await addToChats(db, chunk)
  for (const chunk of Batches.chunks(counts.hours)) await addToHours(db, chunk)
  for (const chunk of Batches.chunks(counts.days)) await addToDays(db, chunk)
}

/** The message sent through the API with this `local_id`, and its request. */
const outgoing = async (db: Kysely<Tables.Database>, localId: number): Promise<MessageStore.OutgoingMessage | undefined> => {
  const [row] = await all(db, MessageQueries.findOutgoing(db, localId))
  return row === undefined ? undefined : {
    message: MessageQueries.toMessage(row.bot_id, row.chat_id, MessageQueries.pageColumns.map((column) => row[column])),
    request: row.request
  }
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

  chatsWithFile: (botId, fileId) =>
    c.use("chatsWithFile", async (db) => (await all(db, MessageQueries.chatsWithFile(db, botId, fileId))).map((r) => r.chat_id)),
  queueMessage: (message, request) =>
    c.transaction("queueMessage", async (db) => {
      const [row] = await all(db, MessageQueries.insertOutgoing(db, message.bot_id, message.chat_id, request, message.date))
      const localId = Number(row!.local_id)
      await saveMessages(db, [{ ...message, id: Outgoing.placeholderId(localId) }])
      await run(db, MessageQueries.queueMessage(db, localId, message.date))
      return (await outgoing(db, localId))!.message
    }),

  setDelivery: (localId, change) =>
    c.transaction("setDelivery", async (db) => {
      const [before] = await all(db, MessageQueries.findOutgoing(db, localId))
      if (before === undefined) return Option.none()
      await run(
        db,
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
      const [after] = await all(db, MessageQueries.findOutgoing(db, localId))
      if (after!.id !== before.id || after!.date !== before.date) {
        await run(db, MessageQueries.pointLastMessage(db, after!.id, after!.date, before.bot_id, before.chat_id, before.id))
      }
      if (after!.date !== before.date && before.deleted === 0) {
        const counts = MessageCounts.moved(before.bot_id, before.chat_id, before.date, after!.date)
        for (const hour of counts.hours) await run(db, MessageCounts.addToHour(db, ...hour))
        for (const day of counts.days) await run(db, MessageCounts.addToDay(db, ...day))
      }
      return Option.some((await outgoing(db, localId))!.message)
    }),

  findOutgoing: (localId) => c.use("findOutgoing", async (db) => Option.fromNullable(await outgoing(db, localId))),

  markMessagesDeleted: (botId, chatId, ids) =>
    c.use("markMessagesDeleted", (db) =>
      ids.length === 0 ? Promise.resolve(0) : run(db, MessageQueries.markDeleted(db, botId, chatId, ids)))
})
