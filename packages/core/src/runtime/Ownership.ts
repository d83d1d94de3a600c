import type { Scope } from "effect"
import { Array as Arr, Clock, Context, Duration, Effect, Layer, Order, Queue } from "effect"
import { Event, Events } from "./Events.js"
import { Identity } from "./Identity.js"
import { BotStore } from "../stores/BotStore.js"
import type { Fence } from "../stores/LeaseStore.js"
import { LeaseStore } from "../stores/LeaseStore.js"

/** What this instance holds of a bot while it runs it: the fence its commits carry, and whether it still holds. */
export interface Tenure {
  /** Carried by the bot's inbox commits; `undefined` where no other instance can run the bot. */
  readonly fence: Fence | undefined
  /**
   * Whether the lease still holds by this instance's clock, checked before each getUpdates, outbox claim and
   * attempt: false from a margin before the lease could pass to another instance.
   */
  readonly holds: Effect.Effect<boolean>
  /** `holds` at a time of the clock (milliseconds), outside any fiber. */
  readonly holdsAt: (now: number) => boolean
}

/** Which bots this instance runs: their ingress, pipeline and outbox. */
export interface OwnershipService {
  /** Whether this instance runs the bot now; `OwnershipChanged` tells when that changes. */
  readonly owns: (botId: number) => boolean
  /** The tenure of a bot this instance runs now. */
  readonly tenure: (botId: number) => Tenure
  /** A commit of the bot was refused (`LeaseLost`): stop running it at once. */
  readonly lost: (botId: number) => Effect.Effect<void>
  /**
   * Whether this instance is handing the bot over to rebalance: it no longer runs it, but its lease still holds
   * in storage until its work has `stopped`, so the work under way may finish.
   */
  readonly handingOver: (botId: number) => boolean
  /**
   * The bot's work here has stopped since `OwnershipChanged` said this instance no longer runs it: a lease it
   * was handing over is freed now, for another instance to take at once.
   */
  readonly stopped: (botId: number) => Effect.Effect<void>
  /**
   * Gives up every lease and leaves, telling the other instances (a clean shutdown, once the bots' work has
   * stopped); nothing is taken afterwards.
   */
  readonly release: Effect.Effect<void>
}

/** Which bots this instance runs. */
export class Ownership extends Context.Tag("@botrelay/core/Ownership")<Ownership, OwnershipService>() {}

const always: Tenure = { fence: undefined, holds: Effect.succeed(true), holdsAt: () => true }

/** The only instance on its database runs every bot, without leases. */
export const everything: Layer.Layer<Ownership> = Layer.succeed(Ownership, {
  owns: () => true,
  tenure: () => always,
  lost: () => Effect.void,
  handingOver: () => false,
  stopped: () => Effect.void,
  release: Effect.void
})

/** How leases are kept (DESIGN.md section 12). */
export interface Options {
  /** How often the instance beats, renews its leases and rebalances. */
  readonly renewEvery: Duration.DurationInput
  /** How long a lease lasts after a renewal, and how long an instance counts as live after a heartbeat. */
  readonly leaseFor: Duration.DurationInput
  /** How long before its expiry an owner stops trusting a lease it could not renew (clocks may differ by less). */
  readonly margin: Duration.DurationInput
  /** How often held leases are checked against the clock. */
  readonly checkEvery: Duration.DurationInput
}

/** Renewed every 3 s, expire after 10 s, trusted until 2 s before, checked every 500 ms. */
export const defaults: Options = {
  renewEvery: Duration.seconds(3),
  leaseFor: Duration.seconds(10),
  margin: Duration.seconds(2),
  checkEvery: Duration.millis(500)
}

interface Held {
  readonly epoch: number
  trustedUntil: number
}

const iso = (ms: number) => new Date(ms).toISOString()

