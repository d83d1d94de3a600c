import type { CannedReply } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import type { CannedRepliesTable, Database } from "./Tables.js"

const parseIds = (text: string): Array<number> => {
  try {
    const parsed: unknown = JSON.parse(text)
    return Array.isArray(parsed) ? parsed.filter((id): id is number => Number.isSafeInteger(id)) : []
  } catch {
    return []
  }
}

/** The canned reply a row of `botrelay_canned_replies` holds. */
export const toCannedReply = (r: Selectable<CannedRepliesTable>): CannedReply.CannedReply => ({
  id: r.id,
  code: r.code,
  text: r.text,
  bot_ids: parseIds(r.bot_ids),
  created_at: r.created_at,
  updated_at: r.updated_at
})

const rowOf = (input: CannedReply.CannedReplyRecordInput) => ({
  code: input.code,
  text: input.text,
  bot_ids: JSON.stringify([...new Set(input.bot_ids)].sort((a, b) => a - b)),
  created_at: input.created_at,
  updated_at: input.updated_at
})

/** Every canned reply, by code. */
export const listCannedReplies = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_canned_replies").selectAll().orderBy("code").orderBy("id")

export const findCannedReply = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_canned_replies").selectAll().where("id", "=", id)

/** The reply with the code, ignoring case. */
export const findByCode = (db: Kysely<Database>, code: string) =>
  db.selectFrom("botrelay_canned_replies").selectAll().where(sql`lower(code)`, "=", code.toLowerCase())

export const insertCannedReply = (db: Kysely<Database>, input: CannedReply.CannedReplyRecordInput) =>
  db.insertInto("botrelay_canned_replies").values(rowOf(input)).returningAll()

export const updateCannedReply = (db: Kysely<Database>, id: number, input: CannedReply.CannedReplyRecordInput) =>
  db.updateTable("botrelay_canned_replies").set(rowOf(input)).where("id", "=", id).returningAll()

export const deleteCannedReply = (db: Kysely<Database>, id: number) =>
  db.deleteFrom("botrelay_canned_replies").where("id", "=", id)
