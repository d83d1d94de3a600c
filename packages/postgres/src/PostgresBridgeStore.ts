import type { BridgeStore } from "@botrelay/core"
import { BridgeQueries, OutboxQueries } from "@botrelay/sql"
import { all, type Connection, first, run } from "./PostgresConnection.js"

/** The `BridgeStore` on Postgres; signing secrets are encrypted with the connection's cipher. */
export const make = (c: Connection): BridgeStore.BridgeStoreService => {
  const toBridge = BridgeQueries.toBridge(c.cipher)
  return {
    listBridges: c.use("listBridges", async (db) => (await all(db, BridgeQueries.listBridges(db))).map(toBridge)),

    findBridge: (id) => c.use("findBridge", async (db) => first(await all(db, BridgeQueries.findBridge(db, id)), toBridge)),

    insertBridge: (input) =>
      c.use("insertBridge", async (db) =>
        toBridge((await all(db, BridgeQueries.insertBridge(db, BridgeQueries.newBridgeRow(c.cipher, input))))[0]!)),

    updateBridge: (id, patch) => {
      const set = BridgeQueries.bridgeChanges(c.cipher, patch)
      return c.use("updateBridge", async (db) =>
        first(
          await all(db, Object.keys(set).length === 0 ? BridgeQueries.findBridge(db, id) : BridgeQueries.updateBridge(db, id, set)),
          toBridge
        ))
    },

    deleteBridge: (id) =>
      c.transaction("deleteBridge", async (db) => {
        const [deliveries, bridge] = BridgeQueries.deleteBridge(db, id)
        await run(db, deliveries)
        return first(await all(db, bridge), toBridge)
      }),

    nextBridgeDeliveries: (botId, limit) =>
      c.use("nextBridgeDeliveries", async (db) =>
        (await all(db, BridgeQueries.nextDeliveries(db, botId, limit))).map(BridgeQueries.toBridgeDelivery)),

    recordBridgeAttempts: (attempts) =>
      c.transaction("recordBridgeAttempts", async (db) => {
        for (const [delivery, outcome] of attempts) {
          switch (outcome.status) {
            case "delivered":
              await run(db, BridgeQueries.delivered(db, outcome.at, delivery.id))
              break
            case "pending":
              if (
                await run(db, OutboxQueries.retryLater("botrelay_bridge_deliveries")(
                  db,
                  outcome.next_attempt_at,
                  outcome.last_error,
                  outcome.at,
                  delivery.id
                )) > 0
              ) await run(db, BridgeQueries.failed(db, outcome.last_error, delivery.bridge_id))
              break
            case "dead":
              if (
                await run(db, OutboxQueries.dead("botrelay_bridge_deliveries")(db, outcome.last_error, outcome.at, delivery.id)) > 0
              ) await run(db, BridgeQueries.failed(db, outcome.last_error, delivery.bridge_id))
              break
          }
        }
      }),

    listBridgeDeliveries: (filter) =>
      c.use("listBridgeDeliveries", async (db) =>
        (await all(db, BridgeQueries.listDeliveries(db, filter))).map(BridgeQueries.toBridgeDelivery)),

    pruneBridgeDeliveries: (before, limit) =>
      c.use("pruneBridgeDeliveries", (db) => run(db, BridgeQueries.pruneDeliveries(db, before, limit)))
  }
}
