import type { Delivery, OutboxStore, RouteSend } from "@botrelay/core"
import { Columns, MappingQueries, OutboxQueries } from "@botrelay/sql"
import { Option } from "effect"
import { attempt, compileAll, type Connection, db, first } from "./SqliteConnection.js"
import type * as DeliveryLines from "./SqliteDeliveryLines.js"

const queries = compileAll({
  nextDeliveries: OutboxQueries.nextDeliveries,
  delivered: OutboxQueries.delivered,
  retryLater: OutboxQueries.retryLater("botrelay_deliveries"),
  dead: OutboxQueries.dead("botrelay_deliveries"),
  nextSends: OutboxQueries.nextSends,
  sent: OutboxQueries.sent,
  sendLater: OutboxQueries.retryLater("botrelay_route_sends"),
  sendDead: OutboxQueries.dead("botrelay_route_sends"),
  insertMapping: MappingQueries.insertMapping,
  queueDelivery: OutboxQueries.queueDelivery
})

/**
 * The `OutboxStore` on SQLite: attempts are recorded through the group commit; a bot's line of deliveries
 * is read from `lines` while they know it.
 */
export const make = (c: Connection, lines: DeliveryLines.DeliveryLines): OutboxStore.OutboxStoreService => {
  const hot = c.prepareAll(queries)

  const recordAttempts = c.transaction((attempts: ReadonlyArray<readonly [number, Delivery.DeliveryOutcome]>) => {
    const settled: Array<number> = []
    const retried: Array<number> = []
    for (const [id, outcome] of attempts) {
      switch (outcome.status) {
        case "delivered":
          hot.delivered.run(outcome.at, id)
          settled.push(id)
          break
        case "pending":
          hot.retryLater.run(outcome.next_attempt_at, outcome.last_error, outcome.at, id)
          retried.push(id)
          break
        case "dead":
          hot.dead.run(outcome.last_error, outcome.at, id)
          settled.push(id)
          break
      }
    }
    c.afterCommit(() => {
      lines.settled(settled)
      lines.retried(retried)
    })
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

  const replayUpdates = c.transaction((replay: Parameters<OutboxStore.OutboxStoreService["replayUpdates"]>[0]) => {
    const held = c.all(OutboxQueries.replayCandidates(db, replay.bot_id, replay.range, replay.max + 1))
    if (held.length > replay.max) return Option.none()
    lines.forget(replay.bot_id)
    let queued = 0
    for (const update of held) {
      if (update.replayable !== 1) continue
      hot.queueDelivery.run(replay.bot_id, update.update_id, replay.url, update.payload, replay.at, replay.at, replay.at)
      queued++
    }
    return Option.some({ queued, held: held.length })
  })

  return {
    nextDeliveries: (botId, limit) =>
      attempt(
        "nextDeliveries",
        () => lines.next(botId, limit, () => hot.nextDeliveries.all(botId, limit).map(OutboxQueries.toDelivery))
      ),

    recordAttempts: (attempts) => c.groupCommit("recordAttempts", () => recordAttempts(attempts)),

    listDeliveries: (filter) =>
      attempt("listDeliveries", () => c.all(OutboxQueries.listDeliveries(db, filter)).map(OutboxQueries.toDelivery)),

    retryDelivery: (id, at) =>
      attempt("retryDelivery", () => {
        const retried = first(c.all(OutboxQueries.retryDelivery(db, id, at)), OutboxQueries.toDelivery)
        if (Option.isSome(retried)) lines.forget(retried.value.bot_id)
        return retried
      }),

    getDelivery: (id) =>
      attempt("getDelivery", () => first(c.all(OutboxQueries.getDelivery(db, id)), OutboxQueries.toDelivery)),

    discardDelivery: (id, at) =>
      attempt("discardDelivery", () => first(c.all(OutboxQueries.discardDelivery(db, id, at)), OutboxQueries.toDelivery)),

    retryDead: (botId, at) =>
      attempt("retryDead", () => {
        lines.forget(botId)
        return c.all(OutboxQueries.retryDead(db, botId, at)).map(OutboxQueries.toDelivery)
      }),

    discardDead: (botId, at) =>
      attempt("discardDead", () => c.all(OutboxQueries.discardDead(db, botId, at)).map(OutboxQueries.toDelivery)),

    replayUpdates: (replay) => c.groupCommit("replayUpdates", () => replayUpdates(replay)),

    retargetDeliveries: (botId, url, at) =>
      attempt("retargetDeliveries", () => {
        lines.forget(botId)
        return c.run(OutboxQueries.retargetDeliveries(db, botId, url, at))
      }),

    nextSends: (botId, limit) =>
      attempt("nextSends", () => hot.nextSends.all(botId, limit).map(OutboxQueries.toRouteSend)),

    recordSend: (id, outcome, mappings) => c.groupCommit("recordSend", () => recordSend(id, outcome, mappings)),

    listSends: (filter) =>
      attempt("listSends", () => c.all(OutboxQueries.listSends(db, filter)).map(OutboxQueries.toRouteSend))
  }
}
