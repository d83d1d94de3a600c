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

    test("the configuration revision is 0 until bumped, then counts each bump, concurrent ones included", (storage) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* storage.readConfigRevision, 0)
        assert.strictEqual(yield* storage.bumpConfigRevision, 1)
        assert.strictEqual(yield* storage.bumpConfigRevision, 2)
        const bumped = yield* Effect.all(Array.from({ length: 10 }, () => storage.bumpConfigRevision), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual([...bumped].sort((a, b) => a - b), [3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
        assert.strictEqual(yield* storage.readConfigRevision, 12)
        yield* storage.writeSettings({ "llm.model": "c" })
        assert.strictEqual(yield* storage.readConfigRevision, 12)
      }))
  })
}
