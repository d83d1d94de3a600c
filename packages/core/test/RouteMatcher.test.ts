import { assert, describe, it } from "@effect/vitest"
import {
  Bot,
  Events,
  Bots,
  Route,
  RouteMatcher,
  RouteRegex,
  Routes,
  RouteStore
} from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { Effect, Layer, Logger, Schema } from "effect"

let nextId = 1
const route = (fields: Partial<Route.Route>): Route.Route => ({
  id: nextId++,
  source_bot_id: 1,
  target_bot_id: 2,
  condition_type: "all",
  condition_value: "",
  action: "copy",
  target_chat_id: 0,
  enabled: true,
  description: "",
  created_at: "2026-01-01T00:00:00.000Z",
  ...fields
})

const message = (text: string, fields: Partial<RouteMatcher.Incoming> = {}): RouteMatcher.Incoming => ({
  text,
  chat_id: -100,
  user_id: 7,
  ...fields
})

const ids = (routes: ReadonlyArray<Route.Route>) => routes.map((r) => r.id)

const match = (compiled: RouteMatcher.Compiled, m: RouteMatcher.Incoming) =>
  Effect.runSync(RouteMatcher.matches(compiled, m))

const fires = (r: Route.Route, m: RouteMatcher.Incoming) => match(RouteMatcher.compile([r]), m).fired.length === 1

const keyword = (value: string, text: string) =>
  fires(route({ condition_type: "keyword", condition_value: value }), message(text))

const regex = (value: string, text: string) =>
  fires(route({ condition_type: "regex", condition_value: value }), message(text))

