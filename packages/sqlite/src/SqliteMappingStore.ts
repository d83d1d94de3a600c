import type { MappingStore } from "@botrelay/core"
import { MappingQueries } from "@botrelay/sql"
import { attempt, compileAll, type Connection, first } from "./SqliteConnection.js"

const queries = compileAll({
  findReverse: MappingQueries.findReverse,
  findProduced: MappingQueries.findProduced,
  pruneMappings: MappingQueries.pruneMappings
})

/** The `MappingStore` on SQLite; the mappings are written by `OutboxStore.recordSend`. */
export const make = (c: Connection): MappingStore.MappingStoreService => {
  const { findProduced, findReverse, pruneMappings } = c.prepareAll(queries)
  return {
    findReverse: (targetBotId, targetChatId, targetMessageId, since) =>
      attempt("findReverse", () =>
        first(findReverse.all(targetBotId, targetChatId, targetMessageId, since), MappingQueries.toRouteMapping)),

    findProduced: (chatId, messageId) =>
      attempt("findProduced", () => first(findProduced.all(chatId, messageId), MappingQueries.toRouteMapping)),

    pruneMappings: (before, limit) => c.groupCommit("pruneMappings", () => pruneMappings.run(before, limit))
  }
}
