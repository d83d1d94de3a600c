import type { HttpExchange, TelegramClient } from "@botrelay/telegram"
import { Duration, Effect, FiberMap, FiberSet, Layer, Option, Queue, Redacted } from "effect"
import * as AuditRetention from "./AuditRetention.js"
import * as BackendDelivery from "./BackendDelivery.js"
import * as BridgeDelivery from "./BridgeDelivery.js"
import * as Deadlines from "./Deadlines.js"
import { type StoredBot, userIdOf } from "../domain/Bot.js"
import { botsOf, type Event, Events, type EventOf, type RouteEnds } from "./Events.js"
import type { FloodControl } from "./FloodControl.js"
import * as Housekeeping from "./Housekeeping.js"
import * as Ingress from "./Ingress.js"
import type { LlmRouter } from "./LlmRouter.js"
import type { Inbox } from "./Inbox.js"
import * as Lane from "./Lane.js"
import type { LongPoll } from "./LongPoll.js"
import * as Outbox from "./Outbox.js"
import { Ownership, type Tenure } from "./Ownership.js"
import * as Pipeline from "./Pipeline.js"
import * as RouteMatcher from "./RouteMatcher.js"
import * as RouteSender from "./RouteSender.js"
import * as Routing from "./Routing.js"
import * as SearchIndexing from "./SearchIndexing.js"
import * as Snoozes from "./Snoozes.js"
import type * as SentMessages from "./SentMessages.js"
import type { AuditStore } from "../stores/AuditStore.js"
import { BotStore } from "../stores/BotStore.js"
import type { BridgeStore } from "../stores/BridgeStore.js"
import type { ChatStore } from "../stores/ChatStore.js"
import { RouteStore } from "../stores/RouteStore.js"
import { IdempotencyStore } from "../stores/IdempotencyStore.js"
import { InboxStore } from "../stores/InboxStore.js"
import type { MappingStore } from "../stores/MappingStore.js"
import type { OutboxStore } from "../stores/OutboxStore.js"
import type { SearchStore } from "../stores/SearchStore.js"
import * as Webhook from "./Webhook.js"

/** How the runtime behaves. */
export interface Options {
  readonly ingress: Ingress.Options
  readonly outbox: Outbox.Options
  /** Where Telegram reaches this service; without it, bots in webhook mode get no ingress. */
  readonly publicUrl?: string | undefined
  /** Deleting finished work; `Housekeeping.defaults` when omitted. Mappings expire after `routing.mappingTtl`. */
  readonly housekeeping?: Omit<Housekeeping.Options, "mappingTtl"> | undefined
  /** Routing and the reverse path; `Routing.defaults` when omitted. */
  readonly routing?: Routing.Options | undefined
  /**
   * Retrying route sends; when omitted `Outbox.policy` with the outbox's `maxAge` (`BOTRELAY_DELIVERY_MAX_AGE`
   * counts from creation for every outbox kind).
   */
  readonly sends?: Outbox.Policy | undefined
  /** Retention of the audit log; `AuditRetention.defaults` when omitted. */
  readonly audit?: AuditRetention.Options | undefined
  /** Reopening snoozed chats when their time comes; `Snoozes.defaults` when omitted. */
  readonly snoozes?: Snoozes.Options | undefined
}

/** Defaults of DESIGN.md section 5. */
export const defaults: Options = { ingress: Ingress.defaults, outbox: Outbox.defaults }

/** Which bots are polled: not disabled, not in webhook mode, and something needs their updates. */
export const needsPolling = (bot: StoredBot, routeBots: { readonly has: (botId: number) => boolean }): boolean =>
  !bot.disabled && !bot.webhook_mode &&
  (bot.manage_enabled || bot.proxy_enabled || bot.long_poll_enabled || routeBots.has(bot.id))

/** Which bots take their updates by webhook: not disabled, in webhook mode, and the service has a public URL. */
export const needsWebhook = (bot: StoredBot, publicUrl: string | undefined): boolean =>
  !bot.disabled && bot.webhook_mode && publicUrl !== undefined

type Mode = "poll" | "webhook"

