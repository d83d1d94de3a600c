import type { MappingStore } from "@botrelay/core"
import { MappingQueries } from "@botrelay/sql"
import { attempt, compile, type Connection, first } from "./SqliteConnection.js"

const findReverseQuery = compile(MappingQueries.findReverse)
const findProducedQuery = compile(MappingQueries.findProduced)
const pruneMappingsQuery = compile(MappingQueries.pruneMappings)

/** The `MappingStore` on SQLite; the mappings are written by `OutboxStore.recordSend`. */
export const make = (c: Connection): MappingStore.MappingStoreService => {
  const findReverse = c.prepare(findReverseQuery)
  const findProduced = c.prepare(findProducedQuery)
  const pruneMappings = c.prepare(pruneMappingsQuery)
  return {
    findReverse: (targetBotId, targetChatId, targetMessageId, since) =>
      attempt("findReverse", () =>
        first(findReverse.all(targetBotId, targetChatId, targetMessageId, since), MappingQueries.toRouteMapping)),

    findProduced: (chatId, messageId) =>
      attempt("findProduced", () => first(findProduced.all(chatId, messageId), MappingQueries.toRouteMapping)),

    pruneMappings: (before, limit) => c.groupCommit("pruneMappings", () => pruneMappings.run(before, limit))
  }
}
