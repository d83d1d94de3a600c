import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/** 0014: whether a bot's history holds a file (`GET /api/media`) is an index search, not a scan of the history. */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("botrelay_messages_file")
      .on("botrelay_messages")
      .columns(["bot_id", "file_id"])
      .where(sql.ref("file_id"), "is not", null)
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("botrelay_messages_file").ifExists().execute()
  }
}
