import { type Message, Outgoing } from "@botrelay/core"
import { type Kysely, sql } from "kysely"
import { bit } from "./Columns.js"
import type { Database, MessagesTable } from "./Tables.js"

/** The columns of a message besides its key (bot, chat, id), in the order of `Message`'s fields. */
export const messageColumns = [
  "user_id",
  "username",
  "first_name",
  "last_name",
  "text",
  "date",
  "media_type",
  "file_id",
  "reply_to_message_id",
  "direction",
  "edit_date",
  "deleted"
] as const satisfies ReadonlyArray<keyof MessagesTable>

/** The delivery columns of a message sent through the API; a save from Telegram's answer leaves them as they are. */
export const deliveryColumns = ["local_id", "delivery", "delivery_error", "delivery_at"] as const satisfies ReadonlyArray<
  keyof MessagesTable
>

/** The columns of a message page: bot and chat come from the query. */
export const pageColumns = ["id", ...messageColumns, ...deliveryColumns] as const

/** A message of one chat from a raw row of `pageColumns`; optional fields only when set. */
export const toMessage = (botId: number, chatId: number, r: ReadonlyArray<any>): Message.Message => {
  const message: { -readonly [K in keyof Message.Message]: Message.Message[K] } = {
    id: Outgoing.isPlaceholder(r[0]) ? 0 : r[0],
    chat_id: chatId,
    bot_id: botId,
    user_id: r[1],
    username: r[2],
    first_name: r[3],
    last_name: r[4],
    text: r[5],
    date: r[6],
    direction: r[10],
    edit_date: r[11]
  }
  if (r[12] === 1) message.deleted = true
  if (r[7] !== null) message.media_type = r[7]
  if (r[8] !== null) message.file_id = r[8]
  if (r[9] !== null) message.reply_to_message_id = r[9]
  if (r[13] !== null && r[13] !== undefined) {
    message.local_id = Number(r[13])
    message.delivery = r[14]
    message.delivery_error = r[15]
    message.delivery_at = Number(r[16])
  }
  return message
}

