import { Clock, Context, Duration, Effect, Layer } from "effect"
import { TooManyAttempts } from "../domain/Account.js"

/** When failed logins block further attempts. */
export interface Options {
  /** Failures for one username (regardless of case) within `window` that block it. */
  readonly perUsername: number
  /** Failures from one address within `window` that block it. */
  readonly perIp: number
  readonly window: Duration.DurationInput
  /** The most usernames, and the most addresses, remembered at once. */
  readonly maxEntries: number
}

/** 5 per username or 20 per address within 15 minutes; 10 000 of each remembered. */
export const defaults: Options = { perUsername: 5, perIp: 20, window: Duration.minutes(15), maxEntries: 10_000 }

/**
 * Slows password guessing. Failures are counted in this instance's memory only: behind several instances
 * each counts its own. Callers check before a login, then report its outcome; a refused (429) attempt is
 * not a failure.
 */
export interface LoginThrottleService {
  /** Fails while the username or the address has too many recent failures. */
  readonly check: (username: string, ip: string) => Effect.Effect<void, TooManyAttempts>
  readonly fail: (username: string, ip: string) => Effect.Effect<void>
  /** Forgets the username's failures. */
  readonly succeed: (username: string) => Effect.Effect<void>
}

/** Slows password guessing; in memory, per instance. */
export class LoginThrottle extends Context.Tag("@botrelay/core/LoginThrottle")<LoginThrottle, LoginThrottleService>() {}

const userKey = (username: string) => username.trim().toLowerCase()

/** Failure times per key, oldest first, at most `limit` of them (the newest). */
const counter = (limit: number, windowMs: number, maxEntries: number) => {
  const failures = new Map<string, Array<number>>()
  const recent = (key: string, now: number): Array<number> => {
    const times = failures.get(key)
    if (times === undefined) return []
    while (times.length > 0 && times[0]! <= now - windowMs) times.shift()
    if (times.length === 0) failures.delete(key)
    return times
  }
  return {
    /** Milliseconds until the key may try again; 0 when it may now. */
    blockedFor: (key: string, now: number): number => {
      const times = recent(key, now)
      return times.length >= limit ? times[0]! + windowMs - now : 0
    },
    add: (key: string, now: number) => {
      const times = recent(key, now)
      failures.delete(key)
      failures.set(key, [...times, now].slice(-limit))
      if (failures.size <= maxEntries) return
      for (const stale of [...failures.keys()]) recent(stale, now)
      for (const oldest of failures.keys()) {
        if (failures.size <= maxEntries) break
        failures.delete(oldest)
      }
    },
    clear: (key: string) => void failures.delete(key)
  }
}

/** Builds the throttle; times come from the Effect clock. */
export const make = (options: Partial<Options> = {}): Effect.Effect<LoginThrottleService> =>
  Effect.sync(() => {
    const { maxEntries, perIp, perUsername, window } = { ...defaults, ...options }
    const windowMs = Duration.toMillis(window)
    const users = counter(perUsername, windowMs, maxEntries)
    const ips = counter(perIp, windowMs, maxEntries)
    return LoginThrottle.of({
      check: (username, ip) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const wait = Math.max(users.blockedFor(userKey(username), now), ips.blockedFor(ip, now))
          return wait <= 0
            ? Effect.void
            : Effect.fail(new TooManyAttempts({ retry_after_seconds: Math.max(1, Math.ceil(wait / 1000)) }))
        }),
      fail: (username, ip) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          users.add(userKey(username), now)
          ips.add(ip, now)
        }),
      succeed: (username) => Effect.sync(() => users.clear(userKey(username)))
    })
  })

/** The throttle as a layer. */
export const layer = (options: Partial<Options> = {}): Layer.Layer<LoginThrottle> =>
  Layer.effect(LoginThrottle, make(options))
