import type { BotStore } from "@botrelay/core"
import { Bot } from "@botrelay/core"
import type { Errors } from "@botrelay/core"
import { BotQueries, type Tables } from "@botrelay/sql"
import { Effect, Option } from "effect"
import type { Updateable } from "kysely"
import { attempt, compileAll, type Connection, db, first } from "./SqliteConnection.js"
import type * as DeliveryLines from "./SqliteDeliveryLines.js"

const queries = compileAll({ findBot: BotQueries.findBot, findBotByToken: BotQueries.findBotByTokenHash })

const isTokenConflict = (cause: unknown): boolean =>
  typeof cause === "object" && cause !== null && "code" in cause && cause.code === "SQLITE_CONSTRAINT_UNIQUE" &&
  "message" in cause && typeof cause.message === "string" && cause.message.includes("botrelay_bots.token_hash")

/** The `BotStore` on SQLite; tokens and secret tokens are encrypted with the connection's cipher. */
export const make = (c: Connection, lines: DeliveryLines.DeliveryLines): BotStore.BotStoreService => {
  const toBot = BotQueries.toBot(c.cipher)
  const { findBot, findBotByToken } = c.prepareAll(queries)

  const guardToken = <A>(
    operation: string,
    tokenHash: string | undefined,
    f: () => A
  ): Effect.Effect<A, Bot.DuplicateToken | Errors.StorageError> =>
    tokenHash === undefined ? attempt(operation, f) : attempt(operation, f).pipe(
      Effect.catchIf(
        (e) => isTokenConflict(e.cause),
        (e) =>
          Effect.flatMap(
            attempt(operation, () => first(c.all(BotQueries.botIdByTokenHash(db, tokenHash)), (r) => r.id)),
            (existing): Effect.Effect<never, Bot.DuplicateToken | Errors.StorageError> =>
              Option.isSome(existing)
                ? Effect.fail(new Bot.DuplicateToken({ existing_bot_id: existing.value }))
                : Effect.fail(e)
          )
      )
    )

  const updateBot = c.transaction((id: number, set: Updateable<Tables.BotsTable>) => {
    if (Object.keys(set).length === 0) return findBot.all(id)
    const tokenHash = set.token_hash
    const before = tokenHash === undefined ? undefined : c.all(BotQueries.tokenHashOf(db, id))[0]?.token_hash
    const rows = c.all(BotQueries.updateBot(db, id, set))
    if (rows.length > 0 && tokenHash !== undefined && tokenHash !== before) c.run(BotQueries.forgetOffset(db, id))
    return rows
  })

  const deleteBot = c.transaction((id: number): boolean => {
    const deletes = BotQueries.deleteBot(db, id)
    let deleted = 0
    for (const query of deletes) deleted = c.run(query)
    return deleted > 0
  })

  return {
    insertBot: (input) => {
      const row = BotQueries.newBotRow(c.cipher, input)
      return guardToken("insertBot", row.token_hash, () => toBot(c.all(BotQueries.insertBot(db, row))[0]!))
    },

    updateBot: (id, patch) => {
      const set = BotQueries.botChanges(c.cipher, patch)
      return guardToken("updateBot", set.token_hash, () => first(updateBot(id, set), toBot))
    },

    findBot: (id) => attempt("findBot", () => first(findBot.all(id), toBot)),

    findBotByToken: (token) =>
      attempt("findBotByToken", () => first(findBotByToken.all(c.cipher.tokenHash(token)), toBot)),

    listBots: attempt("listBots", () => c.all(BotQueries.listBots(db)).map(toBot)),

    deleteBot: (id) =>
      attempt("deleteBot", () => {
        lines.forget(id)
        return deleteBot(id)
      })
  }
}
