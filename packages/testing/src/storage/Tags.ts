import { TagStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { type Runner, t0, t1, tagInput, ids } from "./Fixtures.js"

/** The conformance tests for chat tags. */
export const tags = (run: Runner): void => {
  const test = run(TagStore.TagStore)
  describe("tags", () => {
    test("upsertTag assigns ids from 1 and keeps id and created_at on reassignment", (storage) =>
      Effect.gen(function*() {
        const first = yield* storage.upsertTag(tagInput(-100, 42, "vip", { color: "#f00", created_at: t0 }))
        assert.deepStrictEqual(first, { id: 1, ...tagInput(-100, 42, "vip", { color: "#f00", created_at: t0 }) })
        const again = yield* storage.upsertTag(
          tagInput(-100, 42, "vip", { color: "gold", username: "alice_new", created_at: t1 })
        )
        assert.deepStrictEqual(again, { ...first, color: "gold", username: "alice_new" })
        assert.deepStrictEqual(yield* storage.findTag(first.id), Option.some(again))
        const otherTag = yield* storage.upsertTag(tagInput(-100, 42, "admin"))
        const otherUser = yield* storage.upsertTag(tagInput(-100, 43, "vip"))
        const otherChat = yield* storage.upsertTag(tagInput(-200, 42, "vip"))
        const otherBot = yield* storage.upsertTag(tagInput(-100, 42, "vip", { bot_id: 2 }))
        assert.deepStrictEqual([otherTag.id, otherUser.id, otherChat.id, otherBot.id], [2, 3, 4, 5])
        assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100 })), [1, 2, 3, 5])
        assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100, bot_id: 1 })), [1, 2, 3])
        assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100, bot_id: 2, user_id: 42 })), [5])
        assert.deepStrictEqual(ids(yield* storage.listTags({ chat_id: -100, bot_id: 3 })), [])
      }))

    test("listTags filters by chat and optionally user, ordered by id", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.upsertTag(tagInput(1, 10, "z"))
        const b = yield* storage.upsertTag(tagInput(1, 11, "a"))
        const c = yield* storage.upsertTag(tagInput(2, 10, "m"))
        const d = yield* storage.upsertTag(tagInput(1, 10, "b"))
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: 1 }), [a, b, d])
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: 1, user_id: 10 }), [a, d])
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: 2, user_id: 10 }), [c])
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: 2, user_id: 11 }), [])
        assert.deepStrictEqual(yield* storage.listTags({ chat_id: 3 }), [])
        assert.deepStrictEqual(yield* storage.listTags({}), [a, b, c, d])
        assert.deepStrictEqual(yield* storage.listTags({ user_id: 10 }), [a, c, d])
      }))

    test("findTag and deleteTag", (storage) =>
      Effect.gen(function*() {
        const tag = yield* storage.upsertTag(tagInput(1, 10, "x"))
        assert.isTrue(Option.isNone(yield* storage.findTag(tag.id + 1)))
        assert.isTrue(yield* storage.deleteTag(tag.id))
        assert.isFalse(yield* storage.deleteTag(tag.id))
        assert.isTrue(Option.isNone(yield* storage.findTag(tag.id)))
        const reassigned = yield* storage.upsertTag(tagInput(1, 10, "x"))
        assert.strictEqual(reassigned.id, 2)
      }))
  })
}
