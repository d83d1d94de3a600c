import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Config from "../src/Config.js"
import { assertError, startServer, type TestServer } from "./Harness.js"

const apiKey = "sk-proj-SECRETkey0123456789wxyz"

let server: TestServer
let operatorKey: string

beforeAll(async () => {
  server = await startServer()
  const created = await server.call("/api/auth/api-keys", { body: { name: "desk", role: "operator" } })
  assert.strictEqual(created.status, 200, created.text)
  operatorKey = created.json.key
})
afterAll(async () => {
  await server?.close()
})

const assertNoKey = (server: TestServer, text: string) => {
  assert.notInclude(text, apiKey)
  for (const line of server.logs) assert.notInclude(line, apiKey)
}

describe("the LLM settings API", () => {
  it("starts unconfigured with the default timeout", async () => {
    const reply = await server.call("/api/llm")
    assert.strictEqual(reply.status, 200, reply.text)
    assert.deepStrictEqual(reply.json, {
      base_url: "",
      model: "",
      timeout_ms: 10000,
      api_key: "",
      configured: false,
      fixed: []
    })
  })

  it("updates fields partially, returns the key masked and never logs it", async () => {
    const set = await server.call("/api/llm", {
      body: { base_url: "https://llm.example.com/v1/", api_key: apiKey, model: " gpt-4o-mini " }
    })
    assert.strictEqual(set.status, 200, set.text)
    assert.deepStrictEqual(set.json, {
      base_url: "https://llm.example.com/v1",
      model: "gpt-4o-mini",
      timeout_ms: 10000,
      api_key: "sk-…wxyz",
      configured: true,
      fixed: []
    })
    const timeout = await server.call("/api/llm", { body: { timeout_ms: 2500 } })
    assert.deepStrictEqual(timeout.json, { ...set.json, timeout_ms: 2500 })
    const read = await server.call("/api/llm")
    assert.deepStrictEqual(read.json, timeout.json)
    const unchanged = await server.call("/api/llm", { body: {} })
    assert.deepStrictEqual(unchanged.json, timeout.json)
    assertNoKey(server, `${set.text}${timeout.text}${read.text}`)
  })

  it("refuses bad values with 400 and details, changing nothing", async () => {
    const before = (await server.call("/api/llm")).json
    const cases: Array<[unknown, string]> = [
      [{ base_url: "ftp://llm.example.com" }, "base_url"],
      [{ base_url: "llm.example.com/v1" }, "base_url"],
      [{ timeout_ms: 99 }, "timeout_ms"],
      [{ timeout_ms: 60001 }, "timeout_ms"],
      [{ timeout_ms: 1500.5 }, "timeout_ms"],
      [{ timeout_ms: "2000" }, "timeout_ms"],
      [{ model: "" }, "model"],
      [{ model: "   " }, "model"],
      [{ api_key: "has space" }, "api_key"],
      [{ api_key: 42 }, "api_key"]
    ]
    for (const [body, field] of cases) {
      const reply = await server.call("/api/llm", { body: { model: "other", ...(body as object) } })
      assertError(reply, 400, "invalid_request")
      assert.isTrue(reply.json.details.some((d: any) => d.path === field), `${JSON.stringify(body)}: ${reply.text}`)
    }
    assertError(await server.call("/api/llm", { raw: "{" }), 400, "invalid_json")
    assert.deepStrictEqual((await server.call("/api/llm")).json, before)
  })

  it("clears the key with \"\" and unsets the endpoint with base_url \"\"", async () => {
    const cleared = await server.call("/api/llm", { body: { api_key: "" } })
    assert.strictEqual(cleared.json.api_key, "")
    assert.isTrue(cleared.json.configured)
    const unset = await server.call("/api/llm", { body: { base_url: "" } })
    assert.deepInclude(unset.json, { base_url: "", configured: false })
    await server.call("/api/llm", { body: { base_url: "http://127.0.0.1:9/v1", api_key: apiKey } })
  })

  it("is for admins only: 403 for operators, 401 without a key", async () => {
    assertError(await server.call("/api/llm", { key: operatorKey }), 403, "forbidden")
    assertError(await server.call("/api/llm", { key: operatorKey, body: { model: "x" } }), 403, "forbidden")
    assertError(await server.call("/api/llm", { key: null }), 401, "unauthorized")
    assertError(await server.call("/api/llm", { method: "DELETE" }), 405, "method_not_allowed")
    assert.notStrictEqual((await server.call("/api/llm")).json.model, "x")
  })

  it("is in the OpenAPI document", async () => {
    const spec = (await server.call("/api/openapi.json", { key: null })).json
    assert.containsAllKeys(spec.paths["/api/llm"], ["get", "post"])
  })
})

