import { type Kysely, sql } from "kysely"
import type { Database } from "./Tables.js"

/** Claims (caller, key) for a request unless it is held; a row when claimed. */
export const insertClaim = (db: Kysely<Database>, caller: string, key: string, request: string, now: number) =>
  db.insertInto("botrelay_idempotency").values({ caller, key, request, status: 0, body: "", created_at: now })
    .onConflict((oc) => oc.columns(["caller", "key"]).doNothing())
    .returning("caller")

/** Takes over (caller, key) when its claim is older than `expiredBefore`; a row when taken. */
export const replaceExpired = (
  db: Kysely<Database>,
  request: string,
  now: number,
  caller: string,
  key: string,
  expiredBefore: number
) =>
  db.updateTable("botrelay_idempotency")
    .set({ request, status: sql.lit(0), body: sql.lit(""), created_at: now })
    .where("caller", "=", caller)
    .where("key", "=", key)
    .where("created_at", "<", expiredBefore)
    .returning("caller")

/** The request holding (caller, key). */
export const findClaim = (db: Kysely<Database>, caller: string, key: string) =>
  db.selectFrom("botrelay_idempotency").select(["request", "status", "body", "created_at"])
    .where("caller", "=", caller)
    .where("key", "=", key)

/** Keeps the answer of a claimed key. */
export const complete = (db: Kysely<Database>, status: number, body: string, caller: string, key: string) =>
  db.updateTable("botrelay_idempotency").set({ status, body }).where("caller", "=", caller).where("key", "=", key)

/** Lets a claimed key go. */
export const release = (db: Kysely<Database>, caller: string, key: string) =>
  db.deleteFrom("botrelay_idempotency").where("caller", "=", caller).where("key", "=", key)

/** Deletes the claims older than `before`. */
export const sweep = (db: Kysely<Database>, before: number) =>
  db.deleteFrom("botrelay_idempotency").where("created_at", "<", before)
