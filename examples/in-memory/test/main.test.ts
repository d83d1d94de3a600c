import { assert, it } from "vitest"
import { Effect } from "effect"
import { program } from "../src/main.js"

it("sends through a bot and keeps the history, with no network", async () => {
  const history = await Effect.runPromise(program)
  assert.strictEqual(history.length, 1)
  assert.strictEqual(history[0]!.text, "Hello from Botrelay")
  assert.strictEqual(history[0]!.direction, "out")
})
