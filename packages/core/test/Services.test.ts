import { assert, describe, it } from "@effect/vitest"
import { ApiKeys, Bot, Bots, ConfigRevision, Events, Route, Routes, SettingsStore, Tags } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { Effect, Exit, Layer, Option, Redacted, Schema } from "effect"

const services = Layer.mergeAll(Bots.layer, Routes.layer, Tags.layer, ApiKeys.layer).pipe(
  Layer.provideMerge(SqliteStores.layer({ filename: ":memory:" })),
  Layer.provideMerge(Events.layer)
)

const newBot = (token: string, fields: Partial<Bot.NewBot> = {}) =>
  Schema.decodeUnknownSync(Bot.NewBot)({ token, ...fields })

describe("Bots", () => {
  it.effect("adds a bot with defaults, from the web", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const bot = yield* bots.add(newBot("1:aaa"))
      assert.strictEqual(bot.id, 1)
      assert.strictEqual(bot.source, "web")
      assert.strictEqual(bot.manage_enabled, false)
      assert.strictEqual(bot.running, false)
      assert.strictEqual(Redacted.value(bot.token), "1:aaa")
    }).pipe(Effect.provide(services)))

  it.effect("needs a backend_url when proxy_enabled, on add and on update", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const added = yield* Effect.flip(bots.add(newBot("1:aaa", { proxy_enabled: true })))
      assert.strictEqual(added._tag, "InvalidInput")
      const bot = yield* bots.add(newBot("1:aaa"))
      const updated = yield* Effect.flip(bots.update({ id: bot.id, proxy_enabled: true }))
      assert.strictEqual(updated._tag, "InvalidInput")
      const ok = yield* bots.update({ id: bot.id, proxy_enabled: true, backend_url: "http://127.0.0.1:9/hook" })
      assert.strictEqual(ok.proxy_enabled, true)
      assert.strictEqual(ok.name, "")
    }).pipe(Effect.provide(services)))

  it.effect("registers the command-line bot once", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const first = yield* bots.ensureCli(Redacted.make("9:cli"))
      const again = yield* bots.ensureCli(Redacted.make("9:cli"))
      assert.strictEqual(first.id, again.id)
      assert.strictEqual(first.source, "cli")
      assert.strictEqual(first.manage_enabled, true)
      assert.strictEqual((yield* bots.list).length, 1)
    }).pipe(Effect.provide(services)))

  it.effect("toggles and removes, failing with BotNotFound for unknown ids", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const bot = yield* bots.add(newBot("1:aaa"))
      assert.strictEqual((yield* bots.toggleDisabled(bot.id)).disabled, true)
      assert.strictEqual((yield* bots.toggleDisabled(bot.id)).disabled, false)
      yield* bots.remove(bot.id)
      const missing = yield* Effect.flip(bots.get(bot.id))
      assert.strictEqual(missing._tag, "BotNotFound")
    }).pipe(Effect.provide(services)))
})

describe("Route conditions", () => {
  const decode = Schema.decodeUnknownEither(Route.NewRoute)
  const route = (condition_type: string, condition_value: string) =>
    decode({ source_bot_id: 1, target_bot_id: 2, action: "copy", condition_type, condition_value })

  it("accepts and normalises valid values", () => {
    assert.deepStrictEqual(Route.normalizeCondition("chat_id", " -100123 , 42"), { _tag: "Right", value: "-100123,42" })
    assert.deepStrictEqual(Route.normalizeCondition("keyword", "Help, refund "), { _tag: "Right", value: "Help,refund" })
    assert.isTrue(route("regex", "^order #\\d+$")._tag === "Right")
    assert.isTrue(route("all", "")._tag === "Right")
  })

  it("rejects values that do not parse for their type", () => {
    for (const [type, value] of [["chat_id", "abc"], ["user_id", ""], ["keyword", "a,,b"], ["regex", "("], ["all", "x"]]) {
      assert.isTrue(route(type!, value!)._tag === "Left", `${type}=${value}`)
    }
    assert.isTrue(route("sometimes", "")._tag === "Left")
  })

  it.effect("routes need existing bots and store the normalised value", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const routes = yield* Routes.Routes
      const a = yield* bots.add(newBot("1:a"))
      const b = yield* bots.add(newBot("2:b"))
      const input = Schema.decodeUnknownSync(Route.NewRoute)({
        source_bot_id: a.id,
        target_bot_id: b.id,
        action: "forward",
        condition_type: "user_id",
        condition_value: "1, 2"
      })
      const created = yield* routes.add(input)
      assert.strictEqual(created.condition_value, "1,2")
      assert.strictEqual(created.enabled, true)
      const missing = yield* Effect.flip(routes.add({ ...input, target_bot_id: 99 }))
      assert.strictEqual(missing._tag, "BotNotFound")
      yield* bots.remove(b.id)
      assert.deepStrictEqual(yield* routes.list(), [])
    }).pipe(Effect.provide(services)))
})

