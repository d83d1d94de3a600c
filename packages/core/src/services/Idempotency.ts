import { Clock, Context, Duration, Effect, Exit, Layer, Option } from "effect"
import type { StorageError } from "../domain/Errors.js"
import { type Answer, kept, KeyInProgress, KeyReused, retention } from "../domain/IdempotencyKey.js"
import { IdempotencyStore } from "../stores/IdempotencyStore.js"

/** What an idempotent request answers: its answer, and whether it is a replay of the first one's. */
export interface Outcome {
  readonly answer: Answer
  readonly replayed: boolean
}

/** Requests made with an `Idempotency-Key`: the first one runs, the others within `retention` get its answer. */
export interface IdempotencyService {
  /**
   * Runs `answer` for the caller's first request with `key`, keeping its answer (unless `kept` says not to,
   * or it fails), or replays the answer kept for it. `request` is the decoded request as text: the same key
   * with another is `KeyReused`; while the first runs, `KeyInProgress`.
   */
  readonly run: <E, R>(
    caller: string,
    key: string,
    request: string,
    answer: Effect.Effect<Answer, E, R>
  ) => Effect.Effect<Outcome, E | KeyReused | KeyInProgress | StorageError, R>
  /** Deletes the keys older than `retention`; how many. */
  readonly sweep: Effect.Effect<number, StorageError>
}

/** Requests made with an `Idempotency-Key`. */
export class Idempotency extends Context.Tag("@botrelay/core/Idempotency")<Idempotency, IdempotencyService>() {}

const seconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
const retentionSeconds = Duration.toSeconds(retention)

/** Builds the service on the `IdempotencyStore`; times come from Effect's `Clock`. */
export const make: Effect.Effect<IdempotencyService, never, IdempotencyStore> = Effect.map(
  IdempotencyStore,
  (store) =>
    Idempotency.of({
      run: (caller, key, request, answer) =>
        Effect.gen(function*() {
          const now = yield* seconds
          const held = yield* store.claim(caller, key, request, now, now - retentionSeconds)
          if (Option.isSome(held)) {
            if (held.value.request !== request) return yield* Effect.fail(new KeyReused())
            if (held.value.status === 0) return yield* Effect.fail(new KeyInProgress())
            return { answer: { status: held.value.status, body: held.value.body }, replayed: true }
          }
          return yield* Effect.uninterruptibleMask((restore) =>
            restore(answer).pipe(
              Effect.onExit((exit) =>
                Exit.isSuccess(exit) && kept(exit.value.status)
                  ? Effect.ignoreLogged(store.complete(caller, key, exit.value.status, exit.value.body))
                  : Effect.ignoreLogged(store.release(caller, key))
              ),
              Effect.map((a): Outcome => ({ answer: a, replayed: false }))
            )
          )
        }),
      sweep: Effect.flatMap(seconds, (now) => store.sweep(now - retentionSeconds))
    })
)

/** The service on the `IdempotencyStore` the host provides. */
export const layer: Layer.Layer<Idempotency, never, IdempotencyStore> = Layer.effect(Idempotency, make)
