import type { Bridge, BridgeStore } from "@botrelay/core"
import { BridgeQueries, OutboxQueries } from "@botrelay/sql"
import { attempt, compileAll, type Connection, db, first } from "./SqliteConnection.js"

const queries = compileAll({
  nextDeliveries: BridgeQueries.nextDeliveries,
  delivered: BridgeQueries.delivered,
  retryLater: OutboxQueries.retryLater("botrelay_bridge_deliveries"),
  dead: OutboxQueries.dead("botrelay_bridge_deliveries"),
  failed: BridgeQueries.failed
})

/** The `BridgeStore` on SQLite; signing secrets are encrypted with the connection's cipher. */
export const make = (c: Connection): BridgeStore.BridgeStoreService => {
  const toBridge = BridgeQueries.toBridge(c.cipher)
  const hot = c.prepareAll(queries)

  const deleteBridge = c.transaction((id: number) => {
    const [deliveries, bridge] = BridgeQueries.deleteBridge(db, id)
    c.run(deliveries)
    return c.all(bridge)
  })

  const recordAttempts = c.transaction(
    (attempts: ReadonlyArray<readonly [Bridge.BridgeDelivery, Bridge.BridgeOutcome]>) => {
      for (const [delivery, outcome] of attempts) {
        switch (outcome.status) {
          case "delivered":
            hot.delivered.run(outcome.at, delivery.id)
            break
          case "pending":
            if (hot.retryLater.run(outcome.next_attempt_at, outcome.last_error, outcome.at, delivery.id) > 0) {
              hot.failed.run(outcome.last_error, delivery.bridge_id)
            }
            break
          case "dead":
            if (hot.dead.run(outcome.last_error, outcome.at, delivery.id) > 0) {
              hot.failed.run(outcome.last_error, delivery.bridge_id)
            }
            break
        }
      }
    }
  )

  return {
    listBridges: attempt("listBridges", () => c.all(BridgeQueries.listBridges(db)).map(toBridge)),

    findBridge: (id) => attempt("findBridge", () => first(c.all(BridgeQueries.findBridge(db, id)), toBridge)),

    insertBridge: (input) =>
      attempt("insertBridge", () => toBridge(c.all(BridgeQueries.insertBridge(db, BridgeQueries.newBridgeRow(c.cipher, input)))[0]!)),

    updateBridge: (id, patch) => {
      const set = BridgeQueries.bridgeChanges(c.cipher, patch)
      return attempt("updateBridge", () =>
        first(
          Object.keys(set).length === 0 ? c.all(BridgeQueries.findBridge(db, id)) : c.all(BridgeQueries.updateBridge(db, id, set)),
          toBridge
        ))
    },

    deleteBridge: (id) => attempt("deleteBridge", () => first(deleteBridge(id), toBridge)),

    nextBridgeDeliveries: (botId, limit) =>
      attempt("nextBridgeDeliveries", () => hot.nextDeliveries.all(botId, limit).map(BridgeQueries.toBridgeDelivery)),

    recordBridgeAttempts: (attempts) => c.groupCommit("recordBridgeAttempts", () => recordAttempts(attempts)),

    listBridgeDeliveries: (filter) =>
      attempt("listBridgeDeliveries", () => c.all(BridgeQueries.listDeliveries(db, filter)).map(BridgeQueries.toBridgeDelivery)),

    pruneBridgeDeliveries: (before, limit) =>
      c.groupCommit("pruneBridgeDeliveries", () => c.run(BridgeQueries.pruneDeliveries(db, before, limit)))
  }
}
