import { Effect, Metric, MetricBoundaries } from "effect"

/** The outbox kinds metrics and the status tell apart: a third kind is one more entry. */
export const outboxKinds = ["backend", "route", "bridge"] as const
export type OutboxKind = (typeof outboxKinds)[number]

/** `botrelay_updates_received_total{bot_id}`: updates committed to a bot's inbox. */
export const updatesReceived = Metric.counter("botrelay_updates_received_total", {
  description: "Updates received from Telegram and committed to the inbox",
  incremental: true
})

/** `botrelay_updates_delivered_total{bot_id}`: updates a bot's backend accepted. */
export const updatesDelivered = Metric.counter("botrelay_updates_delivered_total", {
  description: "Updates delivered to the bot's backend (a 2xx answer)",
  incremental: true
})

/** `botrelay_outbox_retries_total{bot_id,kind}`: failed outbox attempts left for a retry. */
export const outboxRetries = Metric.counter("botrelay_outbox_retries_total", {
  description: "Outbox attempts that failed and were scheduled again",
  incremental: true
})

/** `botrelay_sse_clients`: live event streams open on this instance. */
export const sseClients = Metric.counter("botrelay_sse_clients", {
  description: "Live event streams (SSE) open on this instance"
})

/** `botrelay_http_requests_total{method,route,status}`. */
export const httpRequests = Metric.counter("botrelay_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

/** `botrelay_http_request_duration_seconds{method,route,status}`. */
export const httpDuration = Metric.histogram(
  "botrelay_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]),
  "How long HTTP requests took to answer, in seconds"
)

/** Tagged metrics made once per label set, so the per-update path allocates nothing. */
const cached = <M>(make: (key: string) => M) => {
  const made = new Map<string, M>()
  return (key: string): M => {
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(key)
      made.set(key, metric)
    }
    return metric
  }
}

const receivedOf = cached((botId) => updatesReceived.pipe(Metric.tagged("bot_id", botId)))
const deliveredOf = cached((botId) => updatesDelivered.pipe(Metric.tagged("bot_id", botId)))
const retriesOf = cached((key) => {
  const [botId, kind] = key.split(" ") as [string, string]
  return outboxRetries.pipe(Metric.tagged("bot_id", botId), Metric.tagged("kind", kind))
})

/** Counts `n` updates committed to a bot's inbox. */
export const received = (botId: number, n: number): Effect.Effect<void> =>
  n === 0 ? Effect.void : Metric.incrementBy(receivedOf(String(botId)), n)

/** Counts an outbox attempt's outcome: a delivery to the backend done, or a failure left for a retry. */
export const attempted = (botId: number, kind: OutboxKind, outcome: "done" | "pending" | "dead"): Effect.Effect<void> =>
  outcome === "pending"
    ? Metric.increment(retriesOf(`${botId} ${kind}`))
    : outcome === "done" && kind === "backend"
    ? Metric.increment(deliveredOf(String(botId)))
    : Effect.void

/** One more (1) or one fewer (-1) live event stream. */
export const sseClient = (change: 1 | -1): Effect.Effect<void> => Metric.incrementBy(sseClients, change)

const requestsOf = cached((key) => {
  const [method, route, status] = key.split(" ") as [string, string, string]
  return httpRequests.pipe(Metric.tagged("method", method), Metric.tagged("route", route), Metric.tagged("status", status))
})
const durationsOf = cached((key) => {
  const [method, route, status] = key.split(" ") as [string, string, string]
  return httpDuration.pipe(Metric.tagged("method", method), Metric.tagged("route", route), Metric.tagged("status", status))
})

/** Counts an answered HTTP request: `route` is its template (see `RouteTemplate`), never its path. */
export const httpRequest = (method: string, route: string, status: number, seconds: number): Effect.Effect<void> => {
  const key = `${method} ${route} ${status}`
  return Effect.zipRight(Metric.increment(requestsOf(key)), Metric.update(durationsOf(key), seconds))
}