describe("LLM settings across restarts and from the environment", () => {
  it("keeps API changes on the same database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "botrelay-llm-"))
    try {
      const first = await startServer({ dir })
      const body = { base_url: "http://llm.local/v1", api_key: apiKey, model: "m1", timeout_ms: 700 }
      assert.strictEqual((await first.call("/api/llm", { body })).status, 200)
      await first.close()
      const second = await startServer({ dir })
      try {
        assert.deepStrictEqual((await second.call("/api/llm")).json, {
          base_url: "http://llm.local/v1",
          model: "m1",
          timeout_ms: 700,
          api_key: "sk-…wxyz",
          configured: true,
          fixed: []
        })
        assertNoKey(second, "")
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("lets environment values win, refuses to change them with 409, and stores the others", async () => {
    const dir = mkdtempSync(join(tmpdir(), "botrelay-llm-"))
    try {
      const first = await startServer({ dir })
      await first.call("/api/llm", { body: { base_url: "http://stored/v1", model: "stored-model", timeout_ms: 900 } })
      await first.close()
      const second = await startServer({
        dir,
        flags: { "llm-model": "env-model", "llm-api-key": apiKey, "llm-timeout": "3s" }
      })
      try {
        assert.deepStrictEqual((await second.call("/api/llm")).json, {
          base_url: "http://stored/v1",
          model: "env-model",
          timeout_ms: 3000,
          api_key: "sk-…wxyz",
          configured: true,
          fixed: ["api_key", "model", "timeout_ms"]
        })
        const refused = await second.call("/api/llm", { body: { model: "other", base_url: "http://new/v1" } })
        assertError(refused, 409, "llm_setting_from_env")
        assert.include(refused.json.error, "model")
        assertError(await second.call("/api/llm", { body: { api_key: "" } }), 409, "llm_setting_from_env")
        const changed = await second.call("/api/llm", { body: { base_url: "http://new/v1" } })
        assert.strictEqual(changed.status, 200, changed.text)
        assert.strictEqual(changed.json.base_url, "http://new/v1")
        assertNoKey(second, refused.text)
      } finally {
        await second.close()
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("LLM configuration", () => {
  it("reads env and flags, flags first", () => {
    const env = {
      BOTRELAY_LLM_BASE_URL: "https://api.openai.com/v1/",
      BOTRELAY_LLM_API_KEY: apiKey,
      BOTRELAY_LLM_MODEL: "gpt-4o-mini",
      BOTRELAY_LLM_TIMEOUT: "2500"
    }
    const config = Config.fromValues({}, env)
    assert.strictEqual(config.llmBaseUrl, "https://api.openai.com/v1")
    assert.strictEqual(config.llmModel, "gpt-4o-mini")
    assert.strictEqual(config.llmTimeoutMs, 2500)
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the point: a Redacted's string form must not show the key
    assert.notInclude(String(config.llmApiKey), apiKey)
    assert.strictEqual(Config.fromValues({ "llm-timeout": "5s" }, env).llmTimeoutMs, 5000)
    assert.strictEqual(Config.fromValues({ "llm-timeout": "800ms" }, {}).llmTimeoutMs, 800)
    const unset = Config.fromValues({}, { BOTRELAY_LLM_MODEL: "" })
    assert.deepInclude(unset, {
      llmBaseUrl: undefined,
      llmApiKey: undefined,
      llmModel: undefined,
      llmTimeoutMs: undefined
    })
  })

  it("refuses bad values, naming the setting and never the key", () => {
    for (
      const [flag, value] of [
        ["llm-base-url", "ftp://x"],
        ["llm-timeout", "50"],
        ["llm-timeout", "61s"],
        ["llm-timeout", "1m"],
        ["llm-model", "   "],
        ["llm-api-key", `${apiKey} x`]
      ]
    ) {
      try {
        Config.fromValues({ [flag!]: value! }, {})
        assert.fail(`--${flag} ${value} was accepted`)
      } catch (e) {
        assert.instanceOf(e, Config.ConfigError)
        assert.include(e.message, `--${flag}`)
        assert.notInclude(e.message, apiKey)
      }
    }
  })
})
