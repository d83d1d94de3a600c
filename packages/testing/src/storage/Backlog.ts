import { BacklogStore, BotStore, type Delivery, InboxStore, LeaseStore, OutboxStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { botInput, completion, newDelivery, newSend, type Runner, t0, t1, t2, update } from "./Fixtures.js"

/** The conformance tests for the backlog read by metrics and the status report. */
export const backlog = (run: Runner): void => {
  const test = run(
    BotStore.BotStore,
    InboxStore.InboxStore,
    OutboxStore.OutboxStore,
    LeaseStore.LeaseStore,
    BacklogStore.BacklogStore
  )
  describe("backlog", () => {
    test("empty storage: nothing waits", (storage) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* storage.read(t0), { outbox: [], bots: [], routes: [], leases: [] })
      }))

    test("pending and dead jobs per bot and kind, unprocessed updates, delivered update, offset, leases", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1, { proxy_enabled: true }))
        const b = yield* storage.insertBot(botInput(2, { proxy_enabled: true }))
        const inputs: Array<Delivery.NewDelivery> = [
          newDelivery(a.id, 1, { created_at: t0 }),
          newDelivery(a.id, 2, { created_at: t1 }),
          newDelivery(a.id, 3, { created_at: t1 }),
          newDelivery(a.id, 4, { created_at: t2 })
        ]
        yield* storage.commitUpdates(a.id, [1, 2, 3, 4, 5, 6].map((id) => update(id, { received_at: id > 4 ? t1 : t0 })), 7)
        yield* storage.commitUpdates(b.id, [update(9, { received_at: t2 })], 10)
        yield* storage.completeUpdates(inputs.map((d) => completion(a.id, d.update_id, { deliveries: [d] })))
        yield* storage.recordAttempts([
          [1, { status: "delivered", at: t1 }],
          [2, { status: "dead", at: t2, last_error: "HTTP 500" }]
        ])
        const later = "2099-01-01T00:00:00.000Z"
        yield* storage.acquire(a.id, "one", t0, later)
        yield* storage.acquire(b.id, "one", t0, later)
        const found = yield* storage.read(t2)
        assert.deepStrictEqual(found.outbox, [
          { bot_id: a.id, kind: "backend", depth: 2, oldest_pending_at: t1, dead: 1 },
          { bot_id: a.id, kind: "bridge", depth: 0, oldest_pending_at: "", dead: 0 },
          { bot_id: a.id, kind: "route", depth: 0, oldest_pending_at: "", dead: 0 },
          { bot_id: b.id, kind: "backend", depth: 0, oldest_pending_at: "", dead: 0 },
          { bot_id: b.id, kind: "bridge", depth: 0, oldest_pending_at: "", dead: 0 },
          { bot_id: b.id, kind: "route", depth: 0, oldest_pending_at: "", dead: 0 }
        ])
        assert.deepStrictEqual(found.bots, [
          {
            bot_id: a.id,
            inbox: 2,
            oldest_inbox_at: t1,
            buffered: 0,
            lowest_buffered: 0,
            delivered_update_id: 1,
            ingress_offset: 7,
            disabled: false
          },
          {
            bot_id: b.id,
            inbox: 1,
            oldest_inbox_at: t2,
            buffered: 0,
            lowest_buffered: 0,
            delivered_update_id: 0,
            ingress_offset: 10,
            disabled: false
          }
        ])
        assert.deepStrictEqual(found.leases, [{ instance_id: "one", count: 2 }])
        assert.deepStrictEqual((yield* storage.read(later)).leases, [])
      }))

    test("route sends: pending per route and sending bot kind, the highest update sent on", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.commitUpdates(a.id, [update(1), update(2), update(3)], 4)
        yield* storage.completeUpdates([1, 2, 3].map((id) =>
          completion(a.id, id, { sends: [newSend(b.id, a.id, id, { route_id: 7, created_at: id === 1 ? t0 : t1 })] })
        ))
        yield* storage.recordSend(1, { status: "sent", at: t2 }, [])
        const found = yield* storage.read(t2)
        assert.deepStrictEqual(found.routes, [{ source_bot_id: a.id, route_id: 7, pending: 2, sent_update_id: 1 }])
        assert.deepInclude(found.outbox, { bot_id: b.id, kind: "route", depth: 2, oldest_pending_at: t1, dead: 0 })
        assert.deepInclude(found.outbox, { bot_id: a.id, kind: "route", depth: 0, oldest_pending_at: "", dead: 0 })
      }))
  })
}
