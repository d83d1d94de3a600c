import { Clock, Effect } from "effect"

/** The current time as an ISO 8601 string, from the Effect clock (so tests can move it). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())
