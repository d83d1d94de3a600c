import { Duration } from "effect"

/**
 * Exponential backoff with jitter: attempt 0 waits about `base`, each further attempt doubles it,
 * never beyond `cap`; the wait is drawn from the upper half of that, so retries spread out.
 */
export const delay = (
  attempt: number,
  base: Duration.DurationInput,
  cap: Duration.DurationInput,
  random: () => number = Math.random
): Duration.Duration => {
  const ceiling = Math.min(Duration.toMillis(cap), Duration.toMillis(base) * 2 ** Math.min(attempt, 30))
  return Duration.millis(Math.round(ceiling * (0.5 + random() / 2)))
}
