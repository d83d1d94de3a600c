import { BotApi } from "@botrelay/telegram"
import type { Scope } from "effect"
import { Clock, Context, Data, Duration, Effect, Layer, Queue } from "effect"
import type { StoredBot } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import * as RandomToken from "../internal/RandomToken.js"
import * as Deadlines from "./Deadlines.js"
import { Event, Events } from "./Events.js"
import type { BufferedUpdate, BufferQuery, TypeFilter } from "../domain/Update.js"
import { BufferStore } from "../stores/BufferStore.js"

export type { BufferedUpdate, BufferQuery, BufferRetention, BufferState, TypeFilter } from "../domain/Update.js"

/** Telegram's getUpdates parameters, as a client sent them (already parsed to numbers and arrays). */
export interface GetUpdates {
  readonly offset?: number | undefined
  readonly limit?: number | undefined
  /** Seconds to hold the request while nothing is buffered; 0 answers at once. */
  readonly timeout?: number | undefined
  /** Remembered per bot when given; omitted keeps the previous setting. */
  readonly allowed_updates?: ReadonlyArray<string> | undefined
}

/** The most entries an `allowed_updates` list may have (Telegram has about two dozen update types). */
export const maxAllowedUpdates = 32

/** What an update type's name looks like in `allowed_updates`. */
export const updateTypeName = /^[a-z][a-z_]{0,63}$/

/** What getWebhookInfo reports about a bot's buffer. */
export interface BufferStatus {
  /** Updates buffered and not yet confirmed. */
  readonly pending: number
  /** Updates dropped by retention (count or age) since the bot was created. */
  readonly trimmed: number
  /** Unix seconds of the last trim, 0 if none. */
  readonly last_trimmed_date: number
  /** The remembered allowed_updates, [] when never set. */
  readonly allowed_updates: ReadonlyArray<string>
}

/** A newer getUpdates for the same bot ended this one, as Telegram does. */
export class PollConflict extends Data.TaggedError("PollConflict")<{}> {
  override get message() {
    return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
  }
}

/** A bot's long-poll buffer is only served while `long_poll_enabled` is on. */
export class LongPollDisabled extends Data.TaggedError("LongPollDisabled")<{ readonly bot_id: number }> {
  override get message() {
    return "long polling is not enabled for this bot in Botrelay; set long_poll_enabled with POST /api/bots/update"
  }
}

/**
 * The long-poll buffer of bots with `long_poll_enabled`, served with Telegram's getUpdates semantics:
 * `offset` confirms everything below it, a negative offset keeps only the last updates, `limit` 1..100,
 * `timeout` holds the request until an update arrives, `allowed_updates` is remembered, and a newer
 * call ends an older pending one with `PollConflict`.
 */
export interface LongPollService {
  /** Serves the bot as the caller read it (by its token or id): one without `long_poll_enabled` is refused. */
  readonly getUpdates: (
    bot: Pick<StoredBot, "id" | "long_poll_enabled">,
    params: GetUpdates
  ) => Effect.Effect<ReadonlyArray<BufferedUpdate>, PollConflict | LongPollDisabled | StorageError>
  readonly status: (botId: number) => Effect.Effect<BufferStatus, StorageError>
  /** Drops every buffered update (setWebhook / deleteWebhook with drop_pending_updates). */
  readonly drop: (botId: number) => Effect.Effect<void, StorageError>
  /** Applies retention (count and age) to the bot's buffer now, logging what it dropped. */
  readonly trim: (botId: number) => Effect.Effect<void, StorageError>
  /**
   * Answers every pending getUpdates at once and holds no new ones, so that a stopping server does not
   * wait for long polls to time out.
   */
  readonly shutdown: Effect.Effect<void>
}

/** The long-poll buffer. */
export class LongPoll extends Context.Tag("@botrelay/core/LongPoll")<LongPoll, LongPollService>() {}

/** Telegram's largest `limit`. */
export const maxLimit = 100

/** Telegram's longest `timeout`, in seconds. */
export const maxTimeout = 50

/** How long unconfirmed updates are kept. */
export interface Options {
  /** The most updates kept per bot; the oldest beyond are dropped. */
  readonly maxUpdates: number
  /** How long an unconfirmed update is kept. */
  readonly maxAge: Duration.DurationInput
}

/** Like Telegram: 24 hours, and at most 10,000 updates per bot. */
export const defaults: Options = { maxUpdates: 10_000, maxAge: Duration.hours(24) }

/** The types `allowed_updates` lets through: `[]` means every type but chat_member and the reactions. */
const typeFilter = (allowed: ReadonlyArray<string>): TypeFilter =>
  allowed.length === 0 ? { except: BotApi.optInUpdateTypes } : { only: allowed }

