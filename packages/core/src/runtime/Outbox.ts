import { Clock, Duration, Effect, Option } from "effect"
import type { StoredBot } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import { isoCached } from "../internal/Time.js"
import * as Metrics from "./Metrics.js"
import * as Retry from "./Retry.js"

/** How jobs are retried: waits from `retryBase`, doubling up to `retryCap`, jittered, for `maxAge`; then dead. */
export interface Policy {
  readonly retryBase: Duration.DurationInput
  readonly retryCap: Duration.DurationInput
  /** How long a job is retried before it is dead-lettered. */
  readonly maxAge: Duration.DurationInput
}

/** Retries from 1 s up to 5 min apart, for 24 h. */
export const policy: Policy = {
  retryBase: Duration.seconds(1),
  retryCap: Duration.minutes(5),
  maxAge: Duration.hours(24)
}

/** How deliveries to backends behave: the retry policy, and how long a backend may take to answer. */
export interface Options extends Policy {
  readonly timeout: Duration.DurationInput
}

/** Defaults: 10 s per attempt, and the default `policy`. */
export const defaults: Options = { timeout: Duration.seconds(10), ...policy }

/** What the runner reads of a job: its place in the line and its age. */
export interface Job {
  readonly id: number
  readonly attempts: number
  readonly next_attempt_at: string
  readonly created_at: string
}

/** Where a job stands after an attempt: done, waiting for a retry, or dead-lettered. */
export type Outcome =
  | { readonly status: "done"; readonly at: string }
  | { readonly status: "pending"; readonly at: string; readonly next_attempt_at: string; readonly last_error: string }
  | { readonly status: "dead"; readonly at: string; readonly last_error: string }

/**
 * What an executor says of one attempt. A failure is retried `later` (after the policy's wait, or
 * `retryAfter` when longer), `now`, or `never` (dead at once). `after` runs once the outcome is recorded;
 * `extra` is recorded with it.
 */
export type Attempt<X> =
  | { readonly _tag: "Done"; readonly extra: X; readonly after?: Effect.Effect<void> | undefined }
  | {
    readonly _tag: "Failed"
    readonly extra: X
    readonly error: string
    readonly retry: "later" | "now" | "never"
    readonly retryAfter?: Duration.Duration | undefined
  }

/** An outcome to record, with its job and what the executor kept for it. */
export interface Recorded<J, X> {
  readonly job: J
  readonly outcome: Outcome
  readonly extra: X
}

/** The bots as they are now, by id; `undefined` once a bot is gone. */
export type Bots = (id: number) => StoredBot | undefined

/** Marks the part of an attempt that may be cut short when the runtime stops; the rest runs to its end. */
export type Interruptible = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>

/** A kind of job: how a bot's line is read, how one job is attempted (the executor), how outcomes are recorded. */
export interface Kind<J extends Job, X> {
  /** Names the kind in logs. */
  readonly name: string
  /** The kind's `kind` label in metrics; its attempts are not counted without one. */
  readonly metric?: Metrics.OutboxKind | undefined
  /** The bot's oldest pending jobs of this kind, oldest first, at most `limit`. */
  readonly line: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<J>, StorageError>
  /** Whether the bot's line runs now; when not, its jobs wait. */
  readonly runs: (bot: StoredBot) => boolean
  /** Attempts one due job of the bot. */
  readonly attempt: (
    job: J,
    bot: StoredBot,
    bots: Bots,
    interruptible: Interruptible
  ) => Effect.Effect<Attempt<X>, StorageError>
  /**
   * Attempts the job the way `attempt` would, outside any fiber, calling `done` with its attempt; returns a
   * function that cancels it, or `undefined` (nothing begun, `done` never called) when this job needs `attempt`
   * (the rest of its batch then goes through `attempt` too). While attempts succeed without an `after`, the
   * runner goes from one to the next without fiber steps.
   */
  readonly attemptNow?:
    | ((job: J, bot: StoredBot, bots: Bots, done: (attempt: Attempt<X>) => void) => (() => void) | undefined)
    | undefined
  /** Records outcomes in order. */
  readonly record: (recorded: ReadonlyArray<Recorded<J, X>>) => Effect.Effect<void, StorageError>
  /** Whether each outcome is recorded at once; otherwise after each run of a batch, before an `after`, and when stopped. */
  readonly recordEach: boolean
  /** Log annotations that name a job. */
  readonly annotations: (job: J) => Record<string, unknown>
}

