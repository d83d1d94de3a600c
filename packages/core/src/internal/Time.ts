import { Clock, Effect } from "effect"

let isoMillis = Number.NaN
let iso = ""

/** The time as an ISO 8601 string; the string of the last time asked for is kept, so that one instant is made once. */
export const isoAt = (ms: number): string => {
  if (ms !== isoMillis) {
    isoMillis = ms
    iso = new Date(ms).toISOString()
  }
  return iso
}

/** The current time as an ISO 8601 string, from the Effect clock (so tests can move it). */
export const nowIso: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, isoAt)

/** The current time in Unix seconds, from the Effect clock. */
export const nowSeconds: Effect.Effect<number> = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))
