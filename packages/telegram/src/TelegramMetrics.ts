import { Metric, MetricBoundaries, MetricKey, MetricLabel } from "effect"

/** `botrelay_telegram_requests_total{method,status}`: Bot API calls by method and Telegram's HTTP status or `network`. */
export const requests = MetricKey.counter("botrelay_telegram_requests_total", {
  description: "Bot API calls made to Telegram, by method and HTTP status (network: no answer)",
  incremental: true
})

/** `botrelay_telegram_request_duration_seconds{method}`: how long Bot API calls took. */
export const duration = MetricKey.histogram(
  "botrelay_telegram_request_duration_seconds",
  MetricBoundaries.fromIterable([0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]),
  "How long Bot API calls to Telegram took, in seconds"
)

/** A method name as a label: the Bot API's names are case-insensitive, so lower case; anything else `other`. */
export const methodLabel = (method: string): string =>
  /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(method) ? method.toLowerCase() : "other"

const requestsOf = new Map<string, Metric.Metric.Counter<number>>()
const durationsOf = new Map<string, Metric.Metric.Histogram<number>>()

const label = (key: string, value: string) => MetricLabel.make(key, value)

/** The series of a method and status, made once: labels in the key, so an update finds its hook at once. */
const requestsFor = (method: string, status: string) => {
  const key = `${method} ${status}`
  let metric = requestsOf.get(key)
  if (metric === undefined) {
    metric = Metric.fromMetricKey(MetricKey.taggedWithLabels(requests, [label("method", method), label("status", status)]))
    requestsOf.set(key, metric)
  }
  return metric
}

const durationFor = (method: string) => {
  let metric = durationsOf.get(method)
  if (metric === undefined) {
    metric = Metric.fromMetricKey(MetricKey.taggedWithLabels(duration, [label("method", method)]))
    durationsOf.set(method, metric)
  }
  return metric
}

/**
 * Records one call at once, outside any fiber: its method, its HTTP status (undefined: no answer) and how long it
 * took, in seconds.
 */
export const unsafeRecord = (method: string, status: number | undefined, seconds: number): void => {
  const label = methodLabel(method)
  requestsFor(label, status === undefined ? "network" : String(status)).unsafeUpdate(1, [])
  durationFor(label).unsafeUpdate(seconds, [])
}
