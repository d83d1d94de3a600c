import { TelegramClient } from "@botrelay/telegram"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import type { StoredBot } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import type { BotStatus, Consumer, Mode, Status } from "../domain/Status.js"
import { Events } from "../runtime/Events.js"
import { Identity } from "../runtime/Identity.js"
import { IngressPolls } from "../runtime/IngressPolls.js"
import * as Ownership from "../runtime/Ownership.js"
import { needsPolling } from "../runtime/Supervisor.js"
import { BacklogStore } from "../stores/BacklogStore.js"
import type { Backlog, BotBacklog, OutboxBacklog } from "../stores/BacklogStore.js"
import { BotStore } from "../stores/BotStore.js"
import { Broadcast } from "../stores/Broadcast.js"
import { LeaseStore } from "../stores/LeaseStore.js"
import { RouteStore } from "../stores/RouteStore.js"

/** Which instances run, and how each bot stands: its lease, ingress, outbox and consumers. */
export interface StatusReportService {
  /**
   * This instance, the live instances (a heartbeat in the last 10 s) and every bot. Without shared storage
   * (SQLite) this instance is the only one, its heartbeat is now, and it holds the lease of every bot that
   * is not disabled (epoch 1, until a lease's length from now).
   */
  readonly get: Effect.Effect<Status, StorageError>
}

/** Which instances run, and how each bot stands. */
export class StatusReport extends Context.Tag("@botrelay/core/StatusReport")<StatusReport, StatusReportService>() {}

/** How long an instance counts as live after its last heartbeat: a lease's length. */
const liveFor = Duration.toMillis(Ownership.defaults.leaseFor)

/** How long a webhook bot's getWebhookInfo answer is shown before Telegram is asked again. */
export const webhookInfoTtl = Duration.seconds(10)

/** How long the report waits for Telegram's getWebhookInfo. */
const webhookInfoTimeout = Duration.seconds(3)

type WebhookIngress = { pending_update_count: number; last_error_message: string; last_error_date: number }

const noBacklog = (botId: number): BotBacklog => ({
  bot_id: botId,
  inbox: 0,
  oldest_inbox_at: "",
  buffered: 0,
  lowest_buffered: 0,
  delivered_update_id: 0,
  ingress_offset: 0,
  disabled: false
})

/** Builds the service on the stores, the event bus and the Telegram client. */
export const make: Effect.Effect<
  StatusReportService,
  never,
  | Identity
  | BotStore
  | RouteStore
  | Events
  | LeaseStore
  | Broadcast
  | BacklogStore
  | TelegramClient.TelegramClient
  | IngressPolls