describe("conditions", () => {
  it("all matches everything, including messages without text", () => {
    assert.isTrue(fires(route({}), message("")))
    assert.isTrue(fires(route({}), message("hi", { user_id: 0 })))
  })

  it("chat_id and user_id take comma-separated lists, with or without spaces", () => {
    const chats = route({ condition_type: "chat_id", condition_value: "-100, 42 ,7" })
    assert.isTrue(fires(chats, message("", { chat_id: -100 })))
    assert.isTrue(fires(chats, message("", { chat_id: 42 })))
    assert.isFalse(fires(chats, message("", { chat_id: 100 })))
    const users = route({ condition_type: "user_id", condition_value: "5, 7" })
    assert.isTrue(fires(users, message("", { user_id: 7 })))
    assert.isFalse(fires(users, message("", { user_id: 6 })))
  })

  it("user_id never matches a channel post without a sender", () => {
    assert.isFalse(fires(route({ condition_type: "user_id", condition_value: "0,7" }), message("x", { user_id: 0 })))
  })

  it("keywords match whole words, case-insensitively, any of the list", () => {
    assert.isTrue(keyword("price", "what's the PRICE?"))
    assert.isTrue(keyword("Price?", "what's the price?"))
    assert.isFalse(keyword("price", "priceless"))
    assert.isFalse(keyword("price", "the unprice"))
    assert.isTrue(keyword("refund, price", "I want a refund."))
    assert.isTrue(keyword(" refund ,price ", "price"))
    assert.isFalse(keyword("refund, price", "refunds and prices"))
    assert.isFalse(keyword("price", ""))
  })

  it("keywords are Unicode-aware: Cyrillic, accents, combining marks, CJK", () => {
    assert.isTrue(keyword("цена", "Какая ЦЕНА?"))
    assert.isFalse(keyword("цена", "бесценный"))
    assert.isFalse(keyword("цен", "цена"))
    assert.isTrue(keyword("café", "Un CAFÉ, s'il vous plaît"))
    assert.isTrue(keyword("café", "un cafe\u0301 noir"))
    assert.isFalse(keyword("cafe", "un cafe\u0301 noir"))
    assert.isFalse(keyword("straße", "straßenbahn"))
    assert.isTrue(keyword("iPhone", "我买了iPhone手机"))
    assert.isTrue(keyword("价格", "这个价格是多少"))
    assert.isTrue(keyword("価格", "この価格は"))
  })

  it("keywords match as case folding does, whatever their first word looks like", () => {
    assert.isTrue(keyword("σοφός", "ΣΟΦΌΣ"))
    assert.isTrue(keyword("σοφόσ", "σοφός"))
    assert.isTrue(keyword("\u00b5g", "5 \u03bcg"))
    assert.isTrue(keyword("stop", "\u017ftop here"))
    assert.isTrue(keyword("İstanbul", "İSTANBUL"))
    assert.isTrue(keyword("東京", "東京都"))
    assert.isTrue(keyword("abc", "東abc"))
    assert.isTrue(keyword("#urgent", "this is #URGENT"))
    assert.isTrue(keyword("kw1, late parcel", "my LATE\nparcel"))
    assert.isFalse(keyword("kw1, late parcel", "lateparcel"))
    assert.isTrue(keyword("e-mail", "send an E-Mail"))
  })

  it("keywords may be phrases with punctuation", () => {
    assert.isTrue(keyword("new order", "a New   Order arrived"))
    assert.isFalse(keyword("new order", "renew orders"))
    assert.isTrue(keyword("c++", "I write C++ daily"))
    assert.isTrue(keyword("a.b", "see a.b now"))
    assert.isFalse(keyword("a.b", "see axb now"))
    assert.isTrue(keyword("(x)", "the (x) case"))
  })

  it("regexes use RE2 syntax, case-sensitively unless (?i), unanchored", () => {
    assert.isTrue(regex("^/start", "/start 123"))
    assert.isFalse(regex("^/start", "say /start"))
    assert.isTrue(regex("order #\\d+", "my order #42 is late"))
    assert.isFalse(regex("Order", "order"))
    assert.isTrue(regex("(?i)Order", "ORDER"))
    assert.isTrue(regex("\\p{Cyrillic}+", "привет"))
    assert.isTrue(regex("^$", ""))
  })

  it("a regex sees only the first 4096 characters", () => {
    const text = "a".repeat(RouteRegex.textLimit) + "needle"
    assert.isFalse(regex("needle", text))
    assert.isTrue(regex("needle", "needle" + text))
  })

  it("llm routes are candidates, not fired, and only for messages with text", () => {
    const compiled = RouteMatcher.compile([route({ condition_type: "llm" })])
    const matched = match(compiled, message("help me"))
    assert.deepStrictEqual(matched.fired, [])
    assert.strictEqual(matched.llmCandidates.length, 1)
    assert.strictEqual(match(compiled, message(" ")).llmCandidates.length, 0)
  })
})

describe("stored regexes", () => {
  it("a stored pattern that is no longer accepted never matches and is reported", () => {
    const stored = route({ condition_type: "regex", condition_value: "(a)\\1" })
    const compiled = RouteMatcher.compile([stored])
    assert.strictEqual(compiled.rejected.length, 1)
    assert.strictEqual(compiled.rejected[0]!.route.id, stored.id)
    assert.match(compiled.rejected[0]!.reason, /backreferences/)
    assert.deepStrictEqual(match(compiled, message("aa")).fired, [])
  })

  it.effect("stored regexes past the bot's total limit never match, in id order", () =>
    Effect.gen(function*() {
      const big = "[a-c]{0,23}zz"
      assert.strictEqual(RouteRegex.cost(big), 50)
      const count = RouteRegex.maxTotalProgramSize / 50 + 2
      const routes = Array.from(
        { length: count },
        (_, i) => route({ id: 1000 + i, condition_type: "regex", condition_value: big })
      )
      const compiled = RouteMatcher.compile(routes)
      assert.deepStrictEqual(compiled.rejected.map((r) => r.route.id), [1000 + count - 2, 1000 + count - 1])
      assert.match(compiled.rejected[0]!.reason, /use 1000 of 1000 program size/)
      assert.strictEqual((yield* RouteMatcher.matches(compiled, message("abczz"))).fired.length, count - 2)
    }))
})

