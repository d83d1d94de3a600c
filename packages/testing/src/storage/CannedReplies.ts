import { CannedReply, CannedReplyStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import type { Runner } from "./Fixtures.js"

const reply = (code: string, fields: Partial<CannedReply.CannedReplyRecordInput> = {}): CannedReply.CannedReplyRecordInput => ({
  code,
  text: `text of ${code}`,
  bot_ids: [],
  created_at: 1000,
  updated_at: 1000,
  ...fields
})

/** The conformance tests for canned replies. */
export const cannedReplies = (run: Runner): void => {
  const test = run(CannedReplyStore.CannedReplyStore)
  describe("canned replies", () => {
    test("insert, find by id and by code ignoring case, list by code, update, delete", (storage) =>
      Effect.gen(function*() {
        const greet = yield* storage.insertCannedReply(reply("greet", { bot_ids: [3, 1, 3] }))
        assert.deepStrictEqual(greet, { id: 1, ...reply("greet", { bot_ids: [1, 3] }) })
        const bye = yield* storage.insertCannedReply(reply("bye"))
        assert.deepStrictEqual(yield* storage.listCannedReplies, [bye, greet])
        assert.deepStrictEqual(yield* storage.findCannedReply(greet.id), Option.some(greet))
        assert.deepStrictEqual(yield* storage.findByCode("GREET"), Option.some(greet))
        assert.isTrue(Option.isNone(yield* storage.findByCode("nope")))
        const updated = yield* storage.updateCannedReply(greet.id, reply("hello", { text: "hi", updated_at: 2000 }))
        assert.deepStrictEqual(updated, Option.some({ id: greet.id, ...reply("hello", { text: "hi", updated_at: 2000 }) }))
        assert.isTrue(Option.isNone(yield* storage.updateCannedReply(99, reply("x"))))
        assert.isTrue(yield* storage.deleteCannedReply(bye.id))
        assert.isFalse(yield* storage.deleteCannedReply(bye.id))
        assert.deepStrictEqual((yield* storage.listCannedReplies).map((r) => r.code), ["hello"])
      }))

    test("a code is unique ignoring case: DuplicateCode on insert and update", (storage) =>
      Effect.gen(function*() {
        yield* storage.insertCannedReply(reply("greet"))
        const other = yield* storage.insertCannedReply(reply("other"))
        const again = yield* Effect.flip(storage.insertCannedReply(reply("GREET")))
        assert.instanceOf(again, CannedReply.DuplicateCode)
        const renamed = yield* Effect.flip(storage.updateCannedReply(other.id, reply("greet")))
        assert.instanceOf(renamed, CannedReply.DuplicateCode)
        assert.deepStrictEqual((yield* storage.listCannedReplies).map((r) => r.code), ["greet", "other"])
      }))
  })
}
