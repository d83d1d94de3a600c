import { Deferred, Duration, Effect, Exit, FiberId } from "effect"

/** A wait that ends when it is released or when its deadline passes, whichever comes first. */
export interface Wait {
  /** Ends the wait now; later calls do nothing. */
  readonly release: () => void
  /** Succeeds once the wait ended. */
  readonly await: Effect.Effect<void>
}

/**
 * Waits bounded by one duration, all timed by one fiber of the scope on the Effect clock, instead of a
 * fiber and a timer for each: a wait begun costs a deferred and a place in line.
 */
export interface Deadlines {
  /** A wait that ends at the latest `after` (the duration `make` was given) from now. */
  readonly begin: () => Wait
}

interface Entry {
  readonly at: number
  readonly deferred: Deferred.Deferred<void>
  ended: boolean
}

/** Deadlines `after` from each `begin`, in the order they begin; the fiber ends with the scope. */
export const make = (after: Duration.DurationInput) =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    const wait = Duration.toMillis(after)
    /** The waits in the order of their deadlines, from `head` on (an index, so that taking one is never a copy). */
    let line: Array<Entry | undefined> = []
    let head = 0
    /** Completed by `begin` while the line is empty and the fiber waits for it. */
    let idle: Deferred.Deferred<void> | undefined

    const first = (): Entry | undefined => line[head]
    const take = (): Entry => {
      const entry = line[head]!
      line[head++] = undefined
      if (head === line.length) {
        line = []
        head = 0
      } else if (head >= 1024 && head * 2 >= line.length) {
        line = line.slice(head)
        head = 0
      }
      return entry
    }

    const end = (entry: Entry) => {
      if (entry.ended) return
      entry.ended = true
      Deferred.unsafeDone(entry.deferred, Exit.void)
    }

    const sweep = Effect.gen(function*() {
      while (true) {
        while (first()?.ended === true) take()
        const next = first()
        if (next === undefined) {
          idle = Deferred.unsafeMake<void>(FiberId.none)
          yield* Deferred.await(idle)
          continue
        }
        const due = next.at - clock.unsafeCurrentTimeMillis()
        if (due > 0) yield* Effect.sleep(Duration.millis(due))
        const now = clock.unsafeCurrentTimeMillis()
        while ((first()?.at ?? Infinity) <= now) end(take())
      }
    })
    yield* Effect.forkScoped(sweep)

    const begin = (): Wait => {
      const entry: Entry = { at: clock.unsafeCurrentTimeMillis() + wait, deferred: Deferred.unsafeMake(FiberId.none), ended: false }
      line.push(entry)
      if (idle !== undefined) {
        Deferred.unsafeDone(idle, Exit.void)
        idle = undefined
      }
      return { release: () => end(entry), await: Deferred.await(entry.deferred) }
    }
    return { begin } satisfies Deadlines
  })