describe("pacing", () => {
  const big = (id: number) => route({ id, condition_type: "regex", condition_value: "[a-c]{0,23}zz" })

  it.effect("yields to the event loop between regexes that together pass the stretch limit", () =>
    Effect.gen(function*() {
      const compiled = RouteMatcher.compile([big(1), route({ id: 2 }), big(3), big(4)])
      let immediates = 0
      setImmediate(() => immediates++)
      const matched = yield* RouteMatcher.matches(compiled, message("abzz"))
      assert.deepStrictEqual(ids(matched.fired), [1, 2, 3, 4])
      assert.strictEqual(immediates, 1)
    }))

  it("a stretch is shared across messages and never yields within one regex's worth of work", () => {
    const compiled = RouteMatcher.compile([big(1)])
    const pace = RouteMatcher.stretch()
    assert.strictEqual(Effect.runSync(RouteMatcher.matches(compiled, message("azz"), pace)).fired.length, 1)
    assert.strictEqual(pace.spent, 50)
    assert.throws(() => Effect.runSync(RouteMatcher.matches(compiled, message("azz"), pace)), /synchronously/)
    const small = RouteMatcher.compile([route({ condition_type: "regex", condition_value: "a" }), route({})])
    const fresh = RouteMatcher.stretch()
    for (let i = 0; i < 20; i++) Effect.runSync(RouteMatcher.matches(small, message("a"), fresh))
    assert.strictEqual(fresh.spent, 20 * RouteRegex.cost("a"))
  })
})

describe("matches", () => {
  it("fires every matching route in id order and ignores disabled ones", () => {
    const routes = [
      route({ id: 30, condition_type: "keyword", condition_value: "hello" }),
      route({ id: 10 }),
      route({ id: 20, enabled: false }),
      route({ id: 25, condition_type: "chat_id", condition_value: "1" }),
      route({ id: 40, condition_type: "regex", condition_value: "^h" })
    ]
    const matched = match(RouteMatcher.compile(routes), message("hello"))
    assert.deepStrictEqual(ids(matched.fired), [10, 30, 40])
    assert.isFalse(matched.dropped)
  })

  it("a matching drop route is the last to fire and drops the update", () => {
    const routes = [
      route({ id: 1 }),
      route({ id: 2, condition_type: "llm" }),
      route({ id: 3, action: "drop", condition_type: "keyword", condition_value: "spam" }),
      route({ id: 4 }),
      route({ id: 5, condition_type: "llm" })
    ]
    const compiled = RouteMatcher.compile(routes)
    const spam = match(compiled, message("buy spam now"))
    assert.deepStrictEqual(ids(spam.fired), [1, 3])
    assert.deepStrictEqual(ids(spam.llmCandidates), [2])
    assert.isTrue(spam.dropped)
    const ham = match(compiled, message("hello"))
    assert.deepStrictEqual(ids(ham.fired), [1, 4])
    assert.deepStrictEqual(ids(ham.llmCandidates), [2, 5])
    assert.isFalse(ham.dropped)
  })

  it("a disabled or non-matching drop route drops nothing", () => {
    const routes = [
      route({ id: 1, action: "drop", enabled: false }),
      route({ id: 2, action: "drop", condition_type: "user_id", condition_value: "9" }),
      route({ id: 3 })
    ]
    const matched = match(RouteMatcher.compile(routes), message("x"))
    assert.deepStrictEqual(ids(matched.fired), [3])
    assert.isFalse(matched.dropped)
  })

  it("resolve merges the model's choice at id positions; a chosen llm drop cuts later routes", () => {
    const routes = [
      route({ id: 1 }),
      route({ id: 2, condition_type: "llm" }),
      route({ id: 3, condition_type: "llm", action: "drop" }),
      route({ id: 4 })
    ]
    const matched = match(RouteMatcher.compile(routes), message("x"))
    assert.deepStrictEqual(ids(RouteMatcher.resolve(matched, []).fired), [1, 4])
    assert.deepStrictEqual(ids(RouteMatcher.resolve(matched, [2, 99]).fired), [1, 2, 4])
    const dropped = RouteMatcher.resolve(matched, [3])
    assert.deepStrictEqual(ids(dropped.fired), [1, 3])
    assert.isTrue(dropped.dropped)
  })
})

