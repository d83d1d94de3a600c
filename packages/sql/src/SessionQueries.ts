import type { Account } from "@botrelay/core"
import type { Kysely } from "kysely"
import type { Database } from "./Tables.js"

export const createSession = (db: Kysely<Database>, session: Account.SessionRecord) =>
  db.insertInto("botrelay_sessions").values({
    id_hash: session.id_hash,
    account_id: session.account_id,
    created_at: session.created_at,
    last_seen_at: session.last_seen_at
  })

export const findSession = (db: Kysely<Database>, idHash: string) =>
  db.selectFrom("botrelay_sessions").selectAll().where("id_hash", "=", idHash)

export const touchSession = (db: Kysely<Database>, idHash: string, at: string) =>
  db.updateTable("botrelay_sessions").set({ last_seen_at: at }).where("id_hash", "=", idHash)

export const deleteSession = (db: Kysely<Database>, idHash: string) =>
  db.deleteFrom("botrelay_sessions").where("id_hash", "=", idHash)

/** The account's sessions but the one of `exceptIdHash`. */
export const deleteAccountSessions = (db: Kysely<Database>, accountId: number, exceptIdHash?: string) => {
  const query = db.deleteFrom("botrelay_sessions").where("account_id", "=", accountId)
  return exceptIdHash === undefined ? query : query.where("id_hash", "!=", exceptIdHash)
}

/** Sessions last seen before `idleBefore` or created before `createdBefore`. */
export const pruneSessions = (db: Kysely<Database>, idleBefore: string, createdBefore: string) =>
  db.deleteFrom("botrelay_sessions")
    .where((eb) => eb.or([eb("last_seen_at", "<", idleBefore), eb("created_at", "<", createdBefore)]))
