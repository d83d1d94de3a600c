import type { EventStore, LiveEvent } from "@botrelay/core"
import { EventQueries } from "@botrelay/sql"
import { attempt, compileAll, type Connection, db, first } from "./SqliteConnection.js"

const queries = compileAll({
  appendEvent: EventQueries.appendEvent,
  oldestEventId: EventQueries.oldestEventId,
  newestEvent: EventQueries.newestEvent,
  lastEventBefore: EventQueries.lastEventBefore,
  pruneEvents: EventQueries.pruneEvents
})

/** The `EventStore` on SQLite: appends and prunes go through the group commit. */
export const make = (c: Connection): EventStore.EventStoreService => {
  const hot = c.prepareAll(queries)

  const append = (entries: ReadonlyArray<LiveEvent.NewLogEntry>): ReadonlyArray<number> =>
    entries.map((e) => hot.appendEvent.all(e.bot_id, e.chat_id, e.type, e.data, e.created_at)[0]!.id)

  const prune = (before: string, keep: number, limit: number): number => {
    const newest = hot.newestEvent.all()[0]?.id
    const lastBefore = hot.lastEventBefore.all(before)[0]?.id
    if (newest === undefined || lastBefore === undefined) return 0
    const upTo = Math.min(newest - keep, lastBefore)
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
