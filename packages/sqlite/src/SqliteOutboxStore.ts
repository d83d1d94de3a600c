import type { Delivery, OutboxStore, RouteSend } from "@botrelay/core"
import { Columns, MappingQueries, OutboxQueries } from "@botrelay/sql"
import { attempt, compile, type Connection, db, first } from "./SqliteConnection.js"

const queries = {
  nextDeliveries: compile(OutboxQueries.nextDeliveries),
  delivered: compile(OutboxQueries.delivered),
  retryLater: compile(OutboxQueries.retryLater("botrelay_deliveries")),
  dead: compile(OutboxQueries.dead("botrelay_deliveries")),
  nextSends: compile(OutboxQueries.nextSends),
  sent: compile(OutboxQueries.sent),
  sendLater: compile(OutboxQueries.retryLater("botrelay_route_sends")),
  sendDead: compile(OutboxQueries.dead("botrelay_route_sends")),
  insertMapping: compile(MappingQueries.insertMapping)
}

/** The `OutboxStore` on SQLite: attempts are recorded through the group commit. */
export const make = (c: Connection): OutboxStore.OutboxStoreService => {
  const hot = {
    nextDeliveries: c.prepare(queries.nextDeliveries),
    delivered: c.prepare(queries.delivered),
    retryLater: c.prepare(queries.retryLater),
    dead: c.prepare(queries.dead),
    nextSends: c.prepare(queries.nextSends),
    sent: c.prepare(queries.sent),
    sendLater: c.prepare(queries.sendLater),
    sendDead: c.prepare(queries.sendDead),
    insertMapping: c.prepare(queries.insertMapping)
  }

  const recordAttempts = c.transaction((attempts: ReadonlyArray<readonly [number, Delivery.DeliveryOutcome]>) => {
    for (const [id, outcome] of attempts) {
      switch (outcome.status) {
        case "delivered":
          hot.delivered.run(outcome.at, id)
          break
        case "pending":
          hot.retryLater.run(outcome.next_attempt_at, outcome.last_error, outcome.at, id)
          break
        case "dead":
          hot.dead.run(outcome.last_error, outcome.at, id)
          break
      }
    }
  })

  const recordSend = c.transaction(
    (id: number, outcome: RouteSend.SendOutcome, mappings: ReadonlyArray<RouteSend.NewRouteMapping>): void => {
      let changed: number
      switch (outcome.status) {
        case "sent":
          changed = hot.sent.run(outcome.at, id)
          break
        case "pending":
          changed = hot.sendLater.run(outcome.next_attempt_at, outcome.last_error, outcome.at, id)
          break
        case "dead":
          changed = hot.sendDead.run(outcome.last_error, outcome.at, id)
          break
      }
      if (changed === 0) return
      for (const m of mappings) {
        hot.insertMapping.run(
          m.route_id,
          m.source_bot_id,
          m.source_chat_id,
          m.source_message_id,
          m.target_bot_id,
          m.target_chat_id,
          m.target_message_id,
          m.hop,
          Columns.bit(m.reversible),
          m.created_at
        )
      }
    }
  )

  return {
    nextDeliveries: (botId, limit) =>
      attempt("nextDeliveries", () => hot.nextDeliveries.all(botId, limit).map(OutboxQueries.toDelivery)),

    recordAttempts: (attempts) => c.groupCommit("recordAttempts", () => recordAttempts(attempts)),

    listDeliveries: (filter) =>
      attempt("listDeliveries", () => c.all(OutboxQueries.listDeliveries(db, filter)).map(OutboxQueries.toDelivery)),

    retryDelivery: (id, at) =>
      attempt("retryDelivery", () => first(c.all(OutboxQueries.retryDelivery(db, id, at)), OutboxQueries.toDelivery)),

    retargetDeliveries: (botId, url, at) =>
      attempt("retargetDeliveries", () => c.run(OutboxQueries.retargetDeliveries(db, botId, url, at))),

    nextSends: (botId, limit) =>
      attempt("nextSends", () => hot.nextSends.all(botId, limit).map(OutboxQueries.toRouteSend)),

    recordSend: (id, outcome, mappings) => c.groupCommit("recordSend", () => recordSend(id, outcome, mappings)),

    listSends: (filter) =>
      attempt("listSends", () => c.all(OutboxQueries.listSends(db, filter)).map(OutboxQueries.toRouteSend))
  }
}