/** The type of a parsed update: its only key besides `update_id`, "" when it has none. */
export const typeOf = (update: unknown): string =>
  typeof update === "object" && update !== null && !Array.isArray(update)
    ? BotApi.updateType(update as Record<string, unknown>) ?? ""
    : ""

/** Whether a type passes the filter. */
export const passes = (filter: TypeFilter, type: string): boolean =>
  "only" in filter ? filter.only.includes(type) : !filter.except.includes(type)

/** An integer parameter as Telegram reads it: the default when absent, truncated and clamped to its range. */
const clamp = (value: number | undefined, fallback: number, min: number, max: number): number =>
  value === undefined || Number.isNaN(value) ? fallback : Math.min(max, Math.max(min, Math.trunc(value)))

const iso = (ms: number) => new Date(ms).toISOString()

const sameTypes = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((type, i) => type === b[i])

/** A pending getUpdates: what names it on every instance, whether a newer one ended it, and its waiter. */
interface Poll {
  readonly name: string
  ended: boolean
  waiter: Waiter | undefined
}

/** A getUpdates listening for its bot's next update: woken once one is buffered; its wait while it is held. */
interface Waiter {
  woken: boolean
  wait: Deadlines.Wait | undefined
}

/** Ends a pending getUpdates, as a newer one does: a held request fails with `PollConflict` at once. */
const end = (poll: Poll) => {
  poll.ended = true
  poll.waiter?.wait?.release()
}

/** The buffer as `make` builds it, with what tests look at. */
export interface LongPollInternals extends LongPollService {
  /** Wakes pending getUpdates of the bot and applies retention: what an `UpdatesBuffered` event does. */
  readonly buffered: (botId: number) => Effect.Effect<void>
  /** How many getUpdates of the bot wait for an update now. */
  readonly waiting: (botId: number) => number
}

/**
 * Builds the buffer on the stores, following `UpdatesBuffered` events while the scope is open.
 * Waiting requests are held in memory: an event wakes those of its bot, a newer getUpdates of the bot
 * ends the pending one, and an interrupted request leaves nothing behind. Retention is applied after
 * every write and before every read.
 */
