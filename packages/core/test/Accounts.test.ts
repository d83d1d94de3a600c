import {
  Account,
  AccountStore,
  Accounts,
  ApiKeys,
  BotStore,
  Errors,
  KeyStore,
  PasswordHasher,
  Runtime,
  SessionStore
} from "@botrelay/core"
import { NodePasswordHasher } from "@botrelay/node"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Duration, Effect, Exit, Layer, Option, Redacted, TestClock } from "effect"
import { accounts, backend, botInput, hasher, storage } from "./TestRuntime.js"

const password = (username: string) => `${username}: a long password`

const input = (username: string, fields: Partial<Account.NewAccount> = {}): Account.NewAccount => ({
  username,
  display_name: "",
  role: "operator",
  bot_ids: [],
  password: password(username),
  ...fields
})

const login = (username: string, secret = password(username)) =>
  Effect.flatMap(Accounts.Accounts, (a) => a.login(username, Redacted.make(secret)))

const resolved = (session: Redacted.Redacted<string>) =>
  Effect.flatMap(Accounts.Accounts, (a) => Effect.map(a.resolve(session), Option.isSome))

/** Fails with this error (compared by its fields: a failure in a span carries the span). */
const failsWith = <A, E extends object, R>(effect: Effect.Effect<A, E, R>, expected: object) =>
  Effect.map(Effect.flip(effect), (error) => assert.deepStrictEqual({ ...error }, { ...expected }))

const stored = (session: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    return yield* sessions.findSession(yield* ApiKeys.hashKey(session))
  })

