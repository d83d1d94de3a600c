import { assert, describe, it } from "@effect/vitest"
import {
  BotStore,
  Errors,
  Events,
  Identity,
  InboxStore,
  LeaseStore,
  Ownership,
  type Stores
} from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { Context, Effect, Exit, Layer, Logger, Queue, Scope, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

// Several instances on one storage, each with its own bus and leases, on a TestClock.

interface Instance {
  readonly id: string
  readonly ownership: Ownership.OwnershipService
  readonly events: Events.EventsService
  readonly scope: Scope.CloseableScope
  /** Makes every lease call of this instance fail, as if its link to the database were cut. */
  readonly cut: () => void
}

/**
 * Starts an instance's ownership. `supervised` (the default) stands for its supervisor: each bot it stops running
 * has its work stopped at once (`stopped`).
 */
const start = (stores: Context.Context<Stores.Stores>, id: string, supervised = true) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const events = yield* Events.make
    let cut = false
    const leases = Context.get(stores, LeaseStore.LeaseStore)
    const failing = <A>(effect: Effect.Effect<A, Errors.StorageError>) =>
      Effect.suspend(() => cut ? Effect.fail(new Errors.StorageError({ operation: "cut", cause: "cut" })) : effect)
    const partitioned: LeaseStore.LeaseStoreService = {
      heartbeat: (instance, at) => failing(leases.heartbeat(instance, at)),
      leave: (instanceId) => failing(leases.leave(instanceId)),
      instances: (since) => failing(leases.instances(since)),
      leases: failing(leases.leases),
      acquire: (...args) => failing(leases.acquire(...args)),
      renew: (...args) => failing(leases.renew(...args)),
      release: (fences) => failing(leases.release(fences)),
      setRunning: (fence, running) => failing(leases.setRunning(fence, running))
    }
    const ownership = yield* Ownership.make().pipe(
      Effect.provide(Context.add(stores, LeaseStore.LeaseStore, partitioned)),
      Effect.provideService(Events.Events, events),
      Effect.provideService(Identity.Identity, { id, started_at: "2026-01-01T00:00:00.000Z", version: "0.0.0" }),
      Scope.extend(scope)
    )
    if (supervised) {
      const changes = yield* Effect.provideService(events.subscribe("OwnershipChanged"), Scope.Scope, scope)
      yield* Queue.take(changes).pipe(
        Effect.flatMap((change) => change.owned ? Effect.void : ownership.stopped(change.bot_id)),
        Effect.forever,
        Effect.forkIn(scope)
      )
    }
    return { id, ownership, events, scope, cut: () => void (cut = true) } satisfies Instance
  })

const owned = (instance: Instance, bots: ReadonlyArray<number>) => bots.filter((id) => instance.ownership.owns(id))

const withBots = <A, E>(count: number, body: (stores: Context.Context<Stores.Stores>, bots: ReadonlyArray<number>) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const stores = yield* Layer.build(SqliteStores.layer({ filename: ":memory:" }))
    const botStore = Context.get(stores, BotStore.BotStore)
    const bots: Array<number> = []
    for (let i = 1; i <= count; i++) bots.push((yield* botStore.insertBot(TestRuntime.botInput(`${100 + i}:token-${i}`))).id)
    return yield* body(stores, bots)
  }).pipe(Effect.scoped, Effect.provide(Logger.remove(Logger.defaultLogger)))

const seconds = (n: number) => TestClock.adjust(`${n} seconds`)