describe("RouteSets", () => {
  const warnings: Array<string> = []
  const logger = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(String(message))
    })
  )
  const services = Layer.mergeAll(RouteMatcher.layer, Bots.layer, Routes.layer).pipe(
    Layer.provideMerge(SqliteStores.layer({ filename: ":memory:" })),
    Layer.provideMerge(Events.layer),
    Layer.provide(logger)
  )
  const newBot = (token: string) => Schema.decodeUnknownSync(Bot.NewBot)({ token })

  it.effect("loads a bot's routes once and reloads them after a change", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const routes = yield* Routes.Routes
      const sets = yield* RouteMatcher.RouteSets
      const a = yield* bots.add(newBot("1:a"))
      const b = yield* bots.add(newBot("2:b"))
      const first = yield* routes.add({
        source_bot_id: a.id,
        target_bot_id: b.id,
        condition_type: "keyword",
        condition_value: "hello",
        action: "copy",
        target_chat_id: 0,
        enabled: true,
        description: ""
      })
      const reverse = { source_bot_id: b.id, target_bot_id: a.id, condition_type: "all" as const, condition_value: "" }
      const back = yield* routes.add({ ...first, ...reverse })
      const fired = (text: string) =>
        Effect.map(sets.get(a.id), (set) => match(set.compiled, message(text)).fired)
      const loaded = yield* sets.get(a.id)
      assert.strictEqual(loaded.compiled.routes.length, 1)
      assert.deepStrictEqual([...loaded.inbound], [back.id])
      assert.strictEqual(yield* sets.get(a.id), loaded)
      assert.deepStrictEqual(ids(yield* fired("hello")), [first.id])

      yield* routes.update({ ...first, id: first.id, condition_value: "bye" })
      assert.deepStrictEqual(yield* fired("hello"), [])
      assert.deepStrictEqual(ids(yield* fired("bye")), [first.id])

      yield* routes.update({ ...first, id: first.id, condition_value: "bye", enabled: false })
      assert.deepStrictEqual(yield* fired("bye"), [])
      yield* routes.remove(first.id)
      assert.strictEqual((yield* sets.get(a.id)).compiled.routes.length, 0)
    }).pipe(Effect.provide(services)))

  it.effect("a stored regex that is no longer accepted is reported once and never evaluated", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const routeStore = yield* RouteStore.RouteStore
      const events = yield* Events.Events
      const sets = yield* RouteMatcher.RouteSets
      const a = yield* bots.add(newBot("1:a"))
      const bad = yield* routeStore.insertRoute({
        source_bot_id: a.id,
        target_bot_id: a.id,
        condition_type: "regex",
        condition_value: "(?=a)a",
        action: "copy",
        target_chat_id: 0,
        enabled: true,
        description: "",
        created_at: "2026-01-01T00:00:00.000Z"
      })
      warnings.length = 0
      const fired = (text: string) =>
        Effect.map(sets.get(a.id), (set) => match(set.compiled, message(text)).fired)
      assert.deepStrictEqual(yield* fired("a".repeat(40) + "!"), [])
      yield* events.publish(Events.Event.RoutesChanged({ removed: [], added: [bad] }))
      assert.deepStrictEqual(yield* fired("aaaa"), [])
      assert.strictEqual(warnings.length, 1)
      assert.include(warnings[0], `route ${bad.id}`)
    }).pipe(Effect.provide(services)))
})
