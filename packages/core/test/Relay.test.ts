import { assert, describe, it } from "@effect/vitest"
import { Events, Relay } from "@botrelay/core"

const bytes = (text: string) => new TextEncoder().encode(text).length

describe("Relay.pack", () => {
  const events = Array.from({ length: 200 }, (_, i) => Events.Event.UpdatesReceived({ bot_id: i + 1 }))

  it("packs events into as few messages as fit, each within the limit, in order", () => {
    const messages = Relay.pack("i-1", events, 1000)
    assert.isAbove(messages.length, 1)
    for (const message of messages) assert.isAtMost(bytes(message), 1000)
    const unpacked = messages.flatMap((message) => JSON.parse(message).events as Array<{ bot_id: number }>)
    assert.deepStrictEqual(unpacked.map((event) => event.bot_id), events.map((event) => event.bot_id))
    assert.isTrue(messages.every((message) => JSON.parse(message).from === "i-1"))
  })

  it("an event too big for any message becomes a resync, in its place", () => {
    const big = Events.Event.RoutesChanged({
      removed: [],
      added: Array.from({ length: 100 }, (_, i) => ({ source_bot_id: i, target_bot_id: i + 1, enabled: true }))
    })
    const messages = Relay.pack("i-1", [events[0]!, big, events[1]!], 500).map((message) => JSON.parse(message))
    assert.deepStrictEqual(messages, [
      { from: "i-1", events: [{ _tag: "UpdatesReceived", bot_id: 1 }] },
      { from: "i-1", events: [], resync: true },
      { from: "i-1", events: [{ _tag: "UpdatesReceived", bot_id: 2 }] }
    ])
  })
})