/** How many due jobs one read takes. */
const batchSize = 50

/** The outcome of an attempt under the policy: the deadline first, then `retry_after` or the schedule's wait. */
export const outcomeOf = <X>(job: Job, attempt: Attempt<X>, policy: Policy): Effect.Effect<Outcome> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => outcomeAt(job, attempt, policy, now))

const isoAt = isoCached()

const outcomeAt = <X>(job: Job, attempt: Attempt<X>, policy: Policy, now: number): Effect.Effect<Outcome> => {
  const at = isoAt(now)
  if (attempt._tag === "Done") return Effect.succeed({ status: "done", at })
  const last_error = attempt.error
  if (attempt.retry === "never" || now - Date.parse(job.created_at) >= Duration.toMillis(policy.maxAge)) {
    return Effect.succeed({ status: "dead", at, last_error })
  }
  const backoff = attempt.retry === "now"
    ? Effect.succeed(Duration.zero)
    : Retry.delay(job.attempts, policy.retryBase, policy.retryCap)
  return Effect.map(backoff, (wait) => {
    const waited = Math.max(
      Duration.toMillis(wait),
      attempt.retryAfter === undefined ? 0 : Duration.toMillis(attempt.retryAfter)
    )
    return { status: "pending", at, last_error, next_attempt_at: new Date(now + waited).toISOString() }
  })
}

/** What one job of a batch came to: the outcome recorded, and what runs once it is. */
interface Ran {
  readonly outcome: Outcome
  readonly after: Effect.Effect<void> | undefined
}

/** Where attempts outside a fiber stopped: at `next`, that job attempted (`attempt`) or not yet. */
interface Stopped<X> {
  readonly next: number
  readonly attempt: Attempt<X> | undefined
}

/**
 * Runs one bot's line of a kind, FIFO: attempts due jobs in order, stops at the first not due yet and after
 * a failure (the head then waits for its retry). Returns how long to wait for the next job, or `None` when
 * the line is empty or does not run now. Nothing is read or attempted unless `holdsAt` (the bot's lease,
 * at the clock's time) says so.
 */