> = Effect.gen(function*() {
  const identity = yield* Identity
  const botStore = yield* BotStore
  const routeStore = yield* RouteStore
  const events = yield* Events
  const leaseStore = yield* LeaseStore
  const backlogStore = yield* BacklogStore
  const telegram = yield* TelegramClient.TelegramClient
  const polls = yield* IngressPolls
  const shared = (yield* Broadcast).shared
  const webhookInfos = new Map<number, { readonly at: number; readonly info: WebhookIngress }>()

  /** Telegram's word on a webhook bot, at most `webhookInfoTtl` old; a failed call shows as its error. */
  const webhookIngress = (bot: StoredBot, now: number): Effect.Effect<WebhookIngress> => {
    const cached = webhookInfos.get(bot.id)
    if (cached !== undefined && now - cached.at < Duration.toMillis(webhookInfoTtl)) return Effect.succeed(cached.info)
    return telegram.getWebhookInfo(bot.token).pipe(
      Effect.timeoutFail({
        duration: webhookInfoTimeout,
        onTimeout: () => ({ message: "Telegram did not answer getWebhookInfo in time" })
      }),
      Effect.map((info): WebhookIngress => ({
        pending_update_count: info.pending_update_count,
        last_error_message: info.last_error_message ?? "",
        last_error_date: info.last_error_date ?? 0
      })),
      Effect.catchAll((e) =>
        Effect.succeed<WebhookIngress>({
          pending_update_count: 0,
          last_error_message: `getWebhookInfo failed: ${e.message}`,
          last_error_date: Math.floor(now / 1000)
        })
      ),
      Effect.tap((info) => Effect.sync(() => webhookInfos.set(bot.id, { at: now, info })))
    )
  }

  const modeOf = (bot: StoredBot, routeSources: ReadonlySet<number>): Mode =>
    bot.webhook_mode ? "webhook" : needsPolling(bot, routeSources) ? "polling" : "send-only"

  const outboxOf = (kinds: ReadonlyArray<OutboxBacklog>, now: number) => {
    const oldest = kinds.map((k) => k.oldest_pending_at).filter((at) => at !== "").sort()[0]
    return {
      depth: kinds.reduce((n, k) => n + k.depth, 0),
      oldest_pending_age_s: oldest === undefined ? 0 : Math.max(0, (now - Date.parse(oldest)) / 1000),
      dead: kinds.reduce((n, k) => n + k.dead, 0)
    }
  }

  const consumersOf = (
    bot: StoredBot,
    backlog: Backlog,
    kinds: ReadonlyArray<OutboxBacklog>,
    routeIds: ReadonlyArray<number>
  ): Array<Consumer> => {
    const waiting = backlog.bots.find((b) => b.bot_id === bot.id) ?? noBacklog(bot.id)
    const consumers: Array<Consumer> = []
    if (bot.backend_url !== "") {
      consumers.push({
        kind: "backend",
        id: bot.id,
        position: waiting.delivered_update_id,
        lag: kinds.find((k) => k.kind === "backend")?.depth ?? 0
      })
    }
    if (bot.long_poll_enabled) {
      consumers.push({
        kind: "long_poll",
        id: bot.id,
        position: waiting.buffered > 0 ? waiting.lowest_buffered - 1 : Math.max(0, waiting.ingress_offset - 1),
        lag: waiting.buffered
      })
    }
    for (const routeId of routeIds) {
      const sends = backlog.routes.find((r) => r.route_id === routeId)
      consumers.push({ kind: "route", id: routeId, position: sends?.sent_update_id ?? 0, lag: sends?.pending ?? 0 })
    }
    return consumers
  }

  return StatusReport.of({
    get: Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const nowIso = new Date(now).toISOString()
      const [bots, routes, backlog] = yield* Effect.all(
        [botStore.listBots, routeStore.listRoutes({}), backlogStore.read(nowIso)],
        { concurrency: 3 }
      )
      const routeSources = new Set(routes.filter((r) => r.enabled).map((r) => r.source_bot_id))
      const routesOf = (botId: number) =>
        routes.filter((r) => r.source_bot_id === botId && r.enabled && r.action !== "drop").map((r) => r.id)

      const leases = shared
        ? new Map((yield* leaseStore.leases).filter((l) => l.expires_at > nowIso).map((l) => [l.bot_id, {
          instance_id: l.instance_id,
          epoch: l.epoch,
          expires_at: l.expires_at
        }]))
        : new Map(bots.filter((b) => !b.disabled).map((b) => [b.id, {
          instance_id: identity.id,
          epoch: 1,
          expires_at: new Date(now + liveFor).toISOString()
        }]))
      const counts = new Map<string, number>()
      for (const lease of leases.values()) counts.set(lease.instance_id, (counts.get(lease.instance_id) ?? 0) + 1)
      const instances = shared
        ? (yield* leaseStore.instances(new Date(now - liveFor).toISOString())).map((instance) => ({
          ...instance,
          leases: counts.get(instance.id) ?? 0
        }))
        : [{
          id: identity.id,
          version: identity.version,
          started_at: identity.started_at,
          last_heartbeat_at: nowIso,
          leases: counts.get(identity.id) ?? 0
        }]

      const botStatuses = yield* Effect.forEach(bots, (bot) =>
        Effect.gen(function*() {
          const mode = modeOf(bot, routeSources)
          const kinds = backlog.outbox.filter((o) => o.bot_id === bot.id)
          const polled = polls.last(bot.id)
          const ingress = bot.disabled
            ? null
            : mode === "webhook"
            ? yield* webhookIngress(bot, now)
            : mode === "polling"
            ? {
              lag_s: polled === undefined || !events.isRunning(bot.id) ? null : Math.max(0, (now - polled) / 1000),
              last_update_at: bot.last_update_at
            }
            : null
          const status: BotStatus = {
            bot_id: bot.id,
            mode,
            lease: leases.get(bot.id) ?? null,
            ingress,
            outbox: outboxOf(kinds, now),
            consumers: consumersOf(bot, backlog, kinds, routesOf(bot.id))
          }
          return status
        }), { concurrency: 4 })
      return { self: identity.id, instances, bots: botStatuses }
    }).pipe(Effect.withSpan("StatusReport.get"))
  })
})

/** The service on the stores. */
export const layer: Layer.Layer<
  StatusReport,
  never,
  Effect.Effect.Context<typeof make>
> = Layer.effect(StatusReport, make)
