import { SettingsStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { type Runner } from "./Fixtures.js"

/** The conformance tests for settings. */
export const settings = (run: Runner): void => {
  const test = run(SettingsStore.SettingsStore)
  describe("settings", () => {
    test("are absent until written, then read back by name", (storage) =>
      Effect.gen(function*() {
        assert.deepStrictEqual(yield* storage.readSettings(["llm.model"]), {})
        assert.deepStrictEqual(yield* storage.readSettings([]), {})
        yield* storage.writeSettings({ "llm.model": "gpt-4o-mini", "llm.base_url": "http://x/v1" })
        assert.deepStrictEqual(yield* storage.readSettings(["llm.model", "llm.api_key"]), {
          "llm.model": "gpt-4o-mini"
        })
        assert.deepStrictEqual(yield* storage.readSettings(["llm.base_url", "llm.model"]), {
          "llm.base_url": "http://x/v1",
          "llm.model": "gpt-4o-mini"
        })
      }))

    test("are replaced, and forgotten when written as undefined", (storage) =>
      Effect.gen(function*() {
        yield* storage.writeSettings({ "llm.model": "a", "llm.api_key": "sk-1" })
        yield* storage.writeSettings({ "llm.model": "b", "llm.api_key": undefined, "llm.timeout_ms": "" })
        assert.deepStrictEqual(yield* storage.readSettings(["llm.model", "llm.api_key", "llm.timeout_ms"]), {
          "llm.model": "b",
          "llm.timeout_ms": ""
        })
      }))
  })
}