describe("Accounts", () => {
  it.effect("create stores an argon2id hash, never the password; checks bots, roles and usernames", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      const bot = yield* Effect.flatMap(BotStore.BotStore, (s) => s.insertBot(botInput("1:one")))
      const desk = yield* service.create(input("Desk", { bot_ids: [bot.id, bot.id], display_name: "Front desk" }))
      assert.deepStrictEqual(desk, {
        id: 1,
        username: "Desk",
        display_name: "Front desk",
        role: "operator",
        bot_ids: [bot.id],
        scopes: [{ bot_id: bot.id, chat_ids: [], abilities: ["read", "reply", "moderate"] }],
        enabled: true,
        created_at: "1970-01-01T00:00:00.000Z",
        last_login_at: ""
      })
      const hash = (yield* Effect.flatMap(AccountStore.AccountStore, (s) => s.findLogin("desk"))).pipe(Option.getOrThrow)
      assert.match(hash.password_hash, /^\$argon2id\$/)
      assert.notInclude(hash.password_hash, password("Desk"))
      yield* failsWith(service.create(input("DESK")), new Account.UsernameTaken({ username: "DESK" }))
      const admin = yield* Effect.flip(service.create(input("root", { role: "admin", bot_ids: [bot.id] })))
      assert.instanceOf(admin, Errors.InvalidInput)
      assert.strictEqual((yield* Effect.flip(service.create(input("x", { bot_ids: [99] }))))._tag, "BotNotFound")
      assert.deepStrictEqual(yield* service.list, [desk])
      assert.deepStrictEqual(yield* service.get(desk.id), desk)
      yield* failsWith(service.get(9), new Account.AccountNotFound({ id: 9 }))
      assert.isTrue(yield* service.any)
    }).pipe(Effect.provide(accounts())))

  it.effect("login opens a session stored by its hash, with a CSRF token bound to it", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      yield* service.create(input("alice"))
      yield* TestClock.adjust("1 hour")
      const one = yield* login("ALICE", password("alice"))
      assert.strictEqual(one.account.last_login_at, "1970-01-01T01:00:00.000Z")
      assert.deepStrictEqual(yield* service.get(one.account.id), one.account)
      assert.match(Redacted.value(one.session), Account.sessionPattern)
      assert.strictEqual(one.csrf_token, yield* service.csrfTokenOf(one.session))
      assert.match(one.csrf_token, /^[A-Za-z0-9_-]{43}$/)
      assert.notStrictEqual(one.csrf_token, Redacted.value(one.session))
      const two = yield* login("alice")
      assert.notStrictEqual(Redacted.value(two.session), Redacted.value(one.session))
      assert.notStrictEqual(two.csrf_token, one.csrf_token)
      assert.isTrue(Option.isSome(yield* stored(one.session)))
      const sessions = yield* SessionStore.SessionStore
      assert.isTrue(Option.isNone(yield* sessions.findSession(Redacted.value(one.session))))
      const found = yield* service.resolve(one.session)
      assert.deepStrictEqual(found, Option.some({ account: one.account, csrf_token: one.csrf_token }))
      yield* service.logout(one.session)
      assert.isFalse(yield* resolved(one.session))
      assert.isTrue(yield* resolved(two.session))
      assert.isFalse(yield* resolved(Redacted.make("not a session")))
      assert.isFalse(yield* resolved(Redacted.make("a".repeat(43))))
      yield* service.logout(Redacted.make("not a session"))
    }).pipe(Effect.provide(accounts())))

  it.effect("unknown user, wrong password and disabled account fail alike, each after one verification", () => {
    let verified = 0
    const counting = Layer.succeed(PasswordHasher.PasswordHasher, {
      hash: NodePasswordHasher.make.hash,
      verify: (hash, secret) => Effect.zipRight(Effect.sync(() => verified++), NodePasswordHasher.make.verify(hash, secret))
    })
    return Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      const bob = yield* service.create(input("bob"))
      yield* service.create(input("root", { role: "admin" }))
      const failures = []
      for (const attempt of [login("nobody", password("bob")), login("bob", "wrong password!"), login("", "")]) {
        verified = 0
        failures.push(yield* Effect.flip(attempt))
        assert.strictEqual(verified, 1)
      }
      yield* service.update({ id: bob.id, enabled: false })
      verified = 0
      failures.push(yield* Effect.flip(login("bob")))
      assert.strictEqual(verified, 1)
      for (const failure of failures) {
        assert.deepStrictEqual({ ...failure }, { ...new Account.InvalidCredentials() })
        assert.strictEqual(failure.message, "invalid username or password")
      }
      assert.strictEqual((yield* service.get(bob.id)).last_login_at, "")
    }).pipe(Effect.provide(Accounts.layer().pipe(Layer.provideMerge(Layer.merge(storage, counting)))))
  })

  it.effect("a session ends after 7 days idle; using it keeps it alive, touched at most once a minute", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      yield* service.create(input("alice"))
      const idle = yield* login("alice")
      const used = yield* login("alice")
      yield* TestClock.adjust("30 seconds")
      assert.isTrue(yield* resolved(used.session))
      assert.strictEqual(Option.getOrThrow(yield* stored(used.session)).last_seen_at, "1970-01-01T00:00:00.000Z")
      yield* TestClock.adjust("31 seconds")
      assert.isTrue(yield* resolved(used.session))
      assert.strictEqual(Option.getOrThrow(yield* stored(used.session)).last_seen_at, "1970-01-01T00:01:01.000Z")
      yield* TestClock.adjust(Duration.minutes(7 * 24 * 60 - 1))
      assert.isTrue(yield* resolved(used.session))
      assert.isFalse(yield* resolved(idle.session))
      assert.isTrue(Option.isNone(yield* stored(idle.session)))
      yield* TestClock.adjust(Duration.sum(Duration.days(7), Duration.millis(1)))
      assert.isFalse(yield* resolved(used.session))
    }).pipe(Effect.provide(accounts())))

  it.effect("a session ends 30 days after login, however much it is used; durations are options", () =>
    Effect.gen(function*() {
      yield* Effect.flatMap(Accounts.Accounts, (a) => a.create(input("alice")))
      const session = (yield* login("alice")).session
      for (let day = 6; day < 30; day += 6) {
        yield* TestClock.adjust("6 days")
        assert.isTrue(yield* resolved(session), `day ${day}`)
      }
      yield* TestClock.adjust(Duration.sum(Duration.days(6), Duration.millis(1)))
      assert.isFalse(yield* resolved(session))
      assert.isTrue(Option.isNone(yield* stored(session)))
      const short = yield* Effect.provide(
        Effect.gen(function*() {
          yield* Effect.flatMap(Accounts.Accounts, (a) => a.create(input("bob")))
          const s = (yield* login("bob")).session
          yield* TestClock.adjust("61 minutes")
          return yield* resolved(s)
        }),
        accounts({ idleTimeout: "1 hour", maxAge: "2 hours" })
      )
      assert.isFalse(short)
    }).pipe(Effect.provide(accounts())))

  it.effect("role, bots and disabling end sessions; names and enabling do not; admins lose their bots", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      const bots = yield* BotStore.BotStore
      const a = yield* bots.insertBot(botInput("1:one"))
      const b = yield* bots.insertBot(botInput("2:two"))
      yield* service.create(input("root", { role: "admin" }))
      const desk = yield* service.create(input("desk", { bot_ids: [a.id] }))
      let session = (yield* login("desk")).session
      const renamed = yield* service.update({ id: desk.id, display_name: "Desk" })
      assert.strictEqual(renamed.display_name, "Desk")
      assert.deepStrictEqual(yield* service.update({ id: desk.id, enabled: true }), renamed)
      assert.isTrue(yield* resolved(session))
      assert.deepStrictEqual((yield* service.update({ id: desk.id, bot_ids: [b.id, a.id] })).bot_ids, [a.id, b.id])
      assert.isFalse(yield* resolved(session))
      session = (yield* login("desk")).session
      assert.deepStrictEqual((yield* service.update({ id: desk.id, bot_ids: [b.id, a.id] })).bot_ids, [a.id, b.id])
      assert.isTrue(yield* resolved(session))
      assert.strictEqual((yield* Effect.flip(service.update({ id: desk.id, bot_ids: [99] })))._tag, "BotNotFound")
      assert.instanceOf(yield* Effect.flip(service.update({ id: desk.id, role: "admin", bot_ids: [a.id] })), Errors.InvalidInput)
      const promoted = yield* service.update({ id: desk.id, role: "admin" })
      assert.deepStrictEqual([promoted.role, promoted.bot_ids], ["admin", []])
      assert.isFalse(yield* resolved(session))
      session = (yield* login("desk")).session
      assert.isFalse((yield* service.update({ id: desk.id, enabled: false })).enabled)
      assert.isFalse(yield* resolved(session))
      yield* failsWith(service.update({ id: 9, enabled: false }), new Account.AccountNotFound({ id: 9 }))
    }).pipe(Effect.provide(accounts())))

  it.effect("the last enabled admin account cannot be demoted, disabled or deleted; admin keys do not count", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      yield* Effect.flatMap(KeyStore.KeyStore, (keys) =>
        keys.insertApiKey({ name: "k", role: "admin", scopes: [], prefix: "brk_x", created_at: "", hash: "h" }))
      const root = yield* service.create(input("root", { role: "admin" }))
      const last = new Account.LastAdminAccount({ id: root.id })
      yield* failsWith(service.update({ id: root.id, role: "operator" }), last)
      yield* failsWith(service.update({ id: root.id, enabled: false }), last)
      yield* failsWith(service.remove(root.id), last)
      assert.include(last.message, `account ${root.id} is the last enabled admin account; `)
      const other = yield* service.create(input("other", { role: "admin" }))
      yield* service.update({ id: root.id, enabled: false })
      yield* failsWith(service.remove(other.id), new Account.LastAdminAccount({ id: other.id }))
      const { account, session } = yield* login("other")
      assert.deepStrictEqual(yield* service.remove(root.id), { ...root, enabled: false })
      yield* failsWith(service.remove(root.id), new Account.AccountNotFound({ id: root.id }))
      const desk = yield* service.create(input("desk"))
      assert.deepStrictEqual(yield* service.remove(desk.id), desk)
      assert.isTrue(yield* resolved(session))
      assert.deepStrictEqual(yield* service.list, [account])
    }).pipe(Effect.provide(accounts())))

  it.effect("deleting an account ends its sessions", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      const desk = yield* service.create(input("desk"))
      const session = (yield* login("desk")).session
      yield* service.remove(desk.id)
      assert.isFalse(yield* resolved(session))
      assert.isTrue(Option.isNone(yield* stored(session)))
    }).pipe(Effect.provide(accounts())))

  it.effect("changing one's own password needs the old one, keeps this session and ends the others", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      const desk = yield* service.create(input("desk"))
      const here = yield* login("desk")
      const elsewhere = yield* login("desk")
      const me = { account_id: desk.id, role: "operator" as const }
      const fresh = "a brand new password"
      assert.instanceOf(yield* Effect.flip(service.changePassword(me, { new_password: fresh })), Errors.InvalidInput)
      yield* failsWith(
        service.changePassword(me, { old_password: "wrong password", new_password: fresh }),
        new Account.WrongPassword()
      )
      yield* service.changePassword(me, { id: desk.id, old_password: password("desk"), new_password: fresh }, here.session)
      assert.isTrue(yield* resolved(here.session))
      assert.isFalse(yield* resolved(elsewhere.session))
      yield* failsWith(login("desk"), new Account.InvalidCredentials())
      const again = yield* login("desk", fresh)
      yield* service.changePassword(me, { old_password: fresh, new_password: password("desk") })
      assert.isFalse(yield* resolved(here.session))
      assert.isFalse(yield* resolved(again.session))
    }).pipe(Effect.provide(accounts())))

  it.effect("admins reset others' passwords and end their sessions; operators and keys may not", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      const root = yield* service.create(input("root", { role: "admin" }))
      const desk = yield* service.create(input("desk"))
      const other = yield* service.create(input("other"))
      const session = (yield* login("desk")).session
      const reset = { id: desk.id, new_password: "reset by an admin" }
      yield* service.changePassword({ account_id: root.id, role: "admin" }, reset)
      assert.isFalse(yield* resolved(session))
      yield* login("desk", "reset by an admin")
      const refused = yield* Effect.flip(service.changePassword({ account_id: other.id, role: "operator" }, reset))
      assert.strictEqual(refused._tag, "NotAllowed")
      const key = yield* Effect.flip(service.changePassword({ role: "admin" }, { new_password: "no account here" }))
      assert.strictEqual(key._tag, "NotAllowed")
      yield* service.changePassword({ role: "admin" }, { id: other.id, new_password: "reset by a key" })
      yield* login("other", "reset by a key")
      yield* failsWith(
        service.changePassword({ role: "admin" }, { id: 9, new_password: "reset by a key" }),
        new Account.AccountNotFound({ id: 9 })
      )
    }).pipe(Effect.provide(accounts())))

  it.effect("housekeeping deletes expired sessions every interval", () =>
    Effect.gen(function*() {
      const service = yield* Accounts.Accounts
      yield* service.create(input("alice"))
      const old = yield* login("alice")
      yield* TestClock.adjust("6 days")
      const recent = yield* login("alice")
      assert.strictEqual(yield* service.sweep, 0)
      yield* Layer.launch(Accounts.housekeeping("1 hour")).pipe(Effect.forkScoped)
      yield* TestClock.adjust("1 day")
      assert.isTrue(Option.isSome(yield* stored(old.session)))
      yield* TestClock.adjust("1 hour")
      assert.isTrue(Option.isNone(yield* stored(old.session)))
      assert.isTrue(Option.isSome(yield* stored(recent.session)))
    }).pipe(Effect.scoped, Effect.provide(accounts())))

  it.effect("Runtime.layer uses the host's hasher; without one, using accounts is a defect that says so", () => {
    const runtime = Runtime.layer({ telegramApi: "http://127.0.0.1:9" }).pipe(
      Layer.provideMerge(Layer.merge(storage, backend().layer))
    )
    return Effect.gen(function*() {
      const created = yield* Effect.flatMap(Accounts.Accounts, (a) => a.create(input("root", { role: "admin" }))).pipe(
        Effect.provide(runtime.pipe(Layer.provideMerge(hasher)))
      )
      assert.strictEqual(created.username, "root")
      const exit = yield* Effect.flatMap(Accounts.Accounts, (a) => a.create(input("root"))).pipe(
        Effect.provide(runtime),
        Effect.exit
      )
      assert.isTrue(Exit.isFailure(exit) && Cause.isDie(exit.cause))
      assert.include(Cause.pretty((exit as Exit.Failure<unknown, unknown>).cause), "no PasswordHasher was provided")
    })
  })
})
