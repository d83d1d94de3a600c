import type { MappingStore } from "@botrelay/core"
import { MappingQueries } from "@botrelay/sql"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** The `MappingStore` on Postgres; the mappings are written by `OutboxStore.recordSend`. */
export const make = (c: Connection): MappingStore.MappingStoreService => ({
  findReverse: (targetBotId, targetChatId, targetMessageId, since) =>
    c.use("findReverse", async (db) =>
      first(
        await all(db, MappingQueries.findReverse(db, targetBotId, targetChatId, targetMessageId, since)),
        MappingQueries.toRouteMapping
      )),

  findProduced: (chatId, messageId) =>
    c.use("findProduced", async (db) =>
      first(await all(db, MappingQueries.findProduced(db, chatId, messageId)), MappingQueries.toRouteMapping)),

  pruneMappings: (before, limit) => c.use("pruneMappings", (db) => run(db, MappingQueries.pruneMappings(db, before, limit)))
})
