import { Deferred, Duration, Effect, Exit, Fiber, Option } from "effect"

/**
 * One line of a bot's work (its inbox, or one kind of its outbox) that holds a fiber only while it has work.
 * `wake` starts a pass on a fiber of its own, or, while one runs, asks it for another pass; so an idle bot
 * costs no fiber, and a wake is never lost.
 */
export interface Lane {
  /** Runs a pass now, or once the pass in progress ends; a lane waiting for a due job runs at once. */
  readonly wake: () => void
  /** Interrupts the pass in progress, if any, and waits for it; wakes after this do nothing. */
  readonly stop: Effect.Effect<void>
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
 * A lane that runs `pass` until it says the line is empty (`None`), then `idle`, and ends its fiber. A pass
 * that returns `Some(wait)` has a job due later: the fiber sleeps that long, or until woken, and passes again.
 */
export const make = <R>(
  pass: Effect.Effect<Option.Option<Duration.Duration>, never, R>,
  idle: Effect.Effect<void, never, R>,
  fork: Fork<R>
): Lane => {
  let fiber: Fiber.RuntimeFiber<void, never> | undefined
  let again = false
  let stopped = false
  /** Completed by a wake while the fiber sleeps until a job is due. */
  let waiting: Deferred.Deferred<void> | undefined

  /** Whether the fiber ends: no wake came since the pass began. Decided in one step, so no wake falls between. */
  const ends = Effect.sync(() => {
    if (again) return false
    fiber = undefined
    return true
  })

  const run = Effect.gen(function*() {
    while (true) {
      again = false
      const next = yield* pass
      if (Option.isSome(next)) {
        if (again) continue
        const woken = yield* Deferred.make<void>()
        waiting = woken
        yield* Effect.raceFirst(Effect.sleep(next.value), Deferred.await(woken))
        waiting = undefined
        continue
      }
      yield* idle
      if (yield* ends) return
    }
  })

  const wake = () => {
    if (stopped) return
    if (fiber === undefined) {
      fiber = fork(run, { immediate: false })
      return
    }
    again = true
    if (waiting !== undefined) Deferred.unsafeDone(waiting, Exit.void)
  }

  const stop = Effect.suspend(() => {
    stopped = true
    const running = fiber
    fiber = undefined
    return running === undefined ? Effect.void : Fiber.interrupt(running)
  })

  return { wake, stop }
}
