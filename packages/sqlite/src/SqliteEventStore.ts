import type { EventStore, LiveEvent } from "@botrelay/core"
import { BridgeQueries, EventQueries } from "@botrelay/sql"
import { attempt, compileAll, type Connection, db, first } from "./SqliteConnection.js"

const queries = compileAll({
  lastEventId: EventQueries.lastEventId,
  setLastEventId: EventQueries.setLastEventId,
  appendEvent: EventQueries.appendEvent,
  oldestEventId: EventQueries.oldestEventId,
  newestEvent: EventQueries.newestEvent,
  firstEventSince: EventQueries.firstEventSince,
  pruneEvents: EventQueries.pruneEvents,
  enabledBridges: BridgeQueries.enabledBridges
})

/**
 * The `EventStore` on SQLite: appends and prunes go through the group commit; an append queues the bridge
 * deliveries of its entries in the same transaction.
 */
export const make = (c: Connection): EventStore.EventStoreService => {
  const hot = c.prepareAll(queries)

  const append = (entries: ReadonlyArray<LiveEvent.NewLogEntry>): ReadonlyArray<number> => {
    const last = hot.lastEventId.all()[0]!.last_id
    const ids = entries.map((e, i) => {
      hot.appendEvent.run(last + 1 + i, e.bot_id, e.chat_id, e.type, e.data, e.created_at)
      return last + 1 + i
    })
    hot.setLastEventId.run(last + entries.length)
    const bridges = hot.enabledBridges.all()
    if (bridges.length > 0) {
      const logged = entries.map((e, i) => ({ ...e, id: ids[i]! }))
      const candidates = BridgeQueries.botsOf(logged)
      const bots = candidates.length === 0 ? [] : c.all(BridgeQueries.existingBots(db, candidates)).map((r) => r.id)
      const queued = BridgeQueries.deliveriesOf(bridges, logged, new Set(bots))
      for (const row of queued) c.run(BridgeQueries.insertDeliveries(db, [row]))
    }
    return ids
  }

  const prune = (before: string, keep: number, limit: number): number => {
    const newest = hot.newestEvent.all()[0]?.id
    if (newest === undefined) return 0
    const since = hot.firstEventSince.all(before)[0]?.id
    const upTo = Math.min(newest - keep, since === undefined ? newest : since - 1)
    return upTo <= 0 ? 0 : hot.pruneEvents.run(upTo, before, limit)
  }

  return {
    appendEvents: (entries) =>
      entries.length === 0 ? attempt("appendEvents", () => []) : c.groupCommit("appendEvents", () => append(entries)),

    readEvents: (query) =>
      attempt("readEvents", () => c.all(EventQueries.readEvents(db, query)).map(EventQueries.toLogEntry)),

    oldestEventId: attempt("oldestEventId", () => first(hot.oldestEventId.all(), (r) => r.id)),

    newestEvent: attempt("newestEvent", () => first(hot.newestEvent.all(), EventQueries.toLogEntry)),

    pruneEvents: (before, keep, limit) => c.groupCommit("pruneEvents", () => prune(before, Math.max(0, keep), limit))
  }
}
