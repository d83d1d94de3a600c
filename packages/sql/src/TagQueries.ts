import type { ChatTag } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import type { Database, TagsTable } from "./Tables.js"

/** The tag a row of `botrelay_tags` holds. */
export const toTag = (r: Selectable<TagsTable>): ChatTag.Tag => ({
  id: r.id,
  bot_id: r.bot_id,
  chat_id: r.chat_id,
  user_id: r.user_id,
  username: r.username,
  tag: r.tag,
  color: r.color,
  created_at: r.created_at
})

/** Updates the username and colour of the same (bot, chat, user, tag), if assigned. */
export const updateTag = (db: Kysely<Database>, input: ChatTag.TagRecordInput) =>
  db.updateTable("botrelay_tags")
    .set({ username: input.username, color: input.color })
    .where("bot_id", "=", input.bot_id)
    .where("chat_id", "=", input.chat_id)
    .where("user_id", "=", input.user_id)
    .where("tag", "=", input.tag)
    .returningAll()

export const insertTag = (db: Kysely<Database>, input: ChatTag.TagRecordInput) =>
  db.insertInto("botrelay_tags").values({
    bot_id: input.bot_id,
    chat_id: input.chat_id,
    user_id: input.user_id,
    username: input.username,
    tag: input.tag,
    color: input.color,
    created_at: input.created_at
  }).returningAll()

/** Tags by id, optionally of one chat, one bot and one user. */
export const listTags = (
  db: Kysely<Database>,
  filter: {
    readonly chat_id?: number | undefined
    readonly bot_id?: number | undefined
    readonly user_id?: number | undefined
  }
) => {
  let query = db.selectFrom("botrelay_tags").selectAll().orderBy("id")
  if (filter.chat_id !== undefined) query = query.where("chat_id", "=", filter.chat_id)
  if (filter.bot_id !== undefined) query = query.where("bot_id", "=", filter.bot_id)
  return filter.user_id === undefined ? query : query.where("user_id", "=", filter.user_id)
}

export const findTag = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_tags").selectAll().where("id", "=", id)

export const deleteTag = (db: Kysely<Database>, id: number) => db.deleteFrom("botrelay_tags").where("id", "=", id)
