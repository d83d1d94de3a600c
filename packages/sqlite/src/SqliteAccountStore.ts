import { Account, type AccountStore } from "@botrelay/core"
import { AccountQueries } from "@botrelay/sql"
import { Effect, Option } from "effect"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `AccountStore` on SQLite: an account's bots are rows of `botrelay_account_bots`. */
export const make = (c: Connection): AccountStore.AccountStoreService => {
  const withBotIds = (row: AccountQueries.AccountRow): Account.Account =>
    AccountQueries.toAccount(row, c.all(AccountQueries.botIdsOf(db, row.id)).map((r) => r.bot_id))

  const link = (accountId: number, botIds: ReadonlyArray<number>): Array<number> => {
    const ids = Array.from(new Set(botIds)).sort((a, b) => a - b)
    for (const botId of ids) c.run(AccountQueries.linkBot(db, accountId, botId))
    return ids
  }

  const insertAccount = c.transaction((input: Account.AccountRecordInput): Option.Option<Account.Account> => {
    if (c.all(AccountQueries.findByUsername(db, input.username)).length > 0) return Option.none()
    const row = c.all(AccountQueries.insertAccount(db, input))[0]!
    return Option.some(AccountQueries.toAccount(row, link(row.id, input.bot_ids)))
  })

  const updateAccount = c.transaction((id: number, changes: Account.AccountChanges): Option.Option<Account.Account> => {
    const { bot_ids, ...columns } = changes
    const row = c.all(AccountQueries.updateAccount(db, id, columns))[0]
    if (row === undefined) return Option.none()
    if (bot_ids === undefined) return Option.some(withBotIds(row))
    c.run(AccountQueries.unlinkBots(db, id))
    return Option.some(AccountQueries.toAccount(row, link(id, bot_ids)))
  })

  const deleteAccount = c.transaction((id: number): boolean => {
    let deleted = 0
    for (const query of AccountQueries.deleteAccount(db, id)) deleted = c.run(query)
    return deleted > 0
  })

  return {
    insertAccount: (input) =>
      attempt("insertAccount", () => insertAccount(input)).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new Account.UsernameTaken({ username: input.username })),
          onSome: Effect.succeed
        }))
      ),

    listAccounts: attempt("listAccounts", () => {
      const botIds = new Map<number, Array<number>>()
      for (const link of c.all(AccountQueries.listLinks(db))) {
        const ids = botIds.get(link.account_id)
        if (ids === undefined) botIds.set(link.account_id, [link.bot_id])
        else ids.push(link.bot_id)
      }
      return c.all(AccountQueries.listAccounts(db)).map((row) => AccountQueries.toAccount(row, botIds.get(row.id) ?? []))
    }),

    findAccount: (id) => attempt("findAccount", () => first(c.all(AccountQueries.findAccount(db, id)), withBotIds)),

    findLogin: (username) =>
      attempt("findLogin", () =>
        first(c.all(AccountQueries.findByUsername(db, username)), (row) => ({
          account: withBotIds(row),
          password_hash: row.password_hash
        }))),

    updateAccount: (id, changes) => attempt("updateAccount", () => updateAccount(id, changes)),

    setPasswordHash: (id, hash) => attempt("setPasswordHash", () => c.run(AccountQueries.setPasswordHash(db, id, hash)) > 0),

    recordLogin: (id, at) =>
      attempt("recordLogin", () => {
        c.run(AccountQueries.recordLogin(db, id, at))
      }),

    deleteAccount: (id) => attempt("deleteAccount", () => deleteAccount(id)),

    countEnabledAdmins: attempt("countEnabledAdmins", () => Number(c.all(AccountQueries.countEnabledAdmins(db))[0]?.count ?? 0))
  }
}
