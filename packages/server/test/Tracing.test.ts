import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { InMemorySpanExporter, type ReadableSpan, SamplingDecision, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { ROOT_CONTEXT, SpanKind, SpanStatusCode } from "@opentelemetry/api"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { FakeTelegram } from "@botrelay/testing"
import * as Config from "../src/Config.js"
import * as Tracing from "../src/Tracing.js"
import { eventually, startServer, storages, type TestServer } from "./Harness.js"

/** A local HTTP server recording every request's method, path, headers and body; `answer` picks each status. */
const receiver = async (answer: (n: number) => number = () => 200) => {
  const requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders; body: Buffer }> = []
  const http: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) })
      res.writeHead(answer(requests.length - 1), { "content-type": "application/json" })
      res.end("{}")
    })
  })
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => http.close(() => resolve()))
  }
}

const attribute = (span: ReadableSpan, key: string) => span.attributes[key]

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const port = (probe.address() as AddressInfo).port
      probe.close(() => resolve(port))
    })
  })

describe.each(storages)("traces (%s)", (storage) => {
  const exporter = new InMemorySpanExporter()
  let fake: FakeTelegram.FakeTelegram
  let server: TestServer
  let backend: Awaited<ReturnType<typeof receiver>>
  let tg: FakeTelegram.FakeBot
  let botId: number
  const hookSecret = "hook-secret-7Qm2xZ9w"
  const password = "correct horse battery staple"
  let webhookSecret = ""

  beforeAll(async () => {
    fake = await FakeTelegram.start()
    backend = await receiver((n) => n === 0 ? 500 : 200)
    const port = await freePort()
    server = await startServer({
      storage,
      telegramApi: fake.apiRoot,
      port,
      publicUrl: `http://127.0.0.1:${port}`,
      extra: Tracing.layer({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
    })
    tg = fake.addBot()
    const added = await server.call("/api/bots/add", {
      body: { token: tg.token, proxy_enabled: true, backend_url: `${backend.url}/hook`, secret_token: hookSecret }
    })
    assert.strictEqual(added.status, 200, added.text)
    botId = added.json.id
  })
  afterAll(async () => {
    await server?.close()
    await backend?.close()
    await fake?.close()
  })

  it("gives each update a trace: its root span, ingress, processing and each delivery attempt, whose traceparent the backend gets", async () => {
    fake.userSends(tg.id, { user: fake.addUser(), text: "traced" })
    await eventually(() => backend.requests.length === 2 || undefined, 10_000)
    const updateId = JSON.parse(backend.requests[1]!.body.toString()).update_id as number
    const ofUpdate = () =>
      exporter.getFinishedSpans().filter((s) => attribute(s, "botrelay.update_id") === updateId && attribute(s, "botrelay.bot_id") === botId)
    await eventually(() => ofUpdate().filter((s) => s.name === "botrelay.delivery").length === 2 || undefined)
    const spans = ofUpdate()
    const root = spans.find((s) => s.name === "botrelay.update")!
    assert.isDefined(root)
    assert.isUndefined(root.parentSpanContext)
    const { spanId, traceId } = Tracing.updateIds(botId, updateId)
    assert.deepInclude(root.spanContext(), { traceId, spanId })
    assert.isTrue(spans.every((s) => s.spanContext().traceId === traceId))
    const children = spans.filter((s) => s !== root)
    assert.sameMembers(children.map((s) => s.name), ["botrelay.ingress", "botrelay.process", "botrelay.delivery", "botrelay.delivery"])
    assert.isTrue(children.every((s) => s.parentSpanContext?.spanId === spanId))
    assert.strictEqual(attribute(children.find((s) => s.name === "botrelay.ingress")!, "botrelay.ingress"), "polling")

    const attempts = children.filter((s) => s.name === "botrelay.delivery")
      .sort((a, b) => Number(attribute(a, "botrelay.attempt")) - Number(attribute(b, "botrelay.attempt")))
    assert.deepStrictEqual(attempts.map((s) => attribute(s, "http.response.status_code")), [500, 200])
    assert.deepStrictEqual(attempts.map((s) => s.status.code), [SpanStatusCode.ERROR, SpanStatusCode.UNSET])
    assert.isTrue(attempts.every((s) => s.kind === SpanKind.CLIENT && typeof attribute(s, "botrelay.delivery_id") === "number"))
    assert.deepStrictEqual(
      backend.requests.map((r) => r.headers["traceparent"]),
      attempts.map((s) => `00-${traceId}-${s.spanContext().spanId}-01`)
    )
  })

  it("gives each request a span named by its route template, with no url.* attribute", async () => {
    exporter.reset()
    assert.strictEqual((await server.call("/api/bots")).status, 200)
    await server.call(`/api/bots/validate?token=${encodeURIComponent(tg.token)}`)
    assert.strictEqual((await server.call("/api/nothing-here")).status, 404)
    await server.call(`/tgapi/bot${tg.token}/getChat`, { body: { chat_id: 1 } })
    const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    await fetch(`${server.baseUrl}/api/health`, { headers: { traceparent: parent } })
    const requests = () => exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER)
    await eventually(() => requests().length >= 5 || undefined)
    const byName = new Map(requests().map((s) => [s.name, s]))
    assert.includeMembers([...byName.keys()], [
      "GET /api/bots",
      "GET /api/bots/validate",
      "GET unmatched",
      "POST /tgapi/bot{token}/{method}",
      "GET /api/health"
    ])
    assert.deepStrictEqual(byName.get("GET /api/bots")!.attributes, {
      "http.request.method": "GET",
      "http.route": "/api/bots",
      "http.response.status_code": 200
    })
    assert.strictEqual(attribute(byName.get("GET unmatched")!, "http.response.status_code"), 404)
    const health = byName.get("GET /api/health")!
    assert.strictEqual(health.spanContext().traceId, "0af7651916cd43dd8448eb211c80319c")
    assert.strictEqual(health.parentSpanContext?.spanId, "b7ad6b7169203331")
    for (const span of exporter.getFinishedSpans()) {
      assert.isFalse(Object.keys(span.attributes).some((key) => key.startsWith("url.")), span.name)
    }
  })

  it("traces updates Telegram posts to a webhook, and the webhook request by its template", async () => {
    const hooked = fake.addBot()
    const added = await server.call("/api/bots/add", { body: { token: hooked.token, manage_enabled: true } })
    assert.strictEqual(added.status, 200, added.text)
    const updated = await server.call("/api/bots/update", { body: { id: added.json.id, webhook_mode: true } })
    assert.strictEqual(updated.status, 200, updated.text)
    const registered = await fake.waitForCall((c) => c.botId === hooked.id && c.method === "setWebhook")
    webhookSecret = registered.params.secret_token as string
    fake.userSends(hooked.id, { user: fake.addUser(), text: "hooked" })
    const ingress = () =>
      exporter.getFinishedSpans().find((s) => s.name === "botrelay.ingress" && attribute(s, "botrelay.bot_id") === added.json.id)
    await eventually(() => ingress(), 10_000)
    assert.strictEqual(attribute(ingress()!, "botrelay.ingress"), "webhook")
    await eventually(() =>
      exporter.getFinishedSpans().some((s) =>
        s.name === "POST /telegram/webhook/{bot_id}" && attribute(s, "http.response.status_code") === 200
      ) || undefined
    )
  })

  it("exports no token, key, secret or password in any span", async () => {
    const created = await server.call("/api/accounts", { body: { username: "tracy", password, role: "admin" } })
    assert.strictEqual(created.status, 200, created.text)
    const login = await server.call("/api/auth/login", { key: null, body: { username: "tracy", password } })
    assert.strictEqual(login.status, 200, login.text)
    await server.call("/api/auth/login", { key: null, body: { username: "tracy", password: `${password}!` } })
    await server.call("/api/bots/add", { body: { token: `${tg.id}:AAbadtokenbadtokenbadtokenbadtoken12` } })
    const key = await server.call("/api/auth/api-keys", { body: { name: "traced", role: "admin" } })
    await server.call("/api/bots", { key: `${key.json.key}x` })
    fake.userSends(tg.id, { user: fake.addUser(), text: "again" })
    await eventually(() => backend.requests.length >= 3 || undefined, 10_000)
    await eventually(() => exporter.getFinishedSpans().some((s) => s.name === "botrelay.delivery") || undefined)
    const exported = JSON.stringify(exporter.getFinishedSpans().map((s) => ({
      name: s.name,
      attributes: s.attributes,
      events: s.events,
      links: s.links,
      status: s.status,
      resource: s.resource.attributes,
      scope: s.instrumentationScope
    })))
    assert.isAbove(exporter.getFinishedSpans().length, 5)
    assert.isAbove(webhookSecret.length, 20)
    const secrets = [tg.token, tg.token.split(":")[1]!, server.adminKey, key.json.key, hookSecret, password, "AAbadtokenbad", webhookSecret]
    for (const secret of secrets) assert.notInclude(exported, secret)
  })
})

describe("OTLP export", () => {
  it("sends spans to OTEL_EXPORTER_OTLP_ENDPOINT over http/protobuf", async () => {
    const collector = await receiver()
    const server = await startServer({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test" }
    })
    try {
      assert.strictEqual((await server.call("/api/bots")).status, 200)
    } finally {
      await server.close()
    }
    await eventually(() => collector.requests.length > 0 || undefined)
    const [request] = collector.requests
    assert.deepInclude(request, { method: "POST", path: "/v1/traces" })
    assert.strictEqual(request!.headers["content-type"], "application/x-protobuf")
    const body = request!.body.toString("latin1")
    for (const text of ["botrelay", "GET /api/bots", "deployment.environment"]) assert.include(body, text)
    await collector.close()
  })
})

describe("OTEL_* settings", () => {
  it("turn export on with an OTLP endpoint, with botrelay's defaults; bad values are refused", () => {
    assert.isUndefined(Config.tracesFromEnv({}))
    assert.deepStrictEqual(Config.tracesFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" }), {
      endpoint: "http://collector:4318/v1/traces",
      serviceName: "botrelay",
      resourceAttributes: {},
      sampler: "parentbased_always_on",
      samplerArg: 1
    })
    assert.deepInclude(
      Config.tracesFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example/otlp",
        OTEL_SERVICE_NAME: "relay-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,team=bots%20and%20more",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25"
      }),
      {
        endpoint: "https://traces.example/otlp",
        serviceName: "relay-eu",
        resourceAttributes: { "deployment.environment": "prod", team: "bots and more" },
        sampler: "parentbased_traceidratio",
        samplerArg: 0.25
      }
    )
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }
    assert.isUndefined(Config.tracesFromEnv({ ...on, OTEL_SDK_DISABLED: "true" }))
    assert.isUndefined(Config.tracesFromEnv({ ...on, OTEL_TRACES_EXPORTER: "none" }))
    const refused: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
      [{ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, /http\/protobuf/],
      [{ ...on, OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER/],
      [{ ...on, OTEL_TRACES_SAMPLER: "sometimes" }, /OTEL_TRACES_SAMPLER/],
      [{ ...on, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, /OTEL_TRACES_SAMPLER_ARG/],
      [{ ...on, OTEL_RESOURCE_ATTRIBUTES: "=x" }, /OTEL_RESOURCE_ATTRIBUTES/]
    ]
    for (const [env, message] of refused) assert.throws(() => Config.fromValues({}, env), Config.ConfigError, message)
    try {
      Config.fromValues({}, { OTEL_EXPORTER_OTLP_ENDPOINT: "ftp://user:hunter2@collector" })
      assert.fail("accepted an ftp endpoint")
    } catch (e) {
      assert.instanceOf(e, Config.ConfigError)
      assert.notInclude(e.message, "hunter2")
    }
  })

  it("samples every span of an update together: the decision rests on the trace id", () => {
    const sampler = Tracing.samplerOf({ sampler: "parentbased_traceidratio", samplerArg: 0.5 })
    const kept = Array.from({ length: 200 }, (_, i) => Tracing.updateIds(1, i).traceId)
      .filter((traceId) => sampler.shouldSample(ROOT_CONTEXT, traceId, "botrelay.update", SpanKind.INTERNAL, {}, []).decision === SamplingDecision.RECORD_AND_SAMPLED)
    assert.isTrue(kept.length > 60 && kept.length < 140, String(kept.length))
    assert.deepStrictEqual(Tracing.updateIds(7, 42), Tracing.updateIds(7, 42))
    assert.notDeepEqual(Tracing.updateIds(7, 42), Tracing.updateIds(42, 7))
  })
})
