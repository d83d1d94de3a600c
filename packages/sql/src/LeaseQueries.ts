import { Errors } from "@botrelay/core"
import { Effect } from "effect"
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from "kysely"
import { sql } from "kysely"
import type { Database, LeasesTable } from "./Tables.js"

/** What a fence names: the bot, its owner and the lease's epoch. */
export interface FenceColumns {
  readonly bot_id: number
  readonly instance_id: string
  readonly epoch: number
}

export const heartbeat = (db: Kysely<Database>, id: string, startedAt: string, version: string, at: string) =>
  db.insertInto("botrelay_instances")
    .values({ id, started_at: startedAt, last_heartbeat_at: at, version })
    .onConflict((oc) => oc.column("id").doUpdateSet((eb) => ({ last_heartbeat_at: eb.ref("excluded.last_heartbeat_at") })))

export const forgetInstance = (db: Kysely<Database>, id: string) =>
  db.deleteFrom("botrelay_instances").where("id", "=", id)

export const releaseAll = (db: Kysely<Database>, instanceId: string) =>
  db.updateTable("botrelay_leases")
    .set({ expires_at: sql.lit(""), running: sql.lit(0) })
    .where("instance_id", "=", instanceId)

export const instances = (db: Kysely<Database>, since: string) =>
  db.selectFrom("botrelay_instances")
    .select(["id", "version", "started_at", "last_heartbeat_at"])
    .where("last_heartbeat_at", ">", since)
    .orderBy("id")

export const leases = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_leases").select(["bot_id", "instance_id", "epoch", "expires_at", "running"]).orderBy("bot_id")

/** Takes the bot's lease unless it is held at `now`; returns the lease when taken. */
export const acquire = (db: Kysely<Database>, botId: number, instanceId: string, now: string, until: string) =>
  db.insertInto("botrelay_leases")
    .values({ bot_id: botId, instance_id: instanceId, epoch: sql.lit(1), expires_at: until, running: sql.lit(0) })
    .onConflict((oc) =>
      oc.column("bot_id")
        .doUpdateSet((eb) => ({
          instance_id: eb.ref("excluded.instance_id"),
          epoch: eb(eb.ref("botrelay_leases.epoch"), "+", sql.lit(1)),
          expires_at: eb.ref("excluded.expires_at"),
          running: sql.lit(0)
        }))
        .where("botrelay_leases.expires_at", "<=", now)
    )
    .returning(["bot_id", "instance_id", "epoch", "expires_at", "running"])

/** The leases the fences name, still held by their instance with their epoch. */
const held = (fences: ReadonlyArray<FenceColumns>) => (eb: ExpressionBuilder<Database, "botrelay_leases">): Expression<SqlBool> =>
  eb.or(fences.map((f) =>
    eb.and([eb("bot_id", "=", f.bot_id), eb("instance_id", "=", f.instance_id), eb("epoch", "=", f.epoch)])
  ))

export const renew = (db: Kysely<Database>, fences: ReadonlyArray<FenceColumns>, until: string) =>
  db.updateTable("botrelay_leases").set({ expires_at: until }).where(held(fences)).returning("bot_id")

export const release = (db: Kysely<Database>, fences: ReadonlyArray<FenceColumns>) =>
  db.updateTable("botrelay_leases").set({ expires_at: sql.lit(""), running: sql.lit(0) }).where(held(fences))

export const setRunning = (db: Kysely<Database>, fence: FenceColumns, running: boolean) =>
  db.updateTable("botrelay_leases").set({ running: running ? 1 : 0 }).where(held([fence]))

/** The lease the fence names, if it still holds. */
export const fenceHolds = (db: Kysely<Database>, fence: FenceColumns) =>
  db.selectFrom("botrelay_leases")
    .select("epoch")
    .where("bot_id", "=", fence.bot_id)
    .where("instance_id", "=", fence.instance_id)
    .where("epoch", "=", fence.epoch)

/** A lease row as the core sees it. */
export const toLease = (row: Pick<LeasesTable, "bot_id" | "instance_id" | "epoch" | "expires_at" | "running">) => ({
  bot_id: row.bot_id,
  instance_id: row.instance_id,
  epoch: row.epoch,
  expires_at: row.expires_at,
  running: row.running === 1
})

/** How many fences one statement names at most (two parameters each, within every driver's limit). */
export const chunkSize = 500

/** A write refused because its fence no longer holds fails with that `LeaseLost`, not as a storage failure. */
export const surfaceLeaseLost = <A, R>(
  effect: Effect.Effect<A, Errors.StorageError, R>
): Effect.Effect<A, Errors.StorageError | Errors.LeaseLost, R> =>
  Effect.mapError(effect, (e) => e.cause instanceof Errors.LeaseLost ? e.cause : e)