describe("Tags", () => {
  it.effect("assigning the same tag again keeps the record and updates the colour", () =>
    Effect.gen(function*() {
      const tags = yield* Tags.Tags
      const first = yield* tags.add({ bot_id: 1, chat_id: 5, user_id: 7, username: "ann", tag: "vip", color: "red" })
      const again = yield* tags.add({ bot_id: 1, chat_id: 5, user_id: 7, username: "ann2", tag: "vip", color: "#0f0" })
      assert.strictEqual(again.id, first.id)
      assert.strictEqual(again.color, "#0f0")
      assert.strictEqual(again.username, "ann2")
      const otherBot = yield* tags.add({ bot_id: 2, chat_id: 5, user_id: 7, username: "ann", tag: "vip", color: "" })
      assert.notStrictEqual(otherBot.id, first.id)
      assert.strictEqual((yield* tags.list({ chat_id: 5 })).length, 2)
      assert.deepStrictEqual(yield* tags.list({ chat_id: 5, bot_id: 1 }), [again])
    }).pipe(Effect.provide(services)))
})

describe("ApiKeys", () => {
  it.effect("mints keys that authenticate until disabled", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys.ApiKeys
      const admin = yield* keys.create({ name: "root", role: "admin", bot_ids: [] })
      assert.match(admin.key, /^brk_[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(admin.prefix, admin.key.slice(0, 12))
      const found = yield* keys.authenticate(Redacted.make(admin.key))
      assert.strictEqual(Option.getOrThrow(found).id, admin.id)
      const other = yield* keys.create({ name: "second", role: "admin", bot_ids: [] })
      yield* keys.toggle(admin.id)
      assert.isTrue(Option.isNone(yield* keys.authenticate(Redacted.make(admin.key))))
      assert.isTrue(Option.isSome(yield* keys.authenticate(Redacted.make(other.key))))
      assert.isTrue(Option.isNone(yield* keys.authenticate(Redacted.make("brk_nope"))))
    }).pipe(Effect.provide(services)))

  it.effect("refuses to disable or delete the last enabled admin key", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys.ApiKeys
      const admin = yield* keys.create({ name: "root", role: "admin", bot_ids: [] })
      assert.strictEqual((yield* Effect.flip(keys.toggle(admin.id)))._tag, "LastAdminKey")
      assert.strictEqual((yield* Effect.flip(keys.remove(admin.id)))._tag, "LastAdminKey")
    }).pipe(Effect.provide(services)))

  it.effect("operator keys name existing bots; admin keys name none", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys.ApiKeys
      const bots = yield* Bots.Bots
      const bot = yield* bots.add(newBot("1:a"))
      const op = yield* keys.create({ name: "op", role: "operator", bot_ids: [bot.id, bot.id] })
      assert.deepStrictEqual(op.bot_ids, [bot.id])
      assert.strictEqual((yield* Effect.flip(keys.create({ name: "x", role: "operator", bot_ids: [42] })))._tag, "BotNotFound")
      const exit = yield* Effect.exit(keys.create({ name: "x", role: "admin", bot_ids: [bot.id] }))
      assert.isTrue(Exit.isFailure(exit))
    }).pipe(Effect.provide(services)))

  it.effect("ensureAdmin registers a configured key once and rejects malformed ones", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeys.ApiKeys
      const secret = yield* ApiKeys.generateKey
      assert.isTrue(yield* keys.ensureAdmin(secret, "env"))
      assert.isFalse(yield* keys.ensureAdmin(secret, "env"))
      const bad = yield* Effect.flip(keys.ensureAdmin(Redacted.make("nope"), "env"))
      assert.strictEqual(bad._tag, "InvalidInput")
    }).pipe(Effect.provide(services)))
})

describe("ConfigRevision", () => {
  it.effect("each change through a service bumps it once, a failed one not at all; asOneChange bumps once for many", () =>
    Effect.gen(function*() {
      const bots = yield* Bots.Bots
      const routes = yield* Routes.Routes
      const settings = yield* SettingsStore.SettingsStore
      const revision = () => settings.readConfigRevision
      assert.strictEqual(yield* revision(), 0)
      const bot = yield* bots.add(newBot("1:aaa"))
      assert.strictEqual(yield* revision(), 1)
      yield* bots.update({ id: bot.id, name: "support" })
      yield* bots.toggleDisabled(bot.id)
      assert.strictEqual(yield* revision(), 3)
      yield* Effect.flip(bots.update({ id: bot.id, proxy_enabled: true }))
      yield* Effect.flip(routes.remove(99))
      assert.strictEqual(yield* revision(), 3)
      const route = Schema.decodeUnknownSync(Route.NewRoute)({ source_bot_id: bot.id, target_bot_id: bot.id, action: "drop" })
      const many = Effect.all([routes.add(route), routes.add(route), bots.update({ id: bot.id, description: "x" })])
      yield* ConfigRevision.asOneChange(settings, many, () => true)
      assert.strictEqual(yield* revision(), 4)
      yield* ConfigRevision.asOneChange(settings, bots.list, () => false)
      assert.strictEqual(yield* revision(), 4)
      yield* routes.add(route)
      assert.strictEqual(yield* revision(), 5)
    }).pipe(Effect.provide(services)))
})