export const make = (
  options: Options = defaults
): Effect.Effect<LongPollInternals, never, BufferStore | Events | Scope.Scope> =>
  Effect.gen(function*() {
    const buffer = yield* BufferStore
    const bus = yield* Events
    const clock = yield* Effect.clock
    const events = yield* bus.subscribe("UpdatesBuffered", "Resynced")
    const maxAge = Duration.toMillis(Duration.decode(options.maxAge))
    /** The pending getUpdates of each bot, and what names it on every instance. */
    const current = new Map<number, Poll>()
    /** The getUpdates of each bot reading or waiting for an update. */
    const waiters = new Map<number, Set<Waiter>>()
    /** Every held request's wait, timed by one fiber. */
    const deadlines = yield* Deadlines.make(Duration.seconds(maxTimeout))
    let stopping = false
    /** Poll names: a random prefix of this buffer's own (no other instance has it), then a count. */
    const instancePolls = `${yield* RandomToken.make}.`
    let polls = 0

    const wake = (waiter: Waiter) => {
      waiter.woken = true
      waiter.wait?.release()
    }

    const trim = (botId: number) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const dropped = yield* buffer.trimBuffered(botId, {
          max_updates: options.maxUpdates,
          before: iso(now - maxAge),
          at: iso(now)
        })
        if (dropped > 0) {
          const retention = `${options.maxUpdates} updates, ${Duration.format(Duration.millis(maxAge))}`
          yield* Effect.logWarning(
            `dropped ${dropped} unconfirmed updates from the long-poll buffer (retention: ${retention})`
          ).pipe(Effect.annotateLogs({ bot_id: botId, dropped }))
        }
      })

    /** Registers the poll's waiter for the bot's next `buffered`; `leave` takes it back. */
    const listen = (botId: number, poll: Poll): Waiter => {
      const waiter: Waiter = { woken: false, wait: undefined }
      const set = waiters.get(botId) ?? new Set()
      set.add(waiter)
      waiters.set(botId, set)
      poll.waiter = waiter
      return waiter
    }

    const leave = (botId: number, poll: Poll) => {
      const waiter = poll.waiter
      if (waiter === undefined) return
      poll.waiter = undefined
      waiter.wait?.release()
      const set = waiters.get(botId)
      set?.delete(waiter)
      if (set?.size === 0) waiters.delete(botId)
    }

    const serve = (botId: number, params: GetUpdates, poll: Poll) =>
      Effect.gen(function*() {
        const offset = clamp(params.offset, 0, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
        const limit = clamp(params.limit, maxLimit, 1, maxLimit)
        const timeout = clamp(params.timeout, 0, 0, maxTimeout)
        const remembered = (yield* buffer.bufferState(botId)).allowed_updates
        const allowed = params.allowed_updates ?? remembered
        if (!sameTypes(allowed, remembered)) yield* buffer.setAllowedUpdates(botId, allowed)
        if (offset > 0) yield* buffer.confirmBuffered(botId, offset)
        else if (offset < 0) yield* buffer.keepNewestBuffered(botId, -offset)
        yield* trim(botId)
        const query: BufferQuery = { offset: Math.max(offset, 0), limit, types: typeFilter(allowed) }
        const deadline = clock.unsafeCurrentTimeMillis() + timeout * 1000
        while (true) {
          // listening before the read, so that an update buffered while it reads is not missed
          const waiter = listen(botId, poll)
          const updates = yield* buffer.readBuffered(botId, query)
          const left = deadline - clock.unsafeCurrentTimeMillis()
          if (updates.length > 0 || left <= 0 || stopping) return updates
          if (poll.ended) return yield* Effect.fail(new PollConflict())
          if (!waiter.woken) {
            waiter.wait = deadlines.begin(Duration.millis(left))
            yield* waiter.wait.await
          }
          leave(botId, poll)
          if (poll.ended) return yield* Effect.fail(new PollConflict())
        }
      }).pipe(Effect.ensuring(Effect.sync(() => leave(botId, poll))))

    const service: LongPollInternals = {
      getUpdates: ({ id: botId, long_poll_enabled }, params) =>
        Effect.gen(function*() {
          if (!long_poll_enabled) return yield* Effect.fail(new LongPollDisabled({ bot_id: botId }))
          return yield* Effect.acquireUseRelease(
            Effect.sync(() => {
              const previous = current.get(botId)
              const poll: Poll = { name: `${instancePolls}${++polls}`, ended: false, waiter: undefined }
              current.set(botId, poll)
              if (previous !== undefined) end(previous)
              return poll
            }).pipe(Effect.tap((poll) => bus.publish(Event.LongPollStarted({ bot_id: botId, poll: poll.name })))),
            (poll) => serve(botId, params, poll),
            (poll) => Effect.sync(() => void (current.get(botId) === poll && current.delete(botId)))
          )
        }).pipe(Effect.withSpan("LongPoll.getUpdates", { attributes: { bot_id: botId }, captureStackTrace: false })),

      status: (botId) =>
        Effect.gen(function*() {
          yield* trim(botId)
          const state = yield* buffer.bufferState(botId)
          const pending = yield* buffer.countBuffered(botId)
          return {
            pending,
            trimmed: state.trimmed,
            last_trimmed_date: state.last_trimmed_at === "" ? 0 : Math.floor(Date.parse(state.last_trimmed_at) / 1000),
            allowed_updates: state.allowed_updates
          }
        }),

      drop: (botId) => Effect.asVoid(buffer.dropBuffered(botId)),

      trim,

      buffered: (botId) =>
        Effect.suspend(() => {
          waiters.get(botId)?.forEach(wake)
          return trim(botId)
        }).pipe(
          Effect.catchAll((e) => Effect.logError("could not trim the long-poll buffer", e.cause)),
          Effect.annotateLogs({ bot_id: botId })
        ),

      shutdown: Effect.sync(() => {
        stopping = true
        for (const set of waiters.values()) set.forEach(wake)
      }),

      waiting: (botId) => waiters.get(botId)?.size ?? 0
    }
    /**
     * A getUpdates started on another instance ends the one pending here, as a newer one here would, as soon as
     * the event is heard (a listener: no fiber wakes for the starts of this instance's own polls, which every
     * getUpdates publishes). This instance's own starts are left alone: a newer one already ended its predecessor.
     */
    yield* bus.listen(["LongPollStarted"], (event) => {
      if (!bus.isReceived(event)) return
      const pending = current.get(event.bot_id)
      if (pending !== undefined && pending.name !== event.poll) end(pending)
    })
    yield* Queue.take(events).pipe(
      Effect.flatMap((event) =>
        event._tag === "UpdatesBuffered"
          ? service.buffered(event.bot_id)
          : Effect.forEach([...waiters.keys()], service.buffered, { discard: true })
      ),
      Effect.forever,
      Effect.forkScoped
    )
    return service
  })

/** The buffer as a layer on the stores, following the `Events` bus. */
export const layer = (options: Options = defaults): Layer.Layer<LongPoll, never, BufferStore | Events> =>
  Layer.scoped(LongPoll, make(options))
