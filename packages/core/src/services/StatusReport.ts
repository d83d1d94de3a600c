import { Context, Effect, Layer } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { Status } from "../domain/Status.js"
import { nowIso } from "../internal/Time.js"
import { Events } from "../runtime/Events.js"
import { Identity } from "../runtime/Identity.js"
import { BotStore } from "../stores/BotStore.js"

/** Which instances run and which bots each runs. */
export interface StatusReportService {
  /**
   * This instance, the live instances and every bot (by id) with its lease. Without leases (SQLite) this
   * instance is the only one, its heartbeat is now, its `leases` count the bots whose ingress runs here, and
   * every bot's lease is `null`.
   */
  readonly get: Effect.Effect<Status, StorageError>
}

/** Which instances run and which bots each runs. */
export class StatusReport extends Context.Tag("@botrelay/core/StatusReport")<StatusReport, StatusReportService>() {}

/** Builds the service for a single instance without leases. */
export const make: Effect.Effect<StatusReportService, never, Identity | BotStore | Events> = Effect.gen(function*() {
  const identity = yield* Identity
  const botStore = yield* BotStore
  const events = yield* Events
  return StatusReport.of({
    get: Effect.gen(function*() {
      const bots = yield* botStore.listBots
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

/** The service for a single instance without leases. */
export const layer: Layer.Layer<StatusReport, never, Identity | BotStore | Events> = Layer.effect(StatusReport, make)
