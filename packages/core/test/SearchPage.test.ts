import { assert, describe, it } from "@effect/vitest"
import { SearchPage } from "@botrelay/core"
import { Either, Schema } from "effect"

const decode = Schema.decodeEither(SearchPage.Cursor)

describe("SearchPage.Cursor", () => {
  it("round-trips positions through an opaque string", () => {
    for (const position of [1, 42, 1_000_000, Number.MAX_SAFE_INTEGER]) {
      const cursor = SearchPage.cursorAfter(position)
      assert.match(cursor, /^[A-Za-z0-9_-]+$/)
      assert.notInclude(cursor, String(position))
      assert.deepStrictEqual(decode(cursor), Either.right(position))
    }
  })

  it("refuses what this API did not give out", () => {
    const valid = SearchPage.cursorAfter(7)
    for (const cursor of ["", "7", "abc", "!!!", `${valid}=`, `${valid}A`, valid.slice(1), btoa("p0"), btoa("p-1"),
      btoa("p01"), btoa("p1.5"), btoa("p99999999999999999"), "x".repeat(1000)]) {
      assert.isTrue(Either.isLeft(decode(cursor)), cursor)
    }
  })
})

describe("SearchPage.MixedCursor", () => {
  const decodeMixed = Schema.decodeEither(SearchPage.MixedCursor)

  it("round-trips both positions, 0 for a list not taken from yet", () => {
    for (const position of [{ message: 0, note: 3 }, { message: 42, note: 0 }, { message: Number.MAX_SAFE_INTEGER, note: 7 }]) {
      const cursor = SearchPage.mixedCursorAfter(position)
      assert.match(cursor, /^[A-Za-z0-9_-]+$/)
      assert.deepStrictEqual(decodeMixed(cursor), Either.right(position))
    }
  })

  it("refuses a messages-only cursor and what this API did not give out", () => {
    for (const cursor of [SearchPage.cursorAfter(7), "", "abc", btoa("m1"), btoa("m01n1"), btoa("m1n-1"), btoa("n1m1")]) {
      assert.isTrue(Either.isLeft(decodeMixed(cursor)), cursor)
    }
  })
})
