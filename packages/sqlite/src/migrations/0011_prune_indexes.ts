import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0011: housekeeping finds processed updates and sent route sends older than a time by an index search
 * instead of a scan (delivered deliveries already are, in id order, through `botrelay_deliveries_status`).
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createIndex("botrelay_inbox_processed_received")
      .on("botrelay_inbox")
      .column("received_at")
      .where(sql.ref("processed"), "=", 1)
      .execute()
    await db.schema
      .createIndex("botrelay_route_sends_sent_updated")
      .on("botrelay_route_sends")
      .column("updated_at")
      .where(sql.ref("status"), "=", "sent")
      .execute()
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex("botrelay_inbox_processed_received").ifExists().execute()
    await db.schema.dropIndex("botrelay_route_sends_sent_updated").ifExists().execute()
  }
}
