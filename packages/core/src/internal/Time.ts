import { Clock, Effect } from "effect"

/**
 * A time's ISO 8601 string that keeps the last one it made: for a caller that asks for the same instant over and
 * over (each caller its own, so that two callers' instants do not take turns).
 */
export const isoCached = (): (ms: number) => string => {
  let last = Number.NaN
  let iso = ""
  return (ms) => {
    if (ms !== last) {
      last = ms
      iso = new Date(ms).toISOString()
    }
    return iso
  }
}

/** The current time as an ISO 8601 string, from the Effect clock (so tests can move it). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, isoCached())

/** The current time in Unix seconds, from the Effect clock. */
export const nowSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
