import { assert, describe, it } from "@effect/vitest"
import { Events, SearchIndexing, SearchStore } from "@botrelay/core"
import { Effect, Layer, TestClock } from "effect"
import * as TestRuntime from "./TestRuntime.js"

/** A store whose index has `waiting` rowids to take in, `step` at a time; counts the steps asked for. */
const batchedStore = (waiting: number, step: number) => {
  const state = { waiting, steps: 0 }
  const store: SearchStore.SearchStoreService = {
    searchMessages: () => Effect.succeed([]),
    searchNotes: () => Effect.succeed([]),
    indexPending: Effect.sync(() => {
      state.steps++
      const advanced = Math.min(step, state.waiting)
      state.waiting -= advanced
      return advanced
    })
  }
  return { state, layer: Layer.succeed(SearchStore.SearchStore, store) }
}

describe("SearchIndexing", () => {
  it.scoped("after messages are stored, waits the delay, then indexes everything waiting, a step at a time", () => {
    const { state, layer } = batchedStore(12_000, 5_000)
    return Effect.gen(function*() {
      const events = yield* Events.Events
      yield* Effect.forkScoped(SearchIndexing.run("1 second"))
      yield* TestRuntime.followed
      assert.strictEqual(state.steps, 0, "nothing before messages are stored")
      yield* events.publish(Events.Event.MessagesStored({ bot_id: 1, messages: [] }))
      yield* events.publish(Events.Event.MessagesStored({ bot_id: 1, messages: [] }))
      yield* TestRuntime.followed
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(state.steps, 0, "the delay gathers messages")
      yield* TestClock.adjust("1 millis")
      yield* TestRuntime.followed
      assert.deepStrictEqual(state, { waiting: 0, steps: 4 }, "5,000 + 5,000 + 2,000, then a step that found none")
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(state.steps, 4, "both events were taken in one round")
    }).pipe(Effect.provide(Layer.merge(layer, Events.layer)))
  })
})
