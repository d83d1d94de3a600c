import { Duration, Effect, Queue } from "effect"
import { SearchStore } from "../stores/SearchStore.js"
import { Events } from "./Events.js"

/** How long new messages gather before the index takes them in, so that it takes them many at a time. */
export const defaultDelay = Duration.seconds(1)

/**
 * Keeps the search index close behind the history for drivers that index in batches: after messages are
 * stored, waits `delay`, then takes everything written meanwhile into the index, a step at a time. Searches
 * do not wait for it (they index what is left first); it only keeps that work small.
 */
export const run = (delay: Duration.DurationInput = defaultDelay) =>
  Effect.gen(function*() {
    const store = yield* SearchStore
    const stored = yield* (yield* Events).subscribe("MessagesStored")
    const indexAll = store.indexPending.pipe(
      Effect.repeat({ while: (advanced) => advanced > 0 }),
      Effect.catchAllCause((cause) => Effect.logWarning("could not update the search index", cause))
    )
    return yield* Queue.take(stored).pipe(
      Effect.zipRight(Effect.sleep(delay)),
      Effect.zipRight(Queue.takeAll(stored)),
      Effect.zipRight(indexAll),
      Effect.forever
    )
  })