interface Settling {
  /** Released when the bot's work settles: its inbox processed and, if that queued deliveries, its outbox empty. */
  settled: Deadlines.Wait | undefined
}

/** A bot's work: its inbox and each outbox kind on a lane of its own, so a line that waits never holds another. */
interface Worker extends Settling {
  readonly inbox: Lane.Lane
  readonly outbox: Lane.Lane
  readonly sends: Lane.Lane
  readonly bridges: Lane.Lane
}

type LaneName = "inbox" | "outbox" | "sends" | "bridges"

const lanesOf = (worker: Worker): ReadonlyArray<Lane.Lane> => [worker.inbox, worker.outbox, worker.sends, worker.bridges]

/** What a lane's pass needs: what processing a bot's inbox needs (its outbox lines need nothing more). */
type LaneContext = Effect.Effect.Context<ReturnType<typeof Pipeline.drain>>

/**
 * Runs the runtime in the scope: one poller or webhook per bot that needs ingress, and each bot's lines of
 * work on fibers only while they have work (`Lane`). It reconciles ingress with the stored bots and routes
 * now and after every `BotChanged` and `RoutesChanged`, wakes a bot's lines as `UpdatesReceived` and
 * `OutboxQueued` are published (a bot's lines start with a pass, so a wake before they exist loses
 * nothing), and drains work left from before a restart. Closing the scope interrupts every fiber; nothing
 * is acknowledged to Telegram that is not stored, so nothing is lost.
 */
