import { Clock, Context, Duration, Effect, Layer } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { Status } from "../domain/Status.js"
import { nowIso } from "../internal/Time.js"
import { Events } from "../runtime/Events.js"
import { Identity } from "../runtime/Identity.js"
import * as Ownership from "../runtime/Ownership.js"
import { BotStore } from "../stores/BotStore.js"
import { Broadcast } from "../stores/Broadcast.js"
import { LeaseStore } from "../stores/LeaseStore.js"

/** Which instances run and which bots each runs. */
export interface StatusReportService {
  /**
   * This instance, the live instances (a heartbeat in the last 10 s) and every bot (by id) with its lease
   * (`null` while nobody holds it). Without leases (SQLite) this
   * instance is the only one, its heartbeat is now, its `leases` count the bots whose ingress runs here, and
   * every bot's lease is `null`.
   */
  readonly get: Effect.Effect<Status, StorageError>
}

/** Which instances run and which bots each runs. */
export class StatusReport extends Context.Tag("@botrelay/core/StatusReport")<StatusReport, StatusReportService>() {}

/** How long an instance counts as live after its last heartbeat: a lease's length. */
const liveFor = Duration.toMillis(Ownership.defaults.leaseFor)

/** Builds the service: with leases where instances share the storage, for this instance alone otherwise. */
export const make: Effect.Effect<StatusReportService, never, Identity | BotStore | Events | LeaseStore | Broadcast> = Effect.gen(function*() {
  const identity = yield* Identity
  const botStore = yield* BotStore
  const events = yield* Events
  const leaseStore = yield* LeaseStore
  const shared = (yield* Broadcast).shared
  return StatusReport.of({
    get: Effect.gen(function*() {
      const bots = yield* botStore.listBots
      if (shared) {
        const now = yield* Clock.currentTimeMillis
        const nowIso = new Date(now).toISOString()
        const live = yield* leaseStore.instances(new Date(now - liveFor).toISOString())
        const leases = new Map(
          (yield* leaseStore.leases).filter((lease) => lease.expires_at > nowIso).map((lease) => [lease.bot_id, lease])
        )
        const counts = new Map<string, number>()
        for (const lease of leases.values()) counts.set(lease.instance_id, (counts.get(lease.instance_id) ?? 0) + 1)
        return {
          self: identity.id,
          instances: live.map((instance) => ({ ...instance, leases: counts.get(instance.id) ?? 0 })),
          bots: bots.map((bot) => {
            const lease = leases.get(bot.id)
            return {
              bot_id: bot.id,
              lease: lease === undefined
                ? null
                : { instance_id: lease.instance_id, epoch: lease.epoch, expires_at: lease.expires_at }
            }
          })
        }
      }
      return {
        self: identity.id,
        instances: [{
          id: identity.id,
          started_at: identity.started_at,
          last_heartbeat_at: yield* nowIso,
          leases: bots.filter((bot) => events.isRunning(bot.id)).length
        }],
        bots: bots.map((bot) => ({ bot_id: bot.id, lease: null }))
      }
    }).pipe(Effect.withSpan("StatusReport.get"))
  })
})

/** The service on the stores. */
export const layer: Layer.Layer<StatusReport, never, Identity | BotStore | Events | LeaseStore | Broadcast> = Layer.effect(
  StatusReport,
  make
)
