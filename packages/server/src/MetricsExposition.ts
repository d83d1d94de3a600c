import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as Resource from "@effect/opentelemetry/Resource"
import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import {
  AggregationTemporality,
  DataPointType,
  type MetricData,
  type ResourceMetrics
} from "@opentelemetry/sdk-metrics"
import { ValueType } from "@opentelemetry/api"
import { BacklogStore, Broadcast, Identity, Metrics } from "@botrelay/core"
import { MetricsEndpoint } from "@botrelay/http"
import { Clock, Effect, Layer, Metric, Option, type Redacted } from "effect"

/** A gauge read from storage at each scrape: its name, help text and points (labels and value). */
const gauge = (
  name: string,
  description: string,
  points: ReadonlyArray<readonly [Record<string, string>, number]>,
  at: [number, number]
): MetricData => ({
  dataPointType: DataPointType.GAUGE,
  descriptor: { name, description, unit: "", valueType: ValueType.DOUBLE },
  aggregationTemporality: AggregationTemporality.CUMULATIVE,
  dataPoints: points.map(([attributes, value]) => ({ startTime: at, endTime: at, attributes, value }))
})

/** Seconds from an ISO 8601 time to `now` (milliseconds); 0 for "" (nothing waits). */
const ageSeconds = (since: string, now: number) => since === "" ? 0 : Math.max(0, (now - Date.parse(since)) / 1000)

/**
 * The metrics as Prometheus text 0.0.4: this instance's counters and histograms (Effect metrics named
 * `botrelay_*`, through `@effect/opentelemetry` and the OpenTelemetry Prometheus serializer, without scope or
 * target info, so the names and labels are exactly Botrelay's), and the gauges read from storage at each
 * scrape (`BacklogStore`, one query): outbox depth, oldest pending and dead per bot and kind, pipeline lag per
 * bot, leases per instance. Without shared storage (SQLite) this instance holds the lease of every bot not
 * disabled.
 */
export const layer = (
  token: Redacted.Redacted<string> | undefined
): Layer.Layer<MetricsEndpoint.Exposition, never, BacklogStore.BacklogStore | Broadcast.Broadcast | Identity.Identity> =>
  Layer.effect(
    MetricsEndpoint.Exposition,
    Effect.gen(function*() {
      const producer = yield* OtelMetrics.makeProducer.pipe(Effect.provide(Resource.layerEmpty))
      const serializer = new PrometheusSerializer("", false, undefined, true, true)
      const store = yield* BacklogStore.BacklogStore
      const shared = (yield* Broadcast.Broadcast).shared
      const self = (yield* Identity.Identity).id

      const storageGauges = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const backlog = yield* store.read(new Date(now).toISOString())
        const at: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1e6]
        const outbox = (value: (o: BacklogStore.OutboxBacklog) => number) =>
          backlog.outbox.map((o) => [{ bot_id: String(o.bot_id), kind: o.kind }, value(o)] as const)
        const leases = shared
          ? backlog.leases.map((l) => [{ instance_id: l.instance_id }, l.count] as const)
          : [[{ instance_id: self }, backlog.bots.filter((b) => !b.disabled).length] as const]
        return [
          gauge(
            "botrelay_pipeline_lag_seconds",
            "Age of the oldest update received and not processed yet, per bot (0: none waits)",
            backlog.bots.map((b) => [{ bot_id: String(b.bot_id) }, ageSeconds(b.oldest_inbox_at, now)] as const),
            at
          ),
          gauge("botrelay_outbox_depth", "Outbox jobs waiting, per bot and kind", outbox((o) => o.depth), at),
          gauge(
            "botrelay_outbox_oldest_pending_seconds",
            "Age of the oldest waiting outbox job, per bot and kind (0: none waits)",
            outbox((o) => ageSeconds(o.oldest_pending_at, now)),
            at
          ),
          gauge("botrelay_outbox_dead", "Dead-lettered outbox jobs, per bot and kind", outbox((o) => o.dead), at),
          gauge("botrelay_leases", "Bot leases held, per instance", leases, at)
        ]
      })

      const render = Effect.gen(function*() {
        yield* Metric.incrementBy(Metrics.sseClients, 0)
        const collected = yield* Effect.promise(() => producer.collect())
        const counted = collected.resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)
          .filter((m) => m.descriptor.name.startsWith("botrelay_"))
          .map((m): MetricData => ({ ...m, descriptor: { ...m.descriptor, unit: "" } }))
        const stored = yield* storageGauges.pipe(
          Effect.catchAll((e) => Effect.as(Effect.logWarning("metrics: the backlog could not be read", e.cause), []))
        )
        const metrics: ResourceMetrics = {
          resource: collected.resourceMetrics.resource,
          scopeMetrics: [{ scope: { name: "botrelay" }, metrics: [...counted, ...stored] }]
        }
        return serializer.serialize(metrics)
      })

      return { token: Option.fromNullable(token), render }
    })
  )