export const run = (options: Options = defaults) =>
  Effect.gen(function*() {
    const botStore = yield* BotStore
    const routeStore = yield* RouteStore
    const ownership = yield* Ownership
    const inbox = yield* InboxStore
    const events = yield* Events
    const deliveries = yield* BackendDelivery.make(options.outbox)
    const sender = yield* RouteSender.make
    const bridges = yield* BridgeDelivery.make(options.outbox)
    // Runs after every fiber below has stopped (finalizers run last first): the bots' leases are free then.
    yield* Effect.addFinalizer(() => ownership.release)
    const pollers = yield* FiberMap.make<number>()
    const fork = yield* FiberSet.makeRuntime<LaneContext>()
    /** How long a poller waits at most for its bot's work to settle, each wait timed by this one fiber. */
    const settleWaits = yield* Deadlines.make(options.ingress.settleTimeout)
    const ingressOf = new Map<number, { readonly mode: Mode; readonly token: Redacted.Redacted<string> }>()
    const unregistering = new Map<number, Redacted.Redacted<string>>()
    const workers = new Map<number, Worker>()
    /** Every bot as last read, for the workers. */
    const known = new Map<number, StoredBot>()
    /** The known bots by their Telegram user id (the number before the token's colon). */
    const byUserId = new Map<number, number>()
    /** How many enabled routes each bot is the source or target of (0 is left out). */
    const routeCounts = new Map<number, number>()

    /** Counts an enabled route in (`by` 1) or out (-1) for each of its bots. */
    const count = (route: RouteEnds, by: 1 | -1) => {
      if (!route.enabled) return
      for (const botId of new Set([route.source_bot_id, route.target_bot_id])) {
        const next = (routeCounts.get(botId) ?? 0) + by
        if (next > 0) routeCounts.set(botId, next)
        else routeCounts.delete(botId)
      }
    }

    const remember = (bot: StoredBot) => {
      const before = known.get(bot.id)
      if (before !== undefined && byUserId.get(userIdOf(before)) === bot.id) byUserId.delete(userIdOf(before))
      known.set(bot.id, bot)
      byUserId.set(userIdOf(bot), bot.id)
    }

    const forget = (botId: number) => {
      const before = known.get(botId)
      if (before !== undefined && byUserId.get(userIdOf(before)) === botId) byUserId.delete(userIdOf(before))
      known.delete(botId)
    }

    const wakeNow = (botId: number, which: LaneName) => workers.get(botId)?.[which].wake()

    const wake = (botId: number, which: LaneName) => Effect.sync(() => wakeNow(botId, which))

    const settle = (settling: Settling) =>
      Effect.sync(() => {
        settling.settled?.release()
        settling.settled = undefined
      })

    /**
     * After a polled batch was accepted (which wakes processing), waits until the bot's work settles, at
     * most `settleTimeout`: an idle bot polls again at once, a busy one gathers updates into larger batches.
     */
    const committed = (botId: number) =>
      Effect.suspend(() => {
        const worker = workers.get(botId)
        if (worker === undefined) return Effect.void
        const settled = settleWaits.begin()
        worker.settled = settled
        return settled.await
      })

    /**
     * Forwards a bot's update while it is committed when nothing of the bot's waits (its inbox and deliveries
     * idle), nothing routes it, and no other instance can run the bot: the commit then goes on beside the POST
     * instead of before it. Its delivery, once stored, takes that POST as its first attempt.
     */
    const forwardEarly = (botId: number, tenure: Tenure) =>
      tenure.fence !== undefined ? undefined : (update: { readonly update_id: number; readonly payload: string }) => {
        const worker = workers.get(botId)
        const current = known.get(botId)
        if (worker === undefined || current === undefined || routeCounts.has(botId)) return
        if (worker.inbox.idle && worker.outbox.idle) deliveries.forwardEarly(current, update)
      }

    const latest = (botId: number) => () => known.get(botId)
    const bot = (botId: number) => known.get(botId)

    const isBotUser = (userId: number) => byUserId.has(userId)

    const routing = yield* Routing.make({ bot, isBotUser, quiet: sender.quiet }, options.routing).pipe(
      Effect.provideServiceEffect(RouteMatcher.RouteSets, RouteMatcher.make)
    )

    const sendsPolicy: Outbox.Policy = options.sends ?? { ...Outbox.policy, maxAge: options.outbox.maxAge }

    const makeWorker = (botId: number, tenure: Tenure): Worker => {
      const settling: Settling = { settled: undefined }
      const lane = (
        pass: () => Effect.Effect<Option.Option<Duration.Duration>, never, LaneContext>,
        idle: Effect.Effect<void> = Effect.void
      ) => Lane.make(() => Effect.annotateLogs(pass(), { bot_id: botId }), idle, fork)
      const processing = () =>
        Pipeline.drain(botId, { current: latest(botId), route: routing.evaluate, fence: tenure.fence }).pipe(
          Effect.flatMap((queued) => queued ? Effect.void : settle(settling)),
          Effect.as(Option.none<Duration.Duration>()),
          Effect.catchTag("LeaseLost", () => Effect.as(Effect.zipRight(ownership.lost(botId), settle(settling)), Option.none())),
          Effect.catchAll((e) =>
            Effect.logError("processing failed", e.cause).pipe(
              Effect.zipRight(settle(settling)),
              Effect.as(Option.some(Duration.seconds(1)))
            )
          )
        )
      return Object.assign(settling, {
        inbox: lane(processing),
        outbox: lane(() => Outbox.runLine(deliveries.kind, options.outbox, botId, bot, tenure.holdsAt), settle(settling)),
        sends: lane(() => Outbox.runLine(sender.kind, sendsPolicy, botId, bot, tenure.holdsAt)),
        bridges: lane(() => Outbox.runLine(bridges, options.outbox, botId, bot, tenure.holdsAt))
      })
    }

    /** Starts the bot's lines with a pass each: work may wait from before they existed. */
    const ensureWorker = (botId: number) =>
      Effect.sync(() => {
        if (workers.has(botId)) return
        const worker = makeWorker(botId, ownership.tenure(botId))
        workers.set(botId, worker)
        for (const lane of lanesOf(worker)) lane.wake()
      })

    /**
     * Stops the bot's lines here, then tells `Ownership`. A bot handed over to rebalance (its lease holds until
     * then) has each line finish the pass in progress on a fiber of its own; its tenure has stopped holding, so a
     * pass goes no further than the attempt under way, and a delivery on the wire is recorded, not sent again by
     * the next owner. Otherwise the lines are interrupted at once.
     */
    const stopWorker = (botId: number) =>
      Effect.suspend(() => {
        const worker = workers.get(botId)
        if (worker === undefined) return ownership.stopped(botId)
        workers.delete(botId)
        deliveries.forget(botId)
        const lanes = lanesOf(worker)
        if (!ownership.handingOver(botId)) {
          return Effect.zipRight(
            Effect.forEach(lanes, (lane) => lane.stop, { concurrency: "unbounded", discard: true }),
            ownership.stopped(botId)
          )
        }
        const finished = Effect.forEach(lanes, (lane) => lane.finish, { concurrency: "unbounded", discard: true })
        return Effect.asVoid(Effect.sync(() => fork(Effect.zipRight(finished, ownership.stopped(botId)), { immediate: false })))
      })

    const unregisterPending = (botId: number) =>
      Effect.suspend(() => {
        const token = unregistering.get(botId)
        return token === undefined ? Effect.void : Webhook.unregister(botId, token, options.ingress).pipe(
          Effect.zipRight(Effect.sync(() => void unregistering.delete(botId)))
        )
      })

    /** Stops running the bot here (another instance takes it over): its webhook stays registered. */
    const halt = (botId: number) =>
      Effect.gen(function*() {
        ingressOf.delete(botId)
        unregistering.delete(botId)
        yield* FiberMap.remove(pollers, botId)
        yield* stopWorker(botId)
      })

    const stopBot = (botId: number) =>
      Effect.gen(function*() {
        const current = ingressOf.get(botId)
        forget(botId)
        yield* halt(botId)
        if (current?.mode === "webhook") {
          unregistering.set(botId, current.token)
          yield* FiberMap.run(pollers, botId, unregisterPending(botId))
        }
      })

    const wantedMode = (bot: StoredBot): Mode | undefined =>
      needsWebhook(bot, options.publicUrl) ? "webhook" : needsPolling(bot, routeCounts) ? "poll" : undefined

    /** Applies the bot as stored now; `previous` is how it was known before (routing reads every bot from `known`). */
    const reconcileBot = (bot: StoredBot, previous: StoredBot | undefined) =>
      Effect.gen(function*() {
        remember(bot)
        if (!ownership.owns(bot.id)) return yield* halt(bot.id)
        const firstSight = !workers.has(bot.id)
        const enabled = previous?.disabled === true && !bot.disabled
        const moved = previous !== undefined && previous.backend_url !== bot.backend_url
        yield* ensureWorker(bot.id)
        if (enabled) yield* wake(bot.id, "sends")
        if (moved) yield* wake(bot.id, "outbox")
        const want = wantedMode(bot)
        const current = ingressOf.get(bot.id)
        const stale = firstSight && want !== "webhook" && Option.isSome(yield* inbox.webhookSecret(bot.id))
        if (stale) unregistering.set(bot.id, bot.token)
        const same = current === undefined
          ? want === undefined
          : current.mode === want && Redacted.value(current.token) === Redacted.value(bot.token)
        if (same && !stale) return
        yield* FiberMap.remove(pollers, bot.id)
        if (current?.mode === "webhook") unregistering.set(bot.id, current.token)
        if (want === undefined) ingressOf.delete(bot.id)
        else ingressOf.set(bot.id, { mode: want, token: bot.token })
        const tenure = ownership.tenure(bot.id)
        const ingress: Effect.Effect<
          void,
          never,
          BotStore | InboxStore | Inbox | Events | Ownership | TelegramClient.TelegramClient
        > = want === "webhook"
          ? Webhook.register(bot, options.publicUrl!, options.ingress)
          : want === "poll"
          ? Ingress.poll(
            bot,
            committed(bot.id),
            options.ingress,
            tenure,
            Pipeline.completing(latest(bot.id), () => routeCounts.has(bot.id)),
            forwardEarly(bot.id, tenure)
          )
          : Effect.void
        if (want !== undefined || unregistering.has(bot.id)) {
          yield* FiberMap.run(pollers, bot.id, Effect.zipRight(unregisterPending(bot.id), ingress))
        }
      })

    const reconcileAll = Effect.gen(function*() {
      const bots = yield* botStore.listBots
      const routes = yield* routeStore.listRoutes({})
      routeCounts.clear()
      for (const route of routes) count(route, 1)
      const present = new Set(bots.map((b) => b.id))
      for (const botId of [...workers.keys()]) if (!present.has(botId)) yield* stopBot(botId)
      const previous = new Map(known)
      for (const bot of bots) remember(bot)
      for (const bot of bots) yield* reconcileBot(bot, previous.get(bot.id))
    })

    const reconcileOne = (botId: number) =>
      Effect.gen(function*() {
        const bot = yield* botStore.findBot(botId)
        if (Option.isNone(bot)) return yield* stopBot(botId)
        yield* reconcileBot(bot.value, known.get(botId))
      })

    /** After routes changed: their bots' counts, then those bots, and no other. */
    const reconcileRouted = (change: EventOf<"RoutesChanged">) =>
      Effect.gen(function*() {
        for (const route of change.removed) count(route, -1)
        for (const route of change.added) count(route, 1)
        for (const botId of botsOf(change)) yield* reconcileOne(botId)
      })

    const handle = (event: Event) => {
      switch (event._tag) {
        case "BotChanged":
          return reconcileOne(event.id)
        case "RoutesChanged":
          return reconcileRouted(event)
        case "OwnershipChanged":
          return reconcileOne(event.bot_id)
        case "Resynced":
          return Effect.zipRight(reconcileAll, wakeAll)
        default:
          return Effect.void
      }
    }

    /**
     * Wakes every line of every bot this instance runs: work may have come while nobody was told. Bridge
     * deliveries are not among `botsWithWork`: every bridge line looks again.
     */
    const wakeAll = Effect.gen(function*() {
      for (const botId of yield* inbox.botsWithWork) {
        yield* wake(botId, "inbox")
        yield* wake(botId, "outbox")
        yield* wake(botId, "sends")
      }
      for (const botId of [...workers.keys()]) yield* wake(botId, "bridges")
    })

    // a bot's worker wakes in the publishing fiber, not after the changes queued before it
    yield* events.listen(["UpdatesReceived", "OutboxQueued"], (event) =>
      event._tag === "UpdatesReceived"
        ? wakeNow(event.bot_id, "inbox")
        : wakeNow(event.bot_id, event.kind === "delivery" ? "outbox" : event.kind === "bridge" ? "bridges" : "sends"))
    const subscription = yield* events.subscribe("BotChanged", "RoutesChanged", "OwnershipChanged", "Resynced")
    yield* Effect.forkScoped(Housekeeping.run({
      ...(options.housekeeping ?? Housekeeping.defaults),
      mappingTtl: (options.routing ?? Routing.defaults).mappingTtl
    }))
    yield* Effect.forkScoped(SearchIndexing.run())
    yield* Effect.forkScoped(AuditRetention.run(options.audit ?? AuditRetention.defaults))
    yield* Effect.forkScoped(Snoozes.run(options.snoozes ?? Snoozes.defaults))
    yield* reconcileAll.pipe(Effect.orDie)
    yield* wakeAll.pipe(Effect.orDie)
    yield* Queue.take(subscription).pipe(
      Effect.flatMap(handle),
      Effect.catchAll((e) => Effect.logError("could not apply a change", e.cause).pipe(Effect.zipRight(Effect.sleep(Duration.seconds(1))))),
      Effect.forever,
      Effect.forkScoped
    )
  })

/** The runtime as a layer: it runs while the layer is alive. */
export const layer = (
  options: Options = defaults
): Layer.Layer<
  never,
  never,
  | AuditStore
  | BotStore
  | BridgeStore
  | ChatStore
  | IdempotencyStore
  | RouteStore
  | MappingStore
  | SentMessages.SentMessages
  | SearchStore
  | InboxStore
  | OutboxStore
  | Events
  | Inbox
  | LongPoll
  | FloodControl
  | LlmRouter
  | Ownership
  | TelegramClient.TelegramClient
  | HttpExchange.HttpExchange
> =>
  Layer.scopedDiscard(run(options))