/** One chat's messages, newest first. */
export const messagePage = (db: Kysely<Database>, botId: number, chatId: number, limit: number, offset: number) =>
  db.selectFrom("botrelay_messages").select(pageColumns)
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .orderBy("date", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .offset(offset)

/** One message by its key, in `pageColumns`. */
export const findMessage = (db: Kysely<Database>, botId: number, chatId: number, id: number) =>
  db.selectFrom("botrelay_messages").select(pageColumns)
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("id", "=", id)

/** Inserts a message unless one with its key is stored; the parameters are its fields (`messageParameters`). */
export const insertMessage = (
  db: Kysely<Database>,
  botId: number,
  chatId: number,
  id: number,
  userId: number,
  username: string,
  firstName: string,
  lastName: string,
  text: string,
  date: number,
  mediaType: string | null,
  fileId: string | null,
  replyToMessageId: number | null,
  direction: "in" | "out",
  editDate: number,
  deleted: number
) =>
  db.insertInto("botrelay_messages").values({
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
    reply_to_message_id: replyToMessageId,
    direction,
    edit_date: editDate,
    deleted
  }).onConflict((oc) => oc.columns(["bot_id", "chat_id", "id"]).doNothing())

/** Inserts or replaces a message. */
export const saveMessage = (db: Kysely<Database>, ...parameters: ReturnType<typeof messageParameters>) =>
  insertMessage(db, ...parameters).onConflict((oc) =>
    oc.columns(["bot_id", "chat_id", "id"]).doUpdateSet((eb) =>
      Object.fromEntries(messageColumns.map((column) => [column, eb.ref(`excluded.${column}`)]))
    )
  )

/** The parameters of `insertMessage` and `saveMessage` for a message. */
export const messageParameters = (m: Message.Message) =>
  [
    m.bot_id,
    m.chat_id,
    m.id,
    m.user_id,
    m.username,
    m.first_name,
    m.last_name,
    m.text,
    m.date,
    m.media_type ?? null,
    m.file_id ?? null,
    m.reply_to_message_id ?? null,
    m.direction,
    m.edit_date,
    bit(m.deleted === true)
  ] as const

/** Marks the messages of a chat with these ids deleted. */
export const markDeleted = (db: Kysely<Database>, botId: number, chatId: number, ids: ReadonlyArray<number>) =>
  db.updateTable("botrelay_messages").set({ deleted: 1 })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("id", "in", [...new Set(ids)])

/** One row when the bot's history holds a message with this file; an index search (`botrelay_messages_file`). */
/** The chats of the bot whose stored messages hold the file (by the (bot_id, file_id) index). */
export const chatsWithFile = (db: Kysely<Database>, botId: number, fileId: string) =>
  db.selectFrom("botrelay_messages").select("chat_id").distinct()
    .where("bot_id", "=", botId)
    .where("file_id", "=", fileId)

export const hasFile = (db: Kysely<Database>, botId: number, fileId: string) =>
  db.selectFrom("botrelay_messages").select("id")
    .where("bot_id", "=", botId)
    .where("file_id", "=", fileId)
    .limit(sql.lit(1))

/** Numbers an outgoing message of the API (`botrelay_outgoing`), keeping what was asked; returns its `local_id`. */
export const insertOutgoing = (db: Kysely<Database>, botId: number, chatId: number, request: string, createdAt: number) =>
  db.insertInto("botrelay_outgoing").values({ bot_id: botId, chat_id: chatId, request, created_at: createdAt })
    .returning("local_id")

/** An outgoing message by its `local_id`: its bot, chat, `pageColumns` and the request kept for it. */
export const findOutgoing = (db: Kysely<Database>, localId: number) =>
  db.selectFrom("botrelay_messages as m")
    .innerJoin("botrelay_outgoing as o", "o.local_id", "m.local_id")
    .select(["m.bot_id", "m.chat_id", ...pageColumns.map((column) => `m.${column}` as const), "o.request"])
    .where("m.local_id", "=", localId)

/** Stores a queued outgoing message under its placeholder id, with its `local_id`. */
export const queueMessage = (db: Kysely<Database>, localId: number, at: number) =>
  db.updateTable("botrelay_messages").set({ local_id: localId, delivery: "queued", delivery_error: "", delivery_at: at })
    .where("id", "=", Outgoing.placeholderId(localId))

/**
 * Sets the delivery of the message with this `local_id`; a `messageId` (not 0) becomes its id unless the chat
 * already holds a message with that id, and a `date` (not 0) its date.
 */
export const setDelivery = (
  db: Kysely<Database>,
  delivery: string,
  error: string,
  at: number,
  messageId: number,
  date: number,
  localId: number
) =>
  db.updateTable("botrelay_messages as m").set({
    delivery,
    delivery_error: error,
    delivery_at: at,
    id: sql<number>`case when ${messageId} = 0 or exists (select 1 from botrelay_messages as o
      where o.bot_id = m.bot_id and o.chat_id = m.chat_id and o.id = ${messageId}) then m.id else ${messageId} end`,
    date: sql<number>`case when ${date} = 0 then m.date else ${date} end`
  }).where("m.local_id", "=", localId)

/**
 * Makes the message (once `fromId`, now `toId`, dated `date`) its chat's last message when it was, or when it
 * is not older than the last one.
 */
export const pointLastMessage = (
  db: Kysely<Database>,
  toId: number,
  date: number,
  botId: number,
  chatId: number,
  fromId: number
) =>
  db.updateTable("botrelay_chats").set({
    last_message_id: toId,
    last_message_at: sql<number>`case when ${date} > last_message_at then ${date} else last_message_at end`
  })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where((eb) => eb.or([eb("last_message_id", "=", fromId), eb("last_message_at", "<=", date)]))
