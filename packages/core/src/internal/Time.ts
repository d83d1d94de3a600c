import { Clock, Effect } from "effect"

/** The current time as an ISO 8601 string, from the Effect clock (so tests can move it). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** The current time in Unix seconds, from the Effect clock. */
export const nowSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
