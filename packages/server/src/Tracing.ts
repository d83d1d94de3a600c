import { createHash } from "node:crypto"
import * as Resource from "@effect/opentelemetry/Resource"
import * as EffectOtel from "@effect/opentelemetry/Tracer"
import { UpdateTracer } from "@botrelay/core"
import { RequestSpans } from "@botrelay/http"
import * as Otel from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import { resourceFromAttributes } from "@opentelemetry/resources"
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  SamplingDecision,
  type SpanProcessor,
  TraceIdRatioBasedSampler
} from "@opentelemetry/sdk-trace-base"
import { Clock, Effect, Layer } from "effect"

/** What the tracer exports and how: the processors spans go to, the sampler, the resource. */
export interface Options {
  readonly spanProcessors: ReadonlyArray<SpanProcessor>
  /** `parentbased_always_on` by default. */
  readonly sampler?: Sampler | undefined
  /** `botrelay` by default. */
  readonly serviceName?: string | undefined
  readonly serviceVersion?: string | undefined
  readonly resourceAttributes?: Readonly<Record<string, string>> | undefined
}

/** The trace settings of `OTEL_*` variables the server reads (the exporter reads its own: endpoint, headers, timeout). */
export interface Settings {
  /** Where spans are POSTed: the traces endpoint as set, or `/v1/traces` under the general one. */
  readonly endpoint: string
  readonly serviceName: string
  readonly resourceAttributes: Readonly<Record<string, string>>
  readonly sampler: "always_on" | "always_off" | "traceidratio" | "parentbased_always_on" | "parentbased_always_off" | "parentbased_traceidratio"
  readonly samplerArg: number
}

/** The sampler a setting names. */
export const samplerOf = (settings: Pick<Settings, "sampler" | "samplerArg">): Sampler => {
  switch (settings.sampler) {
    case "always_on":
      return new AlwaysOnSampler()
    case "always_off":
      return new AlwaysOffSampler()
    case "traceidratio":
      return new TraceIdRatioBasedSampler(settings.samplerArg)
    case "parentbased_always_on":
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplerArg) })
  }
}

/**
 * The trace id of an update and the span id of its root span: the first 24 bytes of SHA-256 of the bot
 * and update ids, so every instance, before and after a restart, names the same trace without storing it.
 */
export const updateIds = (botId: number, updateId: number): { readonly traceId: string; readonly spanId: string } => {
  const digest = createHash("sha256").update(`botrelay.update ${botId} ${updateId}`).digest("hex")
  return { traceId: digest.slice(0, 32), spanId: digest.slice(32, 48) }
}

/** Random ids, except for the span started while `next` is set: an update's root span. */
class UpdateIdGenerator implements IdGenerator {
  next: { readonly traceId: string; readonly spanId: string } | undefined = undefined
  private readonly random = new RandomIdGenerator()
  generateTraceId = () => this.next?.traceId ?? this.random.generateTraceId()
  generateSpanId = () => this.next?.spanId ?? this.random.generateSpanId()
}

/** The W3C `traceparent` of a span. */
export const traceparent = (context: Otel.SpanContext): string =>
  `00-${context.traceId}-${context.spanId}-0${context.traceFlags & Otel.TraceFlags.SAMPLED}`