describe("Ownership on a TestClock", () => {
  it.effect("one instance takes every bot; instances that join get their share, no one more than ⌈bots/live⌉ + 1", () =>
    withBots(20, (stores, bots) =>
      Effect.gen(function*() {
        const a = yield* start(stores, "a")
        yield* seconds(0)
        assert.strictEqual(owned(a, bots).length, 20)
        const b = yield* start(stores, "b")
        const c = yield* start(stores, "c")
        yield* seconds(30)
        const counts = [a, b, c].map((i) => owned(i, bots).length)
        assert.strictEqual(counts.reduce((x, y) => x + y, 0), 20, `every bot has one owner: ${counts.join(",")}`)
        for (const n of counts) assert.isAtMost(n, Math.ceil(20 / 3) + 1, counts.join(","))
        for (const bot of bots) assert.strictEqual([a, b, c].filter((i) => i.ownership.owns(bot)).length, 1)
      })))

  it.effect("a clean shutdown frees the leases at once: the others take them at their next renewal", () =>
    withBots(6, (stores, bots) =>
      Effect.gen(function*() {
        const a = yield* start(stores, "a")
        yield* seconds(0)
        const b = yield* start(stores, "b")
        yield* seconds(6)
        assert.strictEqual(owned(a, bots).length, 3)
        assert.strictEqual(owned(b, bots).length, 3)
        yield* Scope.close(a.scope, Exit.void)
        yield* seconds(3)
        assert.strictEqual(owned(b, bots).length, 6)
      })))

  it.effect("a lease given up to rebalance is kept until the bot's work has stopped, then freed for another to take", () =>
    withBots(4, (stores, bots) =>
      Effect.gen(function*() {
        const a = yield* start(stores, "a", false)
        yield* seconds(0)
        const changes = yield* Effect.provideService(a.events.subscribe("OwnershipChanged"), Scope.Scope, a.scope)
        const b = yield* start(stores, "b")
        yield* seconds(3)
        const given = (yield* Queue.takeAll(changes)).pipe((events) => [...events].filter((e) => !e.owned).map((e) => e.bot_id))
        assert.strictEqual(given.length, 2, "a gives up what is above its share")
        assert.deepStrictEqual(owned(a, bots).length, 2)
        yield* seconds(6)
        assert.deepStrictEqual(owned(b, bots).filter((bot) => given.includes(bot)), [], "still a's while its work runs")
        yield* a.ownership.stopped(given[0]!)
        yield* seconds(3)
        assert.deepStrictEqual(owned(b, bots).filter((bot) => given.includes(bot)), [given[0]], "freed once stopped")
        yield* seconds(2)
        assert.sameMembers(owned(b, bots).filter((bot) => given.includes(bot)), given, "the other expired by itself")
      })))

  it.effect("a cut-off owner stops before its leases expire; another takes them over as they expire, with a higher epoch", () =>
    withBots(4, (stores, bots) =>
      Effect.gen(function*() {
        const a = yield* start(stores, "a")
        yield* seconds(0)
        const before = a.ownership.tenure(bots[0]!)
        const b = yield* start(stores, "b")
        yield* seconds(0)
        assert.strictEqual(owned(a, bots).length, 4, "a holds what it took until it gives up its excess")
        a.cut()
        const lost: Array<number> = []
        const changes = yield* Effect.provideService(a.events.subscribe("OwnershipChanged"), Scope.Scope, a.scope)
        yield* seconds(8)
        for (const event of yield* Queue.takeAll(changes)) if (!event.owned) lost.push(event.bot_id)
        assert.strictEqual(owned(a, bots).length, 0, "a drops every lease it could not renew, 2 s before expiry")
        assert.isFalse(yield* before.holds)
        assert.sameMembers(lost, [...bots])
        assert.strictEqual(owned(b, bots).length, 0, "nobody else holds them yet: they have not expired")
        yield* TestClock.adjust("2001 millis")
        assert.strictEqual(owned(b, bots).length, 4, "b took them over as they expired, 10 s after a's last renewal")
        const after = b.ownership.tenure(bots[0]!)
        assert.isAbove(after.fence!.epoch, before.fence!.epoch)
        assert.isTrue(yield* after.holds)
      })))

  it.effect("a commit with a fence that no longer holds is refused and writes nothing", () =>
    withBots(1, (stores, [bot]) =>
      Effect.gen(function*() {
        const inbox = Context.get(stores, InboxStore.InboxStore)
        const a = yield* start(stores, "a")
        yield* seconds(0)
        const old = a.ownership.tenure(bot!).fence!
        a.cut()
        yield* seconds(11)
        const b = yield* start(stores, "b")
        yield* seconds(0)
        assert.isTrue(b.ownership.owns(bot!))
        const update = { update_id: 1, payload: "{\"update_id\":1}", received_at: "2026-01-01T00:00:00.000Z" }
        const refused = yield* Effect.flip(inbox.commitUpdates(bot!, [update], 2, old))
        assert.strictEqual(refused._tag, "LeaseLost")
        assert.strictEqual(yield* inbox.ingressOffset(bot!), 0)
        assert.strictEqual(yield* inbox.commitUpdates(bot!, [update], 2, b.ownership.tenure(bot!).fence), 1)
        assert.strictEqual(yield* inbox.ingressOffset(bot!), 2)
      })))

  it.effect("the owner records whether its bots' ingress runs; the others follow it from the leases", () =>
    withBots(2, (stores, bots) =>
      Effect.gen(function*() {
        const a = yield* start(stores, "a")
        yield* seconds(0)
        const b = yield* start(stores, "b")
        yield* a.events.publish(Events.Event.BotStatusChanged({ bot_id: bots[0]!, running: true }))
        yield* seconds(0)
        assert.isFalse(b.events.isRunning(bots[0]!))
        yield* seconds(3)
        assert.isTrue(b.events.isRunning(bots[0]!), "b read it from the lease")
        a.cut()
        yield* seconds(15)
        assert.isTrue(b.ownership.owns(bots[0]!))
        assert.isFalse(b.events.isRunning(bots[0]!), "not running until its ingress starts on b")
      })))
})