/**
 * Runs the bots this instance holds leases of, in the scope. Every `renewEvery` it beats, renews its leases,
 * drops those it lost, hands over those beyond its share (⌈bots / live instances⌉; each lease is freed once the
 * bot's work has `stopped`, or else expires) and takes free ones up to it (also right after another instance's
 * lease expires), and at once when bots change or another instance gives leases up (`LeasesReleased`); every
 * `checkEvery` it drops leases it could not renew in time. Each change is published as
 * `OwnershipChanged`, and whether each of its bots' ingress runs is recorded in its lease, for every
 * instance's `running`. Closing the scope frees every lease at once (a clean shutdown).
 */
export const make = (
  options: Options = defaults
): Effect.Effect<OwnershipService, never, LeaseStore | BotStore | Events | Identity | Scope.Scope> =>
  Effect.gen(function*() {
    const leases = yield* LeaseStore
    const botStore = yield* BotStore
    const events = yield* Events
    const identity = yield* Identity
    const leaseFor = Duration.toMillis(options.leaseFor)
    const trust = leaseFor - Duration.toMillis(options.margin)
    const held = new Map<number, Held>()

    const fenceOf = (botId: number, epoch: number): Fence => ({ bot_id: botId, instance_id: identity.id, epoch })

    const drop = (botId: number) =>
      Effect.suspend(() =>
        held.delete(botId) ? events.publish(Event.OwnershipChanged({ bot_id: botId, owned: false })) : Effect.void
      )

    /** Takes a bot over: its ingress is not running until it starts here. */
    const take = (botId: number, epoch: number, now: number) =>
      Effect.suspend(() => {
        held.set(botId, { epoch, trustedUntil: now + trust })
        givenUp.delete(botId)
        return Effect.zipRight(
          events.isRunning(botId)
            ? events.receive(Event.BotStatusChanged({ bot_id: botId, running: false }))
            : Effect.void,
          events.publish(Event.OwnershipChanged({ bot_id: botId, owned: true }))
        )
      })

    /** Leases given up to rebalance, by bot, until their bots' work has stopped here. */
    const givenUp = new Map<number, Fence>()

    /**
     * One round; succeeds with how long until the next change it should act on: another instance's lease that
     * this one could take expires, or another instance stops counting as live (which makes the shares larger).
     */
    const tick = Effect.gen(function*() {
      if (leaving) return Infinity
      const now = yield* Clock.currentTimeMillis
      const until = iso(now + leaseFor)
      yield* leases.heartbeat({ id: identity.id, version: identity.version, started_at: identity.started_at }, iso(now))
      if (held.size > 0) {
        const fences = [...held].map(([botId, h]) => fenceOf(botId, h.epoch))
        const renewed = new Set(yield* leases.renew(fences, until))
        for (const [botId, h] of [...held]) {
          if (renewed.has(botId)) h.trustedUntil = Math.max(h.trustedUntil, now + trust)
          else yield* drop(botId)
        }
      }
      const live = yield* leases.instances(iso(now - leaseFor))
      const bots = (yield* botStore.listBots).map((bot) => bot.id)
      const share = Math.ceil(bots.length / Math.max(1, live.length))
      if (held.size > share) {
        const excess = Arr.sort([...held.keys()], Order.reverse(Order.number)).slice(0, held.size - share)
        for (const botId of excess) {
          givenUp.set(botId, fenceOf(botId, held.get(botId)!.epoch))
          yield* drop(botId)
        }
      }
      const all = yield* leases.leases
      const taken = new Map(all.map((lease) => [lease.bot_id, lease]))
      const nowIso = iso(now)
      for (const botId of bots) {
        if (held.size >= share) break
        const lease = taken.get(botId)
        if (held.has(botId) || (lease !== undefined && lease.expires_at > nowIso)) continue
        const acquired = yield* leases.acquire(botId, identity.id, nowIso, until)
        if (acquired._tag === "Some") yield* take(botId, acquired.value.epoch, now)
      }
      let nextExpiry = Infinity
      for (const lease of all) {
        if (held.has(lease.bot_id)) continue
        const running = lease.running && lease.expires_at > nowIso
        if (running !== events.isRunning(lease.bot_id)) {
          yield* events.receive(Event.BotStatusChanged({ bot_id: lease.bot_id, running }))
        }
        if (lease.expires_at > nowIso) nextExpiry = Math.min(nextExpiry, Date.parse(lease.expires_at))
      }
      const nextStale = Math.min(
        ...live.filter((instance) => instance.id !== identity.id).map((i) => Date.parse(i.last_heartbeat_at) + leaseFor)
      )
      return Math.min(held.size < share ? nextExpiry : Infinity, nextStale) - now
    })

    const check = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      for (const [botId, h] of [...held]) if (h.trustedUntil <= now) yield* drop(botId)
    })

    const statuses = yield* events.subscribe("BotStatusChanged")
    const nudges = yield* events.subscribe("BotChanged", "LeasesReleased", "Resynced")
    const ticking = yield* Effect.makeSemaphore(1)
    let leaving = false
    const release = ticking.withPermits(1)(Effect.gen(function*() {
      if (leaving) return
      leaving = true
      for (const botId of [...held.keys()]) yield* drop(botId)
      yield* leases.leave(identity.id)
      yield* events.publish(Event.LeasesReleased())
    })).pipe(Effect.catchAll((e) => Effect.logWarning("could not give up the leases", e.cause)))
    yield* Effect.addFinalizer(() => release)
    const renewal = ticking.withPermits(1)(
      tick.pipe(Effect.catchAll((e) => Effect.as(Effect.logWarning("could not renew the leases", e.cause), Infinity)))
    )
    const renewEvery = Duration.toMillis(options.renewEvery)
    /** Every `renewEvery`, and just after a lease this instance could take expires or an instance died. */
    yield* renewal.pipe(
      Effect.flatMap((untilExpiry) => Effect.sleep(Math.min(renewEvery, Math.max(0, untilExpiry) + 1))),
      Effect.forever,
      Effect.forkScoped
    )
    yield* Queue.take(nudges).pipe(
      Effect.zipRight(Queue.takeAll(nudges)),
      Effect.zipRight(renewal),
      Effect.forever,
      Effect.forkScoped
    )
    yield* check.pipe(Effect.zipRight(Effect.sleep(options.checkEvery)), Effect.forever, Effect.forkScoped)
    yield* Effect.gen(function*() {
      const event = yield* Queue.take(statuses)
      const h = held.get(event.bot_id)
      if (h === undefined || events.isReceived(event)) return
      yield* leases.setRunning(fenceOf(event.bot_id, h.epoch), event.running).pipe(
        Effect.catchAll((e) => Effect.logWarning("could not record the bot's status", e.cause))
      )
    }).pipe(Effect.forever, Effect.forkScoped)

    return Ownership.of({
      owns: (botId) => held.has(botId),
      tenure: (botId) => {
        const epoch = held.get(botId)?.epoch ?? -1
        const holdsAt = (now: number) => {
          const h = held.get(botId)
          return h !== undefined && h.epoch === epoch && now < h.trustedUntil
        }
        return { fence: fenceOf(botId, epoch), holds: Effect.map(Clock.currentTimeMillis, holdsAt), holdsAt }
      },
      lost: drop,
      handingOver: (botId) => givenUp.has(botId),
      stopped: (botId) =>
        Effect.suspend(() => {
          const fence = givenUp.get(botId)
          if (fence === undefined) return Effect.void
          return ticking.withPermits(1)(Effect.suspend(() => {
            if (leaving || givenUp.get(botId) !== fence) return Effect.void
            givenUp.delete(botId)
            return Effect.zipRight(leases.release([fence]), events.publish(Event.LeasesReleased()))
          })).pipe(Effect.catchAll((e) => Effect.logWarning("could not give up a lease", e.cause)))
        }),
      release
    })
  })

/** Ownership by leases, for instances sharing a database. */
export const layer = (
  options: Options = defaults
): Layer.Layer<Ownership, never, LeaseStore | BotStore | Events | Identity> => Layer.scoped(Ownership, make(options))
