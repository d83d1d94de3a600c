import { Events, LlmRouter, LlmSettings } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { HttpExchange } from "@botrelay/telegram"
import { FetchHttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer, Logger, Redacted } from "effect"
import * as FakeLlm from "../src/FakeLlm.js"

const key = "sk-test-0123456789abcdef"
const secretText = "my card number is 4111 1111 1111 1111"

const question = (text = secretText): LlmRouter.Question => ({
  source_bot: "Support bot: answers customers",
  text,
  candidates: [
    { route_id: 4, description: "billing questions", hint: "invoices, refunds", target: "Billing desk bot" },
    { route_id: 7, description: "technical problems", hint: "", target: "Tech desk bot" }
  ]
})

/** The router and its settings on in-memory storage, logs captured in `logs`. */
const setup = (fake: FakeLlm.FakeLlm | undefined, overrides: LlmSettings.Overrides = {}, timeout_ms = 2000) => {
  const logs: Array<string> = []
  const layer = LlmRouter.layer.pipe(
    Layer.provideMerge(LlmSettings.layer(overrides)),
    Layer.provide(SqliteStores.layer({ filename: ":memory:" })),
    Layer.provide(Events.layer),
    Layer.provide(HttpExchange.layer),
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(Logger.replace(Logger.defaultLogger, Logger.map(Logger.jsonLogger, (line) => void logs.push(line))))
  )
  const run = <A, E>(effect: Effect.Effect<A, E, LlmRouter.LlmRouter | LlmSettings.LlmSettings>) =>
    Effect.runPromise(
      Effect.gen(function*() {
        if (fake !== undefined && overrides.base_url === undefined) {
          const settings = yield* LlmSettings.LlmSettings
          yield* settings.update({ base_url: fake.baseUrl, model: "gpt-test", api_key: Redacted.make(key), timeout_ms })
        }
        return yield* effect
      }).pipe(Effect.provide(layer))
    )
  const choose = (q: LlmRouter.Question = question()) => Effect.flatMap(LlmRouter.LlmRouter, (r) => r.choose(q))
  return { logs, run, choose }
}

const withFake = async <A>(f: (fake: FakeLlm.FakeLlm) => Promise<A>) => {
  const fake = await FakeLlm.start()
  try {
    return await f(fake)
  } finally {
    await fake.close()
  }
}

const assertClean = (logs: ReadonlyArray<string>) => {
  for (const line of logs) {
    assert.notInclude(line, key)
    assert.notInclude(line, "4111")
  }
}

