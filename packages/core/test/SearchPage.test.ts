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
