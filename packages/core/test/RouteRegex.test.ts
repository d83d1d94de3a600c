import { assert, describe, it } from "@effect/vitest"
import { Bot, Bots, Errors, Events, Route, RouteRegex, Routes } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { Effect, Exit, Layer, Schema } from "effect"

const refusal = (pattern: string) => {
  const result = Route.normalizeCondition("regex", pattern)
  return result._tag === "Left" ? result.message : undefined
}

const matches = (pattern: string, text: string) => {
  const compiled = RouteRegex.compile(pattern)
  assert.strictEqual(compiled._tag, "Compiled", pattern)
  return compiled._tag === "Compiled" && RouteRegex.test(compiled, text)
}

const refusedWith = (patterns: ReadonlyArray<string>, reason: RegExp) => {
  for (const pattern of patterns) {
    const message = refusal(pattern)
    assert.isDefined(message, pattern)
    assert.match(message, /^condition_value: /, pattern)
    assert.match(message, reason, pattern)
  }
}

describe("route regex syntax", () => {
  it("refuses backreferences", () =>
    refusedWith(["(a)\\1", "(\\w+) \\1", "(?<x>a)\\k<x>", "(.)(.)\\2"], /backreferences .* not supported; .*RE2 syntax/))

  it("refuses lookahead", () =>
    refusedWith(["(?=.*a)(?=.*b)", "foo(?!bar)", "^(?=\\d)", "a(?=b)"], /lookahead \(\?=\.\.\.\) .* not supported/))

  it("refuses lookbehind", () =>
    refusedWith(["(?<=a)b", "(?<!\\$)\\d+", "x(?<=x)"], /lookbehind \(\?<=\.\.\.\) .* not supported; route regexes use RE2 syntax, see docs\/routing.md/))

  it("refuses JavaScript-only escapes and property keys with a hint", () => {
    refusedWith(["\\u0041", "\\u{1F600}"], /\\x\{263A\}/)
    refusedWith(["\\p{Script=Cyrillic}+", "\\p{sc=Han}", "\\P{General_Category=Lu}"], /\\p\{Cyrillic\}/)
  })

  it("refuses what does not parse, with RE2's reason", () =>
    refusedWith(["(", "[a-", "a{2,1}", "*a", "a{1001}"], /not a valid regular expression \(.+\)/))

  it("accepts named groups in both spellings", () => {
    assert.isTrue(matches("(?<order>\\d+)", "order 42"))
    assert.isTrue(matches("(?P<order>\\d+)!", "42!"))
  })

  it("accepts Unicode classes, scripts and negations", () => {
    assert.isTrue(matches("^\\p{Lu}", "Ärger"))
    assert.isFalse(matches("^\\p{Lu}", "ärger"))
    assert.isTrue(matches("\\p{Hangul}{3}", "안녕하세요"))
    assert.isTrue(matches("^\\P{L}+$", "123 !?"))
    assert.isTrue(matches("\\pN", "x1"))
    assert.isTrue(matches("^[\\p{L}\\p{N}]+$", "Straße42"))
    assert.isTrue(matches("^.$", "😀"))
  })

  it("is case-sensitive unless the pattern asks with (?i), which folds Unicode", () => {
    assert.isFalse(matches("hello", "HELLO"))
    assert.isTrue(matches("(?i)hello", "HELLO"))
    assert.isTrue(matches("(?i)привет", "ПРИВЕТ"))
    assert.isTrue(matches("(?i:σοφός)", "ΣΟΦΌΣ"))
    assert.isFalse(matches("(?i:a)b", "AB"))
  })

  it("knows the other RE2 flags and escapes", () => {
    assert.isTrue(matches("(?s)a.b", "a\nb"))
    assert.isFalse(matches("a.b", "a\nb"))
    assert.isTrue(matches("(?m)^b$", "a\nb\nc"))
    assert.isTrue(matches("\\x{263A}", "☺"))
    assert.isTrue(matches("\\Qa.b\\E", "a.b"))
    assert.isFalse(matches("\\Qa.b\\E", "axb"))
  })
})