export const runLine = <J extends Job, X>(
  kind: Kind<J, X>,
  policy: Policy,
  botId: number,
  bots: Bots,
  holdsAt: (now: number) => boolean = () => true
): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.clockWith((clock) => {
    const doneAt = isoCached()
    /** The time a job is due, parsed once for the jobs of a batch that share it (they were queued together). */
    let dueText = ""
    let dueAt = 0
    const dueOf = (job: J) => {
      if (job.next_attempt_at !== dueText) {
        dueText = job.next_attempt_at
        dueAt = Date.parse(dueText)
      }
      return dueAt
    }
    /** Why the job cannot be attempted now: not due (how long until it is), or its bot stopped; else undefined. */
    const blocked = (job: J): Duration.Duration | "stopped" | undefined => {
      const now = clock.unsafeCurrentTimeMillis()
      const due = dueOf(job) - now
      if (due > 0) return Duration.millis(due)
      const bot = bots(botId)
      return bot === undefined || !kind.runs(bot) || !holdsAt(now) ? "stopped" : undefined
    }

    const runBatch = (batch: ReadonlyArray<J>) => {
      const pending: Array<Recorded<J, X>> = []
      const record = Effect.suspend(() =>
        pending.length === 0 ? Effect.void : Effect.uninterruptible(kind.record(pending.splice(0)))
      )
      /** Keeps the attempt's outcome for `record`. */
      const keep = (job: J, attempt: Attempt<X>): Effect.Effect<Ran> =>
        Effect.flatMap(outcomeAt(job, attempt, policy, clock.unsafeCurrentTimeMillis()), (outcome) => {
          pending.push({ job, outcome, extra: attempt.extra })
          const ran = { outcome, after: attempt._tag === "Done" ? attempt.after : undefined }
          return kind.metric === undefined
            ? Effect.succeed(ran)
            : Effect.as(Metrics.attempted(botId, kind.metric, outcome.status), ran)
        })
      /** Attempts the job and keeps its outcome; not cut short past the executor's `interruptible` part. */
      const run = (job: J, bot: StoredBot) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.flatMap(kind.attempt(job, bot, bots, restore), (attempt) => keep(job, attempt))
        )
      /**
       * Attempts jobs from `from` on with `attemptNow`, each done one kept at once, until one is not (blocked,
       * not attemptable so, failed, or with an `after`): that one is left to the fiber. Interrupting it cancels
       * the attempt under way, whose outcome is then not kept.
       */
      const runNow = (attemptNow: NonNullable<Kind<J, X>["attemptNow"]>, from: number) =>
        Effect.async<Stopped<X>>((resume) => {
          let cancel: (() => void) | undefined
          const next = (i: number): void => {
            const job = batch[i]
            if (job === undefined || blocked(job) !== undefined) return resume(Effect.succeed({ next: i, attempt: undefined }))
            let settled = false
            const begun = attemptNow(job, bots(botId)!, bots, (attempt) => {
              settled = true
              cancel = undefined
              if (attempt._tag !== "Done" || attempt.after !== undefined) return resume(Effect.succeed({ next: i, attempt }))
              pending.push({ job, outcome: { status: "done", at: doneAt(clock.unsafeCurrentTimeMillis()) }, extra: attempt.extra })
              if (kind.metric !== undefined) Metrics.unsafeAttempted(botId, kind.metric, "done")
              next(i + 1)
            })
            if (begun === undefined) resume(Effect.succeed({ next: i, attempt: undefined }))
            else if (!settled) cancel = begun
          }
          next(from)
          return Effect.sync(() => cancel?.())
        })
      return Effect.gen(function*() {
        let direct = kind.recordEach ? undefined : kind.attemptNow
        for (let i = 0; i < batch.length; i++) {
          let attempted: Attempt<X> | undefined
          if (direct !== undefined) {
            const stopped = yield* runNow(direct, i)
            if (stopped.next === batch.length) break
            i = stopped.next
            attempted = stopped.attempt
          }
          const job = batch[i]!
          let ran: Ran
          if (attempted === undefined) {
            const block = blocked(job)
            if (block !== undefined) return block
            direct = undefined
            ran = yield* run(job, bots(botId)!)
          } else {
            ran = yield* Effect.uninterruptible(keep(job, attempted))
          }
          const { after, outcome } = ran
          if (outcome.status === "dead") {
            yield* Effect.logWarning(`${kind.name}: dead-lettered`).pipe(
              Effect.annotateLogs({ ...kind.annotations(job), error: outcome.last_error })
            )
          }
          if (kind.recordEach || after !== undefined) yield* record
          if (after !== undefined) yield* after
          if (outcome.status === "pending") return "failed" as const
        }
        return "drained" as const
      }).pipe(
        Effect.tap(() => record),
        Effect.onInterrupt(() => Effect.ignoreLogged(record))
      )
    }

    return Effect.gen(function*() {
      while (true) {
        if (!holdsAt(clock.unsafeCurrentTimeMillis())) return Option.none()
        const batch = yield* kind.line(botId, batchSize)
        const bot = bots(botId)
        if (batch.length === 0 || bot === undefined || !kind.runs(bot)) return Option.none()
        const result = yield* runBatch(batch)
        if (Duration.isDuration(result)) return Option.some(result)
        if (result === "stopped" || (result === "drained" && batch.length < batchSize)) return Option.none()
      }
    })
  }).pipe(
    Effect.catchAll((e) =>
      Effect.logError(`${kind.name}: failed`, e.cause).pipe(Effect.as(Option.some(Duration.seconds(1))))
    )
  )