describe("LlmRouter.make against a fake OpenAI-compatible endpoint", () => {
  it("asks once with the message, the bot and the candidates, and returns the chosen route", () =>
    withFake(async (fake) => {
      fake.choose(7)
      const { choose, logs, run } = setup(fake)
      assert.deepStrictEqual(await run(choose()), [7])
      assert.strictEqual(fake.requests.length, 1)
      const request = fake.requests[0]!
      assert.strictEqual(request.method, "POST")
      assert.strictEqual(request.path, "/v1/chat/completions")
      assert.strictEqual(request.authorization, `Bearer ${key}`)
      assert.strictEqual(request.json.model, "gpt-test")
      assert.strictEqual(request.json.temperature, 0)
      assert.deepStrictEqual(request.json.response_format, { type: "json_object" })
      const [system, user] = request.json.messages
      assert.strictEqual(system.role, "system")
      assert.include(system.content, "route_ids")
      const asked = JSON.parse(user.content)
      assert.strictEqual(asked.message, secretText)
      assert.strictEqual(asked.source_bot, "Support bot: answers customers")
      assert.deepStrictEqual(asked.routes, question().candidates)
      assertClean(logs)
    }))

  it("returns [] when the model chooses none", () =>
    withFake(async (fake) => {
      fake.chooseNone()
      const { choose, run } = setup(fake)
      assert.deepStrictEqual(await run(choose()), [])
      assert.strictEqual(fake.requests.length, 1)
    }))

  it("accepts several ids, numeric strings and a fenced answer, in candidate order without repeats", () =>
    withFake(async (fake) => {
      fake.answerContent("```json\n{\"route_ids\": [\"7\", 4, 7]}\n```")
      const { choose, run } = setup(fake)
      assert.deepStrictEqual(await run(choose()), [4, 7])
    }))

  it("gives up at the timeout, once, and logs why", () =>
    withFake(async (fake) => {
      fake.answerAfter(3000, FakeLlm.choosing(4))
      const { choose, logs, run } = setup(fake, {}, 200)
      const started = Date.now()
      assert.deepStrictEqual(await run(choose()), [])
      assert.isBelow(Date.now() - started, 2000)
      assert.strictEqual(fake.requests.length, 1)
      const warning = logs.find((line) => line.includes("no llm route fires"))
      assert.isDefined(warning)
      assert.include(warning, "no answer within")
      assertClean(logs)
    }))

  it("treats garbage, non-JSON content, a wrong shape and HTTP errors as no choice", () =>
    withFake(async (fake) => {
      fake.answerRaw(200, "<html>garbage</html>")
      fake.answerContent("I think route 4 fits")
      fake.answerContent("{\"route\": 4}")
      fake.answerContent("{\"route_ids\": [4.5]}")
      fake.answerRaw(500, "{\"error\":{\"message\":\"overloaded\"}}")
      fake.answerRaw(401, "{\"error\":{\"message\":\"bad key\"}}")
      const { choose, logs, run } = setup(fake)
      for (let i = 0; i < 6; i++) assert.deepStrictEqual(await run(choose()), [])
      assert.strictEqual(fake.requests.length, 6)
      const warnings = logs.filter((line) => line.includes("no llm route fires"))
      assert.strictEqual(warnings.length, 6)
      assert.include(warnings[0], "not a chat completion")
      assert.include(warnings[1], "route_ids")
      assert.include(warnings[4], "HTTP 500")
      assertClean(logs)
    }))

  it("fires nothing when the model names a route that is not a candidate", () =>
    withFake(async (fake) => {
      fake.choose(4, 99)
      const { choose, logs, run } = setup(fake)
      assert.deepStrictEqual(await run(choose()), [])
      assert.isTrue(logs.some((line) => line.includes("not candidates (99)")))
    }))

  it("makes no request when not configured, without candidates or without text", () =>
    withFake(async (fake) => {
      const unconfigured = setup(undefined)
      assert.deepStrictEqual(await unconfigured.run(unconfigured.choose()), [])
      const noModel = setup(undefined, { base_url: fake.baseUrl })
      assert.deepStrictEqual(await noModel.run(noModel.choose()), [])
      const configured = setup(fake)
      assert.deepStrictEqual(await configured.run(configured.choose({ ...question(), candidates: [] })), [])
      assert.deepStrictEqual(await configured.run(configured.choose(question("  "))), [])
      assert.strictEqual(fake.requests.length, 0)
    }))

  it("sends no Authorization header without a key, and cuts long text", () =>
    withFake(async (fake) => {
      const { choose, run } = setup(fake, { base_url: `${fake.baseUrl}/`, model: "local" })
      assert.deepStrictEqual(await run(choose(question("x".repeat(10_000)))), [])
      const request = fake.requests[0]!
      assert.strictEqual(request.authorization, "")
      assert.strictEqual(request.path, "/v1/chat/completions")
      const asked = JSON.parse(request.json.messages[1].content)
      assert.strictEqual(asked.message.length, LlmRouter.maxTextLength + 1)
    }))
})

describe("LlmSettings", () => {
  it("stores updates, masks the key and clears it with \"\"", () =>
    withFake(async (fake) => {
      const { run } = setup(undefined)
      const settings = Effect.flatMap(LlmSettings.LlmSettings, (s) => Effect.succeed(s))
      const views = await run(Effect.gen(function*() {
        const s = yield* settings
        const before = yield* s.view
        const after = yield* s.update({ base_url: `${fake.baseUrl}/`, model: "m", api_key: Redacted.make(key) })
        const cleared = yield* s.update({ api_key: Redacted.make("") })
        return { before, after, cleared, read: yield* s.view }
      }))
      assert.deepStrictEqual(views.before, {
        base_url: "",
        model: "",
        timeout_ms: LlmSettings.defaultTimeoutMs,
        api_key: "",
        configured: false,
        fixed: []
      })
      assert.deepStrictEqual(views.after, {
        base_url: fake.baseUrl,
        model: "m",
        timeout_ms: LlmSettings.defaultTimeoutMs,
        api_key: "sk-…cdef",
        configured: true,
        fixed: []
      })
      assert.strictEqual(views.cleared.api_key, "")
      assert.isTrue(views.cleared.configured)
      assert.deepStrictEqual(views.read, views.cleared)
    }))

  it("lets fixed values win and refuses to change them", async () => {
    const { run } = setup(undefined, { model: "fixed-model", api_key: Redacted.make("short") })
    const result = await run(Effect.gen(function*() {
      const s = yield* LlmSettings.LlmSettings
      const refused = yield* Effect.either(s.update({ model: "other", timeout_ms: 500 }))
      const changed = yield* s.update({ timeout_ms: 500 })
      return { refused, changed }
    }))
    assert.isTrue(Either.isLeft(result.refused))
    if (Either.isLeft(result.refused)) {
      assert.deepStrictEqual(result.refused.left._tag === "LlmSettingFixed" && result.refused.left.fields, ["model"])
    }
    assert.deepStrictEqual(result.changed, {
      base_url: "",
      model: "fixed-model",
      timeout_ms: 500,
      api_key: "***",
      configured: false,
      fixed: ["api_key", "model"]
    })
  })
})