describe("route regex limits", () => {
  it("refuses a pattern whose program is over maxProgramSize, naming the limit", () => {
    assert.isUndefined(refusal("[a-c]{0,30}zz"))
    assert.strictEqual(RouteRegex.cost("[a-c]{0,30}zz"), RouteRegex.maxProgramSize)
    for (const pattern of ["[a-c]{0,31}zz", "\\p{L}{0,900}x", "(?:\\p{L}|\\p{N}){0,400}$", "(?:ab){2}".repeat(40)]) {
      assert.match(refusal(pattern) ?? "", /too large \(RE2 program size \d+, at most 64\)/, pattern)
    }
  })

  it("refuses a pattern longer than maxPatternLength", () => {
    const long = "[" + "a".repeat(RouteRegex.maxPatternLength) + "]"
    assert.match(refusal(long) ?? "", /at most 1000 characters/)
  })

  it("the schemas refuse what normalizeCondition refuses", () => {
    const body = { source_bot_id: 1, target_bot_id: 2, action: "copy", condition_type: "regex" }
    assert.strictEqual(Schema.decodeUnknownSync(Route.NewRoute)({ ...body, condition_value: "a+" }).condition_value, "a+")
    assert.throws(() => Schema.decodeUnknownSync(Route.NewRoute)({ ...body, condition_value: "(?<=a)b" }), /lookbehind/)
  })
})

describe("patterns that were catastrophic on a backtracking engine", () => {
  const hangul = "한".repeat(RouteRegex.textLimit)
  const as = "a".repeat(RouteRegex.textLimit)

  it("are accepted and match as they should", () => {
    assert.isFalse(matches("\\P{Lu}*\\P{Lu}{0,7}\\p{Lu}", hangul))
    assert.isTrue(matches("\\P{Lu}*\\P{Lu}{0,7}\\p{Lu}", hangul.slice(1) + "X"))
    assert.isTrue(matches("(a+)+$", as))
    assert.isFalse(matches("(a+)+$", as.slice(1) + "!"))
    assert.isTrue(matches("(\\w+\\s?)*$", "word ".repeat(800) + "!"))
    assert.isFalse(matches("^(\\w+\\s?)*$", "word ".repeat(800) + "!"))
    assert.isFalse(matches(".*.*x", as))
    assert.isTrue(matches(".*.*x", as.slice(1) + "x"))
    assert.isFalse(matches("^.*.*x7", "x".repeat(4000) + "x8"))
  })

  it("200 routes of ^.*.*x<N> cannot all be enabled on one bot", () => {
    const total = Array.from({ length: 200 }, (_, n) => RouteRegex.cost(`^.*.*x${n}`)).reduce((a, b) => a + b, 0)
    assert.isAbove(total, RouteRegex.maxTotalProgramSize)
  })
})

describe("Routes: the per-bot total", () => {
  const services = Layer.mergeAll(Bots.layer, Routes.layer).pipe(
    Layer.provideMerge(SqliteStores.layer({ filename: ":memory:" })),
    Layer.provideMerge(Events.layer)
  )
  const big = "[a-c]{0,23}zz"
  const route = (source: number, target: number, condition_value: string, enabled = true) => ({
    source_bot_id: source,
    target_bot_id: target,
    condition_type: "regex" as const,
    condition_value,
    action: "copy" as const,
    target_chat_id: 0,
    enabled,
    description: ""
  })

  it.effect("add, update and enabling refuse to go over maxTotalProgramSize; other bots are not counted", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const routes = yield* Routes.Routes
      const a = (yield* bots.add(Schema.decodeUnknownSync(Bot.NewBot)({ token: "1:a" }))).id
      const b = (yield* bots.add(Schema.decodeUnknownSync(Bot.NewBot)({ token: "2:b" }))).id
      const full = RouteRegex.maxTotalProgramSize / RouteRegex.cost(big)
      const added = yield* Effect.forEach(Array.from({ length: full }), () => routes.add(route(a, b, big)))
      const before = (yield* routes.list()).length

      const over = yield* Effect.exit(routes.add(route(a, b, "x")))
      assert.isTrue(Exit.isFailure(over))
      const error = yield* Effect.flip(routes.add(route(a, b, "x")))
      assert.instanceOf(error, Errors.InvalidInput)
      assert.deepStrictEqual(error.details.map((d) => d.path), ["condition_value"])
      assert.match(error.message, new RegExp(`bot ${a} would have RE2 program size 1003 in all, over the limit of 1000`))

      const disabled = yield* routes.add(route(a, b, "x", false))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(routes.update({ ...disabled, id: disabled.id, enabled: true }))))
      yield* routes.update({ ...added[0]!, id: added[0]!.id, condition_value: "a" })
      yield* routes.update({ ...disabled, id: disabled.id, enabled: true })
      yield* routes.update({ ...added[1]!, id: added[1]!.id, condition_value: big })
      yield* routes.add(route(b, a, big))
      yield* routes.add({ ...route(a, b, ""), condition_type: "keyword", condition_value: "more" })
      assert.strictEqual((yield* routes.list()).length, before + 3)
    }).pipe(Effect.provide(services)))
})
