import { Account, type AccountStore, type Scope } from "@botrelay/core"
import { AccountQueries, ScopeQueries } from "@botrelay/sql"
import { Effect, Option } from "effect"
import { attempt, type Connection, db, first } from "./SqliteConnection.js"

/** The `AccountStore` on SQLite: an account's bots are rows of `botrelay_account_bots`. */
export const make = (c: Connection): AccountStore.AccountStoreService => {
  const withBotIds = (row: AccountQueries.AccountRow): Account.Account =>
    AccountQueries.toAccount(row, c.all(AccountQueries.linksOf(db, row.id)).map(ScopeQueries.toEntry))

  const link = (accountId: number, scopes: ReadonlyArray<Scope.Entry>): Array<Scope.Entry> => {
    const sorted = [...scopes].sort((a, b) => a.bot_id - b.bot_id)
    for (const entry of sorted) c.run(AccountQueries.linkBot(db, accountId, entry))
    return sorted
  }

  const insertAccount = c.transaction((input: Account.AccountRecordInput): Option.Option<Account.Account> => {
    if (c.all(AccountQueries.findByUsername(db, input.username)).length > 0) return Option.none()
    const row = c.all(AccountQueries.insertAccount(db, input))[0]!
    return Option.some(AccountQueries.toAccount(row, link(row.id, input.scopes)))
  })

  const updateAccount = c.transaction((id: number, changes: Account.AccountChanges): Option.Option<Account.Account> => {
    const { scopes, ...columns } = changes
    const row = c.all(AccountQueries.updateAccount(db, id, columns))[0]
    if (row === undefined) return Option.none()
    if (scopes === undefined) return Option.some(withBotIds(row))
    c.run(AccountQueries.unlinkBots(db, id))
    return Option.some(AccountQueries.toAccount(row, link(id, scopes)))
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
      const scopes = ScopeQueries.byOwner(c.all(AccountQueries.listLinks(db)), (link) => link.account_id)
      return c.all(AccountQueries.listAccounts(db)).map((row) => AccountQueries.toAccount(row, scopes.get(row.id) ?? []))
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