/** The update tracer on an OpenTelemetry tracer whose id generator is `ids`. */
const updateTracer = (
  tracer: Otel.Tracer,
  ids: UpdateIdGenerator,
  sampler: Sampler
): UpdateTracer.UpdateTracerService => {
  const attributesOf = (botId: number, updateId: number) => ({
    "botrelay.bot_id": botId,
    "botrelay.update_id": updateId
  })

  /** The root span of the update, as the parent of spans started after it ended, maybe on another instance. */
  const rootOf = (botId: number, updateId: number) => {
    const { spanId, traceId } = updateIds(botId, updateId)
    const sampled = sampler.shouldSample(Otel.ROOT_CONTEXT, traceId, "botrelay.update", Otel.SpanKind.INTERNAL, {}, [])
      .decision === SamplingDecision.RECORD_AND_SAMPLED
    return Otel.trace.setSpanContext(Otel.ROOT_CONTEXT, {
      traceId,
      spanId,
      traceFlags: sampled ? Otel.TraceFlags.SAMPLED : Otel.TraceFlags.NONE,
      isRemote: true
    })
  }

  const startRoot = (botId: number, updateId: number, startTime: number) => {
    ids.next = updateIds(botId, updateId)
    try {
      return tracer.startSpan(
        "botrelay.update",
        { root: true, startTime, attributes: attributesOf(botId, updateId) },
        Otel.ROOT_CONTEXT
      )
    } finally {
      ids.next = undefined
    }
  }

  return {
    enabled: true,
    received: (botId, updateIds, source, startedAt) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          for (const updateId of updateIds) {
            const root = startRoot(botId, updateId, startedAt)
            tracer.startSpan("botrelay.ingress", {
              startTime: startedAt,
              attributes: { ...attributesOf(botId, updateId), "botrelay.ingress": source, "botrelay.batch_size": updateIds.length }
            }, Otel.trace.setSpan(Otel.ROOT_CONTEXT, root)).end(now)
            root.end(now)
          }
        })),
    processed: (botId, updateIds, startedAt) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          for (const updateId of updateIds) {
            tracer.startSpan("botrelay.process", {
              startTime: startedAt,
              attributes: { ...attributesOf(botId, updateId), "botrelay.batch_size": updateIds.length }
            }, rootOf(botId, updateId)).end(now)
          }
        })),
    attempt: (botId, updateId, deliveryId, attempt) =>
      Effect.flatMap(Clock.currentTimeMillis, (startTime) =>
        Effect.sync(() => {
          const span = tracer.startSpan("botrelay.delivery", {
            kind: Otel.SpanKind.CLIENT,
            startTime,
            attributes: {
              ...attributesOf(botId, updateId),
              "botrelay.delivery_id": deliveryId,
              "botrelay.attempt": attempt,
              "http.request.method": "POST"
            }
          }, rootOf(botId, updateId))
          let ended = false
          return {
            traceparent: traceparent(span.spanContext()),
            end: (outcome: UpdateTracer.AttemptOutcome) =>
              Effect.flatMap(Clock.currentTimeMillis, (now) =>
                Effect.sync(() => {
                  if (ended) return
                  ended = true
                  if ("status" in outcome) {
                    span.setAttribute("http.response.status_code", outcome.status)
                    if (outcome.status < 200 || outcome.status >= 300) {
                      span.setAttribute("error.type", String(outcome.status))
                      span.setStatus({ code: Otel.SpanStatusCode.ERROR, message: `HTTP ${outcome.status}` })
                    }
                  } else {
                    span.setAttribute("error.type", "request")
                    span.setStatus({ code: Otel.SpanStatusCode.ERROR, message: outcome.error })
                  }
                  span.end(now)
                }))
          }
        }))
  }
}

/**
 * Traces through OpenTelemetry: Effect's spans (API requests, see RequestSpans, and the services'), and each
 * update's trace (see UpdateTracer.UpdateTracer) with its ids from `updateIds`. Spans are flushed when the layer
 * is released, after the server it is provided to stopped.
 */
export const layer = (options: Options): Layer.Layer<EffectOtel.OtelTracer | UpdateTracer.UpdateTracer | RequestSpans.Enabled> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const ids = new UpdateIdGenerator()
    const sampler = options.sampler ?? new ParentBasedSampler({ root: new AlwaysOnSampler() })
    const resource = {
      serviceName: options.serviceName ?? "botrelay",
      ...(options.serviceVersion === undefined ? {} : { serviceVersion: options.serviceVersion }),
      attributes: { ...options.resourceAttributes }
    }
    const provider = yield* Effect.acquireRelease(
      Effect.sync(() =>
        new BasicTracerProvider({
          resource: resourceFromAttributes(Resource.configToAttributes(resource)),
          idGenerator: ids,
          sampler,
          spanProcessors: [...options.spanProcessors]
        })
      ),
      (provider) =>
        Effect.promise(() => provider.forceFlush().then(() => provider.shutdown())).pipe(
          Effect.timeoutOption(3000),
          Effect.ignoreLogged
        )
    )
    return Layer.mergeAll(
      EffectOtel.layer.pipe(
        Layer.provide(Layer.succeed(EffectOtel.OtelTracerProvider, provider)),
        Layer.provide(Resource.layer(resource))
      ),
      Layer.succeed(UpdateTracer.UpdateTracer, updateTracer(provider.getTracer("botrelay"), ids, sampler)),
      Layer.succeed(RequestSpans.Enabled, true)
    )
  }))

/**
 * Traces exported over OTLP (http/protobuf) as the `OTEL_*` settings say, in batches; the exporter reads the
 * rest of its settings (`OTEL_EXPORTER_OTLP_HEADERS`, `_TIMEOUT`, `_COMPRESSION`...) from the environment itself.
 */
export const otlpLayer = (settings: Settings, serviceVersion?: string) =>
  layer({
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.endpoint }))],
    sampler: samplerOf(settings),
    serviceName: settings.serviceName,
    serviceVersion,
    resourceAttributes: settings.resourceAttributes
  })
