import type { Kysely, Migration } from "kysely"
import { sql } from "kysely"

/**
 * 0029: deliveries are found by status through partial indexes of the pending and the dead ones only, so that
 * queuing a delivery changes two indexes instead of three and marking it delivered removes one entry instead
 * of moving two. Dead ones are also indexed by id alone, for the newest dead of every bot. Finished deliveries
 * are found by their bot (`botrelay_deliveries_bot`) or in id order; every bot's pending ones newest first in id
 * order too (they are the newest rows).
 */
export const migration: Migration = {
  async up(db: Kysely<any>) {
    await sql`CREATE INDEX botrelay_deliveries_pending ON botrelay_deliveries (bot_id, id) WHERE status = 'pending'`
      .execute(db)
    await sql`CREATE INDEX botrelay_deliveries_dead ON botrelay_deliveries (bot_id, id) WHERE status = 'dead'`.execute(db)
    await sql`CREATE INDEX botrelay_deliveries_dead_ids ON botrelay_deliveries (id) WHERE status = 'dead'`.execute(db)
    await sql`DROP INDEX botrelay_deliveries_bot_status`.execute(db)
    await sql`DROP INDEX botrelay_deliveries_status`.execute(db)
  },
  async down(db: Kysely<any>) {
    await sql`CREATE INDEX botrelay_deliveries_bot_status ON botrelay_deliveries (bot_id, status, id)`.execute(db)
    await sql`CREATE INDEX botrelay_deliveries_status ON botrelay_deliveries (status, id)`.execute(db)
    await sql`DROP INDEX botrelay_deliveries_dead_ids`.execute(db)
    await sql`DROP INDEX botrelay_deliveries_dead`.execute(db)
    await sql`DROP INDEX botrelay_deliveries_pending`.execute(db)
  }
}
