import { Deferred, Duration, Effect, Exit, Fiber, FiberId, Runtime } from "effect"

/** A wait that ends when it is released or when its deadline passes, whichever comes first. */
export interface Wait {
  /** Ends the wait now; later calls do nothing. */
  readonly release: () => void
  /** Succeeds once the wait ended. */
  readonly await: Effect.Effect<void>
}

/**
 * Waits bounded by a duration, all timed by one fiber of the scope on the Effect clock, instead of a
 * fiber and a timer for each: a wait begun costs a deferred and a place in a heap of deadlines.
 */
export interface Deadlines {
  /** A wait that ends at the latest `after` from now: the duration `make` was given, unless one is passed. */
  readonly begin: (after?: Duration.DurationInput) => Wait
}

interface Entry {
  readonly at: number
  readonly deferred: Deferred.Deferred<void>
  /** Its place in the heap; -1 once it left it. */
  index: number
}

/** Deadlines `after` from each `begin` unless it says otherwise; the fiber ends with the scope. */
export const make = (after: Duration.DurationInput) =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    const wait = Duration.toMillis(after)
    /** The pending waits, a binary min-heap on their deadlines. */
    const heap: Array<Entry> = []

    const place = (entry: Entry, index: number) => {
      heap[index] = entry
      entry.index = index
    }

    const siftUp = (index: number) => {
      const entry = heap[index]!
      while (index > 0) {
        const parent = (index - 1) >> 1
        if (heap[parent]!.at <= entry.at) break
        place(heap[parent]!, index)
        index = parent
      }
      place(entry, index)
    }

    const siftDown = (index: number) => {
      const entry = heap[index]!
      while (true) {
        const left = 2 * index + 1
        if (left >= heap.length) break
        const right = left + 1
        const child = right < heap.length && heap[right]!.at < heap[left]!.at ? right : left
        if (heap[child]!.at >= entry.at) break
        place(heap[child]!, index)
        index = child
      }
      place(entry, index)
    }

    const remove = (entry: Entry) => {
      const index = entry.index
      entry.index = -1
      const last = heap.pop()!
      if (last === entry) return
      place(last, index)
      if (index > 0 && heap[(index - 1) >> 1]!.at > last.at) siftUp(index)
      else siftDown(index)
    }

    const end = (entry: Entry) => {
      if (entry.index === -1) return
      remove(entry)
      Deferred.unsafeDone(entry.deferred, Exit.void)
    }

    /** When the sweeping fiber wakes next: `Infinity` while it waits for a first wait. */
    let wakesAt = Infinity
    /** Completed by `begin` while the heap is empty and the fiber waits for a wait. */
    let idle: Deferred.Deferred<void> | undefined
    let closed = false
    /** Which sweeping fiber is the current one: one replaced stops at its next step. */
    let generation = 0

    const sweep = (mine: number) =>
      Effect.gen(function*() {
        while (mine === generation) {
          const now = clock.unsafeCurrentTimeMillis()
          while (heap.length > 0 && heap[0]!.at <= now) end(heap[0]!)
          const next = heap[0]
          if (next === undefined) {
            wakesAt = Infinity
            idle = Deferred.unsafeMake<void>(FiberId.none)
            yield* Deferred.await(idle)
          } else {
            wakesAt = next.at
            yield* Effect.sleep(Duration.millis(next.at - now))
          }
        }
      })
    const runtime = yield* Effect.runtime<never>()
    let sweeper = Runtime.runFork(runtime)(sweep(generation))
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return Fiber.interrupt(sweeper)
      })
    )

    /**
     * Makes the fiber wake by `at`: it is woken when it waits for a first wait, and replaced when it sleeps past
     * `at` (a shorter wait than those before; waits of one duration never need it).
     */
    const wakeBy = (at: number) => {
      if (at >= wakesAt || closed) return
      if (idle !== undefined) {
        Deferred.unsafeDone(idle, Exit.void)
        idle = undefined
      } else {
        sweeper.unsafeInterruptAsFork(FiberId.none)
        sweeper = Runtime.runFork(runtime)(sweep(++generation))
      }
      wakesAt = at
    }

    const begin = (duration?: Duration.DurationInput): Wait => {
      const at = clock.unsafeCurrentTimeMillis() + (duration === undefined ? wait : Duration.toMillis(duration))
      const entry: Entry = { at, deferred: Deferred.unsafeMake(FiberId.none), index: heap.length }
      heap.push(entry)
      siftUp(entry.index)
      wakeBy(at)
      return { release: () => end(entry), await: Deferred.await(entry.deferred) }
    }
    return { begin } satisfies Deadlines
  })
