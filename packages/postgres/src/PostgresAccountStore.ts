import { Account, type AccountStore, type Scope } from "@botrelay/core"
import { AccountQueries, ScopeQueries, type Tables } from "@botrelay/sql"
import { Effect, Option } from "effect"
import type { Kysely } from "kysely"
import { all, type Connection, first, isUniqueViolation, run } from "./PostgresConnection.js"

/** The `AccountStore` on Postgres: an account's bots are rows of `botrelay_account_bots`. */
export const make = (c: Connection): AccountStore.AccountStoreService => {
  const withBotIds = async (db: Kysely<Tables.Database>, row: AccountQueries.AccountRow): Promise<Account.Account> =>
    AccountQueries.toAccount(row, (await all(db, AccountQueries.linksOf(db, row.id))).map(ScopeQueries.toEntry))

  const link = async (db: Kysely<Tables.Database>, accountId: number, scopes: ReadonlyArray<Scope.Entry>) => {
    const sorted = [...scopes].sort((a, b) => a.bot_id - b.bot_id)
    for (const entry of sorted) await run(db, AccountQueries.linkBot(db, accountId, entry))
    return sorted
  }

  return {
    insertAccount: (input) =>
      c.transaction("insertAccount", async (db) => {
        if ((await all(db, AccountQueries.findByUsername(db, input.username))).length > 0) return Option.none<Account.Account>()
        const row = (await all(db, AccountQueries.insertAccount(db, input)))[0]!
        return Option.some(AccountQueries.toAccount(row, await link(db, row.id, input.scopes)))
      }).pipe(
        Effect.catchIf((e) => isUniqueViolation(e.cause, "botrelay_accounts_username_key_key"), () =>
          Effect.succeed(Option.none<Account.Account>())),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new Account.UsernameTaken({ username: input.username })),
          onSome: Effect.succeed
        }))
      ),

    listAccounts: c.use("listAccounts", async (db) => {
      const scopes = ScopeQueries.byOwner(await all(db, AccountQueries.listLinks(db)), (link) => link.account_id)
      return (await all(db, AccountQueries.listAccounts(db))).map((row) => AccountQueries.toAccount(row, scopes.get(row.id) ?? []))
    }),

    findAccount: (id) =>
      c.use("findAccount", async (db) => {
        const [row] = await all(db, AccountQueries.findAccount(db, id))
        return row === undefined ? Option.none() : Option.some(await withBotIds(db, row))
      }),

    findLogin: (username) =>
      c.use("findLogin", async (db) => {
        const [row] = await all(db, AccountQueries.findByUsername(db, username))
        return row === undefined
          ? Option.none()
          : Option.some({ account: await withBotIds(db, row), password_hash: row.password_hash })
      }),

    updateAccount: (id, changes) =>
      c.transaction("updateAccount", async (db) => {
        const { scopes, ...columns } = changes
        const row = (await all(db, AccountQueries.updateAccount(db, id, columns)))[0]
        if (row === undefined) return Option.none()
        if (scopes === undefined) return Option.some(await withBotIds(db, row))
        await run(db, AccountQueries.unlinkBots(db, id))
        return Option.some(AccountQueries.toAccount(row, await link(db, id, scopes)))
      }),

    setPasswordHash: (id, hash) =>
      c.use("setPasswordHash", async (db) => (await run(db, AccountQueries.setPasswordHash(db, id, hash))) > 0),

    recordLogin: (id, at) =>
      c.use("recordLogin", async (db) => {
        await run(db, AccountQueries.recordLogin(db, id, at))
      }),

    deleteAccount: (id) =>
      c.transaction("deleteAccount", async (db) => {
        let deleted = 0
        for (const query of AccountQueries.deleteAccount(db, id)) deleted = await run(db, query)
        return deleted > 0
      }),

    countEnabledAdmins: c.use(
      "countEnabledAdmins",
      async (db) => Number(first(await all(db, AccountQueries.countEnabledAdmins(db)), (r) => r.count).pipe(Option.getOrElse(() => 0)))
    )
  }
}
