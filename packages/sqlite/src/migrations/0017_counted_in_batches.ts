import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"
import { chatInsertTriggerOf0012 } from "./0012_chats_people.js"

/**
 * 0017: new messages are counted into their chats, hours and chat-days by the store, once per chat, hour
 * and chat-day of each write (`MessageCounts`), instead of three upserts per message by a trigger; the
 * trigger that follows deletions stays.
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql`DROP TRIGGER botrelay_messages_chat_insert`.execute(db)
  },
  async down(db: Kysely<any>) {
    await sql.raw(chatInsertTriggerOf0012).execute(db)
  }
}
