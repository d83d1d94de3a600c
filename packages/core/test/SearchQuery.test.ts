import { assert, describe, it } from "@effect/vitest"
import { SearchQuery } from "@botrelay/core"
import { Either } from "effect"

const parsed = (q: string) => {
  const result = SearchQuery.parse(q)
  if (Either.isLeft(result)) return assert.fail(`${JSON.stringify(q)} was refused: ${result.left}`)
  return result.right.map((term) => `${term.phrase ? `"${term.text}"` : term.text}${term.prefix ? "*" : ""}`)
}

const refusal = (q: string) => {
  const result = SearchQuery.parse(q)
  return Either.isLeft(result) ? result.left : assert.fail(`${JSON.stringify(q)} was accepted`)
}

describe("SearchQuery.parse", () => {
  it("splits words at white space; every word is a term", () => {
    assert.deepStrictEqual(parsed("hello"), ["hello"])
    assert.deepStrictEqual(parsed("  hello   world\tagain\n"), ["hello", "world", "again"])
    assert.deepStrictEqual(parsed("Привет\u00a0мир"), ["Привет", "мир"])
  })

  it("reads \"phrases\" whole, quotes anywhere starting one", () => {
    assert.deepStrictEqual(parsed("\"good morning\" team"), ["\"good morning\"", "team"])
    assert.deepStrictEqual(parsed("a\"b c\"d"), ["a", "\"b c\"", "d"])
    assert.deepStrictEqual(parsed("\"  spaced   out \""), ["\"  spaced   out \""])
  })

  it("a trailing * makes a prefix; any other * is text", () => {
    assert.deepStrictEqual(parsed("deliv*"), ["deliv*"])
    assert.deepStrictEqual(parsed("deliv***"), ["deliv*"])
    assert.deepStrictEqual(parsed("\"good morn\"*"), ["\"good morn\"*"])
    assert.deepStrictEqual(parsed("*deliv"), ["*deliv"])
    assert.deepStrictEqual(parsed("de*liv"), ["de*liv"])
    assert.deepStrictEqual(parsed("\"good\" *"), ["\"good\""])
  })

  it("takes the engine's operators as text", () => {
    assert.deepStrictEqual(parsed("a AND b OR NOT c"), ["a", "AND", "b", "OR", "NOT", "c"])
    assert.deepStrictEqual(parsed("NEAR(a b) -x ^y +z a:b {a b}"), ["NEAR(a", "b)", "-x", "^y", "+z", "a:b", "{a", "b}"])
  })

  it("leaves out terms without a letter or digit", () => {
    assert.deepStrictEqual(parsed("hello - ** 👋 \"?!\" (1)"), ["hello", "(1)"])
    assert.deepStrictEqual(parsed("ⅻ ½ 😀x"), ["ⅻ", "½", "😀x"])
  })

  it("control characters separate words, inside phrases too", () => {
    assert.deepStrictEqual(parsed("a\u0000b"), ["a", "b"])
    assert.deepStrictEqual(parsed("\"a\u0000b\""), ["\"a b\""])
  })

  it("refuses an empty q", () => {
    for (const q of ["", "   ", "\t\n", "\u0000"]) assert.match(refusal(q), /^q must not be empty/)
  })

  it("refuses an unbalanced quote", () => {
    for (const q of ["\"", "a\"b", "\"hello", "\"a\" \"b", "hello\""]) {
      assert.strictEqual(refusal(q), "q has a \" that is not closed: phrases are written \"like this\"", q)
    }
  })

  it("refuses a q with nothing to search for", () => {
    for (const q of ["*", "**", "-", "👋", "\"\"", "\" \"*", "- + ^ :"]) {
      assert.strictEqual(refusal(q), "q must contain a letter or a digit to search for", q)
    }
  })

  it("refuses a q longer than 256 characters, counted in code points after trimming", () => {
    assert.deepStrictEqual(parsed(` ${"x".repeat(256)} `), ["x".repeat(256)])
    assert.deepStrictEqual(parsed("👋".repeat(255) + "a").length, 1)
    assert.strictEqual(refusal("x".repeat(257)), "q must be at most 256 characters")
    assert.strictEqual(refusal("a ".repeat(5000)), "q must be at most 256 characters")
    assert.strictEqual(refusal("\"".repeat(10_000)), "q must be at most 256 characters")
  })
})
