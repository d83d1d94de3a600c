import { Deferred, Duration, Effect, Exit, Fiber, Option } from "effect"

/**
 * One line of a bot's work (its inbox, or one kind of its outbox) that holds a fiber only while it has work.
 * `wake` starts a pass on a fiber of its own, or, while one runs, asks it for another pass; so an idle bot
 * costs no fiber, and a wake is never lost.
 */
export interface Lane {
  /** Runs a pass now, or once the pass in progress ends; a lane waiting for a due job runs at once. */
  wake(): void
  /** Whether no pass runs or waits for a due job: the last one found the line empty. */
  readonly idle: boolean
  /** Interrupts the pass in progress, if any, and waits for it; wakes after this do nothing. */
  readonly stop: Effect.Effect<void>
  /**
   * Lets the pass in progress run to its end, then ends the fiber without another pass (a wait for a due job
   * ends at once); waits for it. Wakes after this do nothing.
   */
  readonly finish: Effect.Effect<void>
}

/**
 * Starts an effect on a fiber of its own, on the scheduler's next turn (not inside the caller's step): a
 * `FiberSet`'s runtime, so every lane ends with its scope.
 */
export type Fork<R> = (
  effect: Effect.Effect<void, never, R>,
  options: { readonly immediate: false }
) => Fiber.RuntimeFiber<void, never>

/**
 * A lane that runs a pass (`pass()`, built as each fiber starts, so an idle lane keeps no effect) until one
 * says the line is empty (`None`), then `idle`, and ends its fiber. A pass that returns `Some(wait)` has a job
 * due later: the fiber sleeps that long, or until woken, and passes again.
 */
export const make = <R>(
  pass: () => Effect.Effect<Option.Option<Duration.Duration>, never, R>,
  idle: Effect.Effect<void, never, R>,
  fork: Fork<R>
): Lane => new FiberLane(pass, idle, fork)

class FiberLane<R> implements Lane {
  private fiber: Fiber.RuntimeFiber<void, never> | undefined = undefined
  private again = false
  private stopped = false
  /** Completed by a wake while the fiber sleeps until a job is due. */
  private waiting: Deferred.Deferred<void> | undefined = undefined

  constructor(
    private readonly pass: () => Effect.Effect<Option.Option<Duration.Duration>, never, R>,
    private readonly onIdle: Effect.Effect<void, never, R>,
    private readonly fork: Fork<R>
  ) {}

  wake(): void {
    if (this.stopped) return
    if (this.fiber === undefined) {
      this.fiber = this.fork(this.run(), { immediate: false })
      return
    }
    this.again = true
    if (this.waiting !== undefined) Deferred.unsafeDone(this.waiting, Exit.void)
  }

  get idle(): boolean {
    return this.fiber === undefined && !this.stopped
  }

  get stop(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.stopped = true
      const running = this.fiber
      this.fiber = undefined
      return running === undefined ? Effect.void : Fiber.interrupt(running)
    })
  }

  get finish(): Effect.Effect<void> {
    return Effect.suspend(() => {
      this.stopped = true
      const running = this.fiber
      this.fiber = undefined
      if (this.waiting !== undefined) Deferred.unsafeDone(this.waiting, Exit.void)
      return running === undefined ? Effect.void : Fiber.await(running)
    })
  }

  /** Whether the fiber ends: no wake came since the pass began. Decided in one step, so no wake falls between. */
  private ends(): boolean {
    if (this.again && !this.stopped) return false
    this.fiber = undefined
    return true
  }

  private run(): Effect.Effect<void, never, R> {
    return Effect.gen(this, function*() {
      const pass = this.pass()
      while (!this.stopped) {
        this.again = false
        const next = yield* pass
        if (this.stopped) return
        if (Option.isSome(next)) {
          if (this.again) continue
          const woken = yield* Deferred.make<void>()
          this.waiting = woken
          if (this.stopped) return
          yield* Effect.raceFirst(Effect.sleep(next.value), Deferred.await(woken))
          this.waiting = undefined
          continue
        }
        yield* this.onIdle
        if (yield* Effect.sync(() => this.ends())) return
      }
    })
  }
}
