import { Context, Effect } from "effect"

/** How an update reached Botrelay. */
export type Source = "polling" | "webhook"

/** What one delivery attempt ended with: the backend's HTTP status, or why there was none. */
export type AttemptOutcome =
  | { readonly status: number }
  | { readonly error: string }

/** The span of one delivery attempt while it runs. */
export interface AttemptSpan {
  /** The W3C `traceparent` header naming the attempt, for the backend. */
  readonly traceparent: string
  readonly end: (outcome: AttemptOutcome) => Effect.Effect<void>
}

/**
 * The trace of each update, from ingress to its deliveries, across fibers, restarts and instances: every
 * span of an update is named by its bot and update id alone, so nothing is carried with it. Off by default,
 * when the runtime skips it altogether (`enabled` false); a host that exports traces provides one.
 */
export interface UpdateTracerService {
  readonly enabled: boolean
  /** Records updates committed to the inbox: the root span of each and its ingress span, from `startedAt` (ms) until now. */
  readonly received: (
    botId: number,
    updateIds: ReadonlyArray<number>,
    source: Source,
    startedAt: number
  ) => Effect.Effect<void>
  /** Records the processing of updates by the pipeline, from `startedAt` (ms) until now. */
  readonly processed: (botId: number, updateIds: ReadonlyArray<number>, startedAt: number) => Effect.Effect<void>
  /** Starts the span of a delivery attempt (`attempt` counts from 1). */
  readonly attempt: (
    botId: number,
    updateId: number,
    deliveryId: number,
    attempt: number
  ) => Effect.Effect<AttemptSpan>
}

/** No tracing: what the runtime uses unless a host provides a tracer. */
export const off: UpdateTracerService = {
  enabled: false,
  received: () => Effect.void,
  processed: () => Effect.void,
  attempt: () => Effect.succeed({ traceparent: "", end: () => Effect.void })
}

/** The tracer of updates; `off` unless provided. */
export class UpdateTracer extends Context.Reference<UpdateTracer>()("@botrelay/core/UpdateTracer", {
  defaultValue: (): UpdateTracerService => off
}) {}
