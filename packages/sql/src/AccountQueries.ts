import type { Account, Scope } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { bit } from "./Columns.js"
import { columnsOf } from "./ScopeQueries.js"
import type { AccountsTable, Database } from "./Tables.js"

/** A row of `botrelay_accounts`. */
export type AccountRow = Selectable<AccountsTable>

/** How usernames are compared: in lower case (they are ASCII). */
export const usernameKey = (username: string): string => username.toLowerCase()

/** The account a row holds, with its scope (its bots ascending); never its password hash. */
export const toAccount = (r: AccountRow, scopes: ReadonlyArray<Scope.Entry>): Account.Account => ({
  id: r.id,
  username: r.username,
  display_name: r.display_name,
  role: r.role,
  bot_ids: scopes.map((e) => e.bot_id),
  scopes,
  enabled: r.enabled === 1,
  created_at: r.created_at,
  last_login_at: r.last_login_at
})

export const insertAccount = (db: Kysely<Database>, input: Account.AccountRecordInput) =>
  db.insertInto("botrelay_accounts").values({
    username: input.username,
    username_key: usernameKey(input.username),
    display_name: input.display_name,
    role: input.role,
    password_hash: input.password_hash,
    enabled: 1,
    created_at: input.created_at,
    last_login_at: ""
  }).returningAll()

export const linkBot = (db: Kysely<Database>, accountId: number, entry: Scope.Entry) =>
  db.insertInto("botrelay_account_bots").values({ account_id: accountId, bot_id: entry.bot_id, ...columnsOf(entry) })

export const unlinkBots = (db: Kysely<Database>, accountId: number) =>
  db.deleteFrom("botrelay_account_bots").where("account_id", "=", accountId)

/** The links of an account to its bots, ascending by bot. */
export const linksOf = (db: Kysely<Database>, accountId: number) =>
  db.selectFrom("botrelay_account_bots").selectAll().where("account_id", "=", accountId).orderBy("bot_id")

export const listAccounts = (db: Kysely<Database>) => db.selectFrom("botrelay_accounts").selectAll().orderBy("id")

/** Every account's bots, by account and bot. */
export const listLinks = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_account_bots").selectAll().orderBy("account_id").orderBy("bot_id")

export const findAccount = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_accounts").selectAll().where("id", "=", id)

/** The account of a username, whatever its case. */
export const findByUsername = (db: Kysely<Database>, username: string) =>
  db.selectFrom("botrelay_accounts").selectAll().where("username_key", "=", usernameKey(username))

/** Sets the given columns; with none, reads the row. */
export const updateAccount = (
  db: Kysely<Database>,
  id: number,
  changes: Omit<Account.AccountChanges, "scopes">
) => {
  const set = {
    ...(changes.display_name === undefined ? {} : { display_name: changes.display_name }),
    ...(changes.role === undefined ? {} : { role: changes.role }),
    ...(changes.enabled === undefined ? {} : { enabled: bit(changes.enabled) })
  }
  return Object.keys(set).length === 0
    ? findAccount(db, id)
    : db.updateTable("botrelay_accounts").set(set).where("id", "=", id).returningAll()
}

export const setPasswordHash = (db: Kysely<Database>, id: number, hash: string) =>
  db.updateTable("botrelay_accounts").set({ password_hash: hash }).where("id", "=", id)

export const recordLogin = (db: Kysely<Database>, id: number, at: string) =>
  db.updateTable("botrelay_accounts").set({ last_login_at: at }).where("id", "=", id)

/** The deletes that remove an account with its sessions and links, in order. */
export const deleteAccount = (db: Kysely<Database>, id: number) => [
  db.deleteFrom("botrelay_sessions").where("account_id", "=", id),
  unlinkBots(db, id),
  db.deleteFrom("botrelay_accounts").where("id", "=", id)
] as const

export const countEnabledAdmins = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_accounts")
    .select((eb) => eb.fn.countAll<number>().as("count"))
    .where("role", "=", "admin")
    .where("enabled", "=", 1)
