import { Chunk, Duration, Effect, Option, Schedule } from "effect"

/**
 * The one retry policy: waits from `base`, doubling, never beyond `cap`, each drawn from the upper half
 * of that (jitter), so retries of many jobs spread out.
 */
export const schedule = (
  base: Duration.DurationInput,
  cap: Duration.DurationInput
): Schedule.Schedule<Duration.Duration> =>
  Schedule.exponential(base).pipe(
    Schedule.union(Schedule.spaced(cap)),
    Schedule.jitteredWith({ min: 0.5, max: 1 }),
    Schedule.delays
  )

/** Past this many doublings every wait is at the cap, so stepping further changes nothing. */
const maxSteps = 64

/** The wait after `failures` earlier failures (0 for the first): the policy stepped `failures + 1` times. */
export const delay = (
  failures: number,
  base: Duration.DurationInput,
  cap: Duration.DurationInput
): Effect.Effect<Duration.Duration> =>
  Effect.map(
    Schedule.run(schedule(base, cap), 0, Array.from({ length: Math.min(Math.max(0, failures), maxSteps) + 1 })),
    (delays) => Option.getOrElse(Chunk.last(delays), () => Duration.decode(cap))
  )
