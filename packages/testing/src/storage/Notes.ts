import { type Note, NoteStore, SearchQuery, SearchStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Either, Effect, Option } from "effect"
import type { Runner } from "./Fixtures.js"

const note = (chatId: number, text: string, at: number, fields: Partial<Note.NoteRecordInput> = {}): Note.NoteRecordInput => ({
  bot_id: 1,
  chat_id: chatId,
  author_id: 7,
  author_name: "Alice",
  text,
  created_at: at,
  updated_at: at,
  ...fields
})

const terms = (q: string): SearchQuery.Terms =>
  Either.getOrElse(SearchQuery.parse(q), (problem) => assert.fail(`${q}: ${problem}`))

/** The conformance tests for notes and their search. */
export const notes = (run: Runner): void => {
  const test = run(NoteStore.NoteStore)
  const searched = run(NoteStore.NoteStore, SearchStore.SearchStore)
  describe("notes", () => {
    test("insertNote assigns ids; findNote, updateNote and deleteNote", (storage) =>
      Effect.gen(function*() {
        const first = yield* storage.insertNote(note(-100, "hello", 1000))
        assert.deepStrictEqual(first, { id: 1, ...note(-100, "hello", 1000) })
        assert.deepStrictEqual(yield* storage.findNote(1), Option.some(first))
        const updated = yield* storage.updateNote(1, "hello again", 1010)
        assert.deepStrictEqual(updated, Option.some({ ...first, text: "hello again", updated_at: 1010 }))
        assert.isTrue(Option.isNone(yield* storage.updateNote(99, "x", 1)))
        assert.isTrue(yield* storage.deleteNote(1))
        assert.isFalse(yield* storage.deleteNote(1))
        assert.isTrue(Option.isNone(yield* storage.findNote(1)))
        assert.strictEqual((yield* storage.insertNote(note(-100, "next", 1020))).id, 2)
      }))

    test("listNotes: one chat of one bot, newest first, at most limit", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertNote(note(5, "a", 100))
        const b = yield* storage.insertNote(note(5, "b", 300))
        const c = yield* storage.insertNote(note(5, "c", 300))
        yield* storage.insertNote(note(6, "other chat", 200))
        yield* storage.insertNote(note(5, "other bot", 200, { bot_id: 2 }))
        assert.deepStrictEqual(yield* storage.listNotes(1, 5, 10), [c, b, a])
        assert.deepStrictEqual(yield* storage.listNotes(1, 5, 2), [c, b])
        assert.deepStrictEqual(yield* storage.listNotes(1, 7, 10), [])
      }))

    searched("searchNotes finds words of notes, newest first, in step with edits and deletes", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertNote(note(5, "Refund approved", 100))
        const b = yield* storage.insertNote(note(6, "refund denied", 200))
        yield* storage.insertNote(note(5, "refund elsewhere", 300, { bot_id: 2 }))
        const search = (q: string, filters: Partial<SearchStore.NoteSearch> = {}) =>
          storage.searchNotes({ terms: terms(q), bot_ids: [1], limit: 10, ...filters }).pipe(
            Effect.map((found) => found.map((f) => [f.position, f.note.id, f.note.highlight]))
          )
        assert.deepStrictEqual(yield* search("refund"), [
          [b.id, b.id, "<mark>refund</mark> denied"],
          [a.id, a.id, "<mark>Refund</mark> approved"]
        ])
        assert.deepStrictEqual((yield* search("refund", { chat_id: 5 })).map((r) => r[1]), [a.id])
        assert.deepStrictEqual((yield* search("refund", { before: b.id })).map((r) => r[1]), [a.id])
        assert.deepStrictEqual((yield* search("refund", { from: 150, to: 250 })).map((r) => r[1]), [b.id])
        assert.deepStrictEqual((yield* search("refund", { bot_ids: undefined })).length, 3)
        assert.deepStrictEqual(yield* search("refund", { bot_ids: [] }), [])
        assert.deepStrictEqual((yield* search("appr*")).map((r) => r[1]), [a.id])
        yield* storage.updateNote(a.id, "chargeback", 400)
        assert.deepStrictEqual((yield* search("approved")), [])
        assert.deepStrictEqual((yield* search("chargeback")).map((r) => r[1]), [a.id])
        yield* storage.deleteNote(b.id)
        assert.deepStrictEqual((yield* search("denied")), [])
      }))
  })
}
