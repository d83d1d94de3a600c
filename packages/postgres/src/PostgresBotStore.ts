import { Bot, type BotStore, type Errors } from "@botrelay/core"
import { BotQueries } from "@botrelay/sql"
import { Effect, Option } from "effect"
import { all, type Connection, first, isUniqueViolation, run } from "./PostgresConnection.js"

/** The `BotStore` on Postgres; tokens and secret tokens are encrypted with the connection's cipher. */
export const make = (c: Connection): BotStore.BotStoreService => {
  const toBot = BotQueries.toBot(c.cipher)

  /** A unique violation of the token's hash becomes `DuplicateToken`, naming the bot that has the token. */
  const guardToken = <A>(
    tokenHash: string | undefined,
    write: Effect.Effect<A, Errors.StorageError>
  ): Effect.Effect<A, Bot.DuplicateToken | Errors.StorageError> =>
    tokenHash === undefined ? write : write.pipe(
      Effect.catchIf(
        (e) => isUniqueViolation(e.cause, "botrelay_bots_token_hash"),
        (e) =>
          Effect.flatMap(
            c.use(e.operation, async (db) => first(await all(db, BotQueries.botIdByTokenHash(db, tokenHash)), (r) => r.id)),
            (existing): Effect.Effect<never, Bot.DuplicateToken | Errors.StorageError> =>
              Option.isSome(existing)
                ? Effect.fail(new Bot.DuplicateToken({ existing_bot_id: existing.value }))
                : Effect.fail(e)
          )
      )
    )

  return {
    insertBot: (input) => {
      const row = BotQueries.newBotRow(c.cipher, input)
      return guardToken(
        row.token_hash,
        c.use("insertBot", async (db) => toBot((await all(db, BotQueries.insertBot(db, row)))[0]!))
      )
    },

    updateBot: (id, patch) => {
      const set = BotQueries.botChanges(c.cipher, patch)
      return guardToken(
        set.token_hash,
        c.transaction("updateBot", async (db) => {
          if (Object.keys(set).length === 0) return first(await all(db, BotQueries.findBot(db, id)), toBot)
          const tokenHash = set.token_hash
          const before = tokenHash === undefined
            ? undefined
            : (await all(db, BotQueries.tokenHashOf(db, id).forUpdate()))[0]?.token_hash
          const rows = await all(db, BotQueries.updateBot(db, id, set))
          if (rows.length > 0 && tokenHash !== undefined && tokenHash !== before) {
            await run(db, BotQueries.forgetOffset(db, id))
          }
          return first(rows, toBot)
        })
      )
    },

    findBot: (id) => c.use("findBot", async (db) => first(await all(db, BotQueries.findBot(db, id)), toBot)),

    findBotByToken: (token) =>
      c.use(
        "findBotByToken",
        async (db) => first(await all(db, BotQueries.findBotByTokenHash(db, c.cipher.tokenHash(token))), toBot)
      ),

    listBots: c.use("listBots", async (db) => (await all(db, BotQueries.listBots(db))).map(toBot)),

    deleteBot: (id) =>
      c.transaction("deleteBot", async (db) => {
        let deleted = 0
        for (const query of BotQueries.deleteBot(db, id)) deleted = await run(db, query)
        return deleted > 0
      })
  }
}
