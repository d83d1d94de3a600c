import { Effect, Metric, MetricBoundaries, MetricKey, MetricLabel } from "effect"
import type { OutboxKind } from "../domain/Status.js"

export type { OutboxKind } from "../domain/Status.js"

/** `botrelay_updates_received_total{bot_id}`: updates committed to a bot's inbox. */
export const updatesReceived = MetricKey.counter("botrelay_updates_received_total", {
  description: "Updates received from Telegram and committed to the inbox",
  incremental: true
})

/** `botrelay_updates_delivered_total{bot_id}`: updates a bot's backend accepted. */
export const updatesDelivered = MetricKey.counter("botrelay_updates_delivered_total", {
  description: "Updates delivered to the bot's backend (a 2xx answer)",
  incremental: true
})

/** `botrelay_outbox_retries_total{bot_id,kind}`: failed outbox attempts left for a retry. */
export const outboxRetries = MetricKey.counter("botrelay_outbox_retries_total", {
  description: "Outbox attempts that failed and were scheduled again",
  incremental: true
})

/** `botrelay_sse_clients`: live event streams open on this instance. */
export const sseClients = Metric.fromMetricKey(MetricKey.counter("botrelay_sse_clients", {
  description: "Live event streams (SSE) open on this instance"
}))

/** `botrelay_http_requests_total{method,route,status}`. */
export const httpRequests = MetricKey.counter("botrelay_http_requests_total", {
  description: "HTTP requests answered, by method, route template and status",
  incremental: true
})

/** `botrelay_http_request_duration_seconds{method,route,status}`. */
export const httpDuration = MetricKey.histogram(
  "botrelay_http_request_duration_seconds",
  MetricBoundaries.fromIterable([0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]),
  "How long HTTP requests took to answer, in seconds"
)

const labelsOf = (labels: Readonly<Record<string, string>>) => Object.entries(labels).map(([k, v]) => MetricLabel.make(k, v))

/**
 * One series of a counter, its labels in its key: each update then finds its hook at once (a metric tagged
 * with `Metric.tagged` looks its hook up again, building a new key, on every update).
 */
export const counterSeries = (
  key: MetricKey.MetricKey.Counter<number>,
  labels: Readonly<Record<string, string>>
): Metric.Metric.Counter<number> => Metric.fromMetricKey(MetricKey.taggedWithLabels(key, labelsOf(labels)))

/** One series of a histogram, its labels in its key (see `counterSeries`). */
export const histogramSeries = (
  key: MetricKey.MetricKey.Histogram,
  labels: Readonly<Record<string, string>>
): Metric.Metric.Histogram<number> => Metric.fromMetricKey(MetricKey.taggedWithLabels(key, labelsOf(labels)))

/** Series made once per label set (a string key), so the per-update path allocates nothing. */
export const cached = <M>(make: (key: string) => M): (key: string) => M => {
  const made = new Map<string, M>()
  return (key) => {
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(key)
      made.set(key, metric)
    }
    return metric
  }
}

const receivedOf = cached((botId) => counterSeries(updatesReceived, { bot_id: botId }))
const deliveredOf = cached((botId) => counterSeries(updatesDelivered, { bot_id: botId }))
const retriesOf = cached((key) => {
  const [botId, kind] = key.split(" ") as [string, string]
  return counterSeries(outboxRetries, { bot_id: botId, kind })
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

/** `attempted`, at once and outside any fiber. */
export const unsafeAttempted = (botId: number, kind: OutboxKind, outcome: "done" | "pending" | "dead"): void => {
  if (outcome === "pending") retriesOf(`${botId} ${kind}`).unsafeUpdate(1, [])
  else if (outcome === "done" && kind === "backend") deliveredOf(String(botId)).unsafeUpdate(1, [])
}

/** One more (1) or one fewer (-1) live event stream. */
export const sseClient = (change: 1 | -1): Effect.Effect<void> => Metric.incrementBy(sseClients, change)

const httpOf = cached((key) => {
  const [method, route, status] = key.split(" ") as [string, string, string]
  const labels = { method, route, status }
  return { requests: counterSeries(httpRequests, labels), duration: histogramSeries(httpDuration, labels) }
})

/**
 * Counts an answered HTTP request, at once and outside any fiber (it runs once per request): `route` is its
 * template (see `RouteTemplate`), never its path.
 */
export const unsafeHttpRequest = (method: string, route: string, status: number, seconds: number): void => {
  const { duration, requests } = httpOf(`${method} ${route} ${status}`)
  requests.unsafeUpdate(1, [])
  duration.unsafeUpdate(seconds, [])
}
