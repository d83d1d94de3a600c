import { BotStore, BufferStore, InboxStore, type LongPoll } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect } from "effect"
import { type Runner, t0, t1, t2, botInput, update, completion } from "./Fixtures.js"

/** The conformance tests for the long-poll buffer. */
export const longPollBuffer = (run: Runner): void => {
  const test = run(BotStore.BotStore, InboxStore.InboxStore, BufferStore.BufferStore)
  describe("long-poll buffer", () => {
    const entry = (updateId: number, type = "message", createdAt = t1) => ({
      type,
      payload: `{"update_id":${updateId},"${type}":{"text":"привет 👋","big":123456789012345678901234567890}}`,
      created_at: createdAt
    })

    /** Commits the updates to the bot's inbox and completes them into its buffer. */
    const buffer = (
      storage: InboxStore.InboxStoreService,
      botId: number,
      ...entries: ReadonlyArray<readonly [updateId: number, type?: string, createdAt?: string]>
    ) =>
      Effect.gen(function*() {
        yield* storage.commitUpdates(botId, entries.map(([id]) => update(id)), 0)
        yield* storage.completeUpdates(entries.map(([id, type, createdAt]) =>
          completion(botId, id, { buffer: entry(id, type, createdAt) })
        ))
      })

    const untouched = { allowed_updates: [], trimmed: 0, last_trimmed_at: "" }
    const all = { except: [] } as const
    const read = (storage: BufferStore.BufferStoreService, botId: number, offset = 0, limit = 100) =>
      Effect.map(
        storage.readBuffered(botId, { offset, limit, types: all }),
        (updates) => updates.map((u) => u.update_id)
      )

    test("completeUpdates buffers an update with its completion, once, payload unchanged", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        yield* storage.commitUpdates(a.id, [update(900_000_002), update(900_000_001), update(900_000_003)], 0)
        yield* storage.completeUpdates([
          completion(a.id, 900_000_002, { buffer: entry(900_000_002) }),
          completion(a.id, 900_000_001, { buffer: entry(900_000_001, "callback_query") }),
          completion(a.id, 900_000_003)
        ])
        yield* storage.completeUpdates([completion(a.id, 900_000_002, { buffer: entry(900_000_002, "poll") })])
        assert.deepStrictEqual(yield* storage.readBuffered(a.id, { offset: 0, limit: 100, types: all }), [
          { update_id: 900_000_001, payload: entry(900_000_001, "callback_query").payload },
          { update_id: 900_000_002, payload: entry(900_000_002).payload }
        ])
        assert.strictEqual(yield* storage.countBuffered(a.id), 2)
        assert.strictEqual(yield* storage.countBuffered(b.id), 0)
        assert.deepStrictEqual(yield* read(storage, b.id), [])
        assert.deepStrictEqual((yield* storage.pendingUpdates(a.id, 10)).length, 0)
      }))

    test("readBuffered reads from an offset, by update_id, at most limit, of the types let through", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        yield* buffer(
          storage,
          bot.id,
          [10, "message"],
          [11, "chat_member"],
          [12, "callback_query"],
          [13, "message_reaction"],
          [14, "message"],
          [15, ""]
        )
        assert.deepStrictEqual(yield* read(storage, bot.id), [10, 11, 12, 13, 14, 15])
        assert.deepStrictEqual(yield* read(storage, bot.id, 12), [12, 13, 14, 15])
        assert.deepStrictEqual(yield* read(storage, bot.id, 11, 2), [11, 12])
        assert.deepStrictEqual(yield* read(storage, bot.id, 16), [])
        const typed = (offset: number, limit: number, types: LongPoll.TypeFilter) =>
          Effect.map(storage.readBuffered(bot.id, { offset, limit, types }), (us) => us.map((u) => u.update_id))
        const telegramDefault = { except: ["chat_member", "message_reaction", "message_reaction_count"] }
        assert.deepStrictEqual(yield* typed(0, 100, telegramDefault), [10, 12, 14, 15])
        assert.deepStrictEqual(yield* typed(11, 2, telegramDefault), [12, 14])
        assert.deepStrictEqual(yield* typed(0, 100, { only: ["message"] }), [10, 14])
        assert.deepStrictEqual(yield* typed(0, 100, { only: ["chat_member", "callback_query"] }), [11, 12])
        assert.deepStrictEqual(yield* typed(0, 1, { only: ["message"] }), [10])
        assert.deepStrictEqual(yield* typed(11, 100, { only: ["message"] }), [14])
        assert.deepStrictEqual(yield* typed(0, 100, { only: [] }), [])
        assert.strictEqual(yield* storage.countBuffered(bot.id), 6)
      }))

    test("confirmBuffered, keepNewestBuffered and dropBuffered forget updates and say how many", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const other = yield* storage.insertBot(botInput(2))
        yield* buffer(storage, bot.id, [100], [101], [102], [103], [104], [105])
        yield* buffer(storage, other.id, [100], [101])
        assert.strictEqual(yield* storage.confirmBuffered(bot.id, 1), 0)
        assert.strictEqual(yield* storage.confirmBuffered(bot.id, 102), 2)
        assert.strictEqual(yield* storage.confirmBuffered(bot.id, 102), 0)
        assert.deepStrictEqual(yield* read(storage, bot.id), [102, 103, 104, 105])
        assert.strictEqual(yield* storage.keepNewestBuffered(bot.id, 10), 0)
        assert.strictEqual(yield* storage.keepNewestBuffered(bot.id, 3), 1)
        assert.deepStrictEqual(yield* read(storage, bot.id), [103, 104, 105])
        assert.strictEqual(yield* storage.keepNewestBuffered(bot.id, 1), 2)
        assert.deepStrictEqual(yield* read(storage, bot.id), [105])
        assert.strictEqual(yield* storage.dropBuffered(bot.id), 1)
        assert.strictEqual(yield* storage.dropBuffered(bot.id), 0)
        assert.strictEqual(yield* storage.countBuffered(bot.id), 0)
        assert.deepStrictEqual(yield* read(storage, other.id), [100, 101])
        assert.strictEqual((yield* storage.bufferState(bot.id)).trimmed, 0)
      }))

    test("trimBuffered keeps the newest max_updates and none older than before, and records the trim", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const other = yield* storage.insertBot(botInput(2))
        yield* buffer(storage, bot.id, [1, "message", t0], [2, "message", t0], [3, "message", t1], [4, "message", t1])
        yield* buffer(storage, bot.id, [5, "message", t2], [6, "message", t2], [7, "message", t2])
        yield* buffer(storage, other.id, [1, "message", t0])
        assert.deepStrictEqual(yield* storage.bufferState(bot.id), untouched)

        assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 10, before: t0, at: t1 }), 0)
        assert.deepStrictEqual(yield* storage.bufferState(bot.id), untouched)

        assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 5, before: t0, at: t1 }), 2)
        assert.deepStrictEqual(yield* read(storage, bot.id), [3, 4, 5, 6, 7])
        assert.deepStrictEqual(yield* storage.bufferState(bot.id), { ...untouched, trimmed: 2, last_trimmed_at: t1 })

        assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 4, before: t2, at: t2 }), 2)
        assert.deepStrictEqual(yield* read(storage, bot.id), [5, 6, 7])
        assert.deepStrictEqual(yield* storage.bufferState(bot.id), { ...untouched, trimmed: 4, last_trimmed_at: t2 })

        assert.strictEqual(yield* storage.trimBuffered(bot.id, { max_updates: 1, before: t0, at: t2 }), 2)
        assert.deepStrictEqual(yield* read(storage, bot.id), [7])
        assert.strictEqual((yield* storage.bufferState(bot.id)).trimmed, 6)
        assert.deepStrictEqual(yield* read(storage, other.id), [1])
        assert.deepStrictEqual(yield* storage.bufferState(other.id), untouched)
      }))

    test("allowed_updates are remembered per bot and keep the trims", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const other = yield* storage.insertBot(botInput(2))
        assert.deepStrictEqual((yield* storage.bufferState(bot.id)).allowed_updates, [])
        yield* storage.setAllowedUpdates(bot.id, ["message", "callback_query"])
        assert.deepStrictEqual(yield* storage.bufferState(bot.id), {
          allowed_updates: ["message", "callback_query"],
          trimmed: 0,
          last_trimmed_at: ""
        })
        yield* buffer(storage, bot.id, [1, "message", t0], [2, "message", t1])
        yield* storage.trimBuffered(bot.id, { max_updates: 1, before: t0, at: t2 })
        yield* storage.setAllowedUpdates(bot.id, ["chat_member"])
        assert.deepStrictEqual(yield* storage.bufferState(bot.id), {
          allowed_updates: ["chat_member"],
          trimmed: 1,
          last_trimmed_at: t2
        })
        yield* storage.setAllowedUpdates(bot.id, [])
        assert.deepStrictEqual((yield* storage.bufferState(bot.id)).allowed_updates, [])
        assert.deepStrictEqual((yield* storage.bufferState(other.id)).allowed_updates, [])
      }))

    test("deleteBot removes the bot's buffer and its state", (storage) =>
      Effect.gen(function*() {
        const bot = yield* storage.insertBot(botInput(1))
        const other = yield* storage.insertBot(botInput(2))
        yield* buffer(storage, bot.id, [1], [2])
        yield* buffer(storage, other.id, [1])
        yield* storage.setAllowedUpdates(bot.id, ["message"])
        yield* storage.trimBuffered(bot.id, { max_updates: 1, before: t0, at: t1 })
        assert.isTrue(yield* storage.deleteBot(bot.id))
        assert.strictEqual(yield* storage.countBuffered(bot.id), 0)
        assert.deepStrictEqual(yield* storage.bufferState(bot.id), untouched)
        assert.deepStrictEqual(yield* read(storage, other.id), [1])
      }))
  })
}
