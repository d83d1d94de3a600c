import { Account, AccountStore, BotStore, SessionStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { botInput, botScopes, type Runner, some, t0, t1, t2 } from "./Fixtures.js"

export const accountInput = (
  username: string,
  { bot_ids, ...overrides }: Partial<Account.AccountRecordInput> & { readonly bot_ids?: ReadonlyArray<number> } = {}
): Account.AccountRecordInput => ({
  username,
  display_name: "",
  role: "operator",
  scopes: botScopes(bot_ids ?? []),
  password_hash: `hash of ${username}`,
  created_at: t0,
  ...overrides
})

/** The conformance tests for accounts. */
export const accounts = (run: Runner): void => {
  const test = run(BotStore.BotStore, AccountStore.AccountStore, SessionStore.SessionStore)
  describe("accounts", () => {
    test("insertAccount returns an enabled account without its hash; bots sorted, once each", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const admin = yield* storage.insertAccount(accountInput("Root", { role: "admin", display_name: "The Root" }))
        assert.deepStrictEqual(admin, {
          id: 1,
          username: "Root",
          display_name: "The Root",
          role: "admin",
          bot_ids: [],
          scopes: [],
          enabled: true,
          created_at: t0,
          last_login_at: ""
        })
        const operator = yield* storage.insertAccount(accountInput("desk", { bot_ids: [b.id, a.id, b.id] }))
        assert.strictEqual(operator.id, 2)
        assert.deepStrictEqual(operator.bot_ids, [a.id, b.id])
        assert.deepStrictEqual(yield* storage.findAccount(operator.id), Option.some(operator))
        assert.isTrue(Option.isNone(yield* storage.findAccount(99)))
        assert.deepStrictEqual(yield* storage.listAccounts, [admin, operator])
        for (const account of yield* storage.listAccounts) assert.isFalse("password_hash" in account)
      }))

    test("usernames are unique whatever their case, kept as given", (storage) =>
      Effect.gen(function*() {
        const alice = yield* storage.insertAccount(accountInput("Alice"))
        const taken = yield* Effect.flip(storage.insertAccount(accountInput("aLICE")))
        assert.deepStrictEqual(taken, new Account.UsernameTaken({ username: "aLICE" }))
        assert.deepStrictEqual(yield* storage.listAccounts, [alice])
        const login = some(yield* storage.findLogin("ALICE"))
        assert.deepStrictEqual(login, { account: alice, password_hash: "hash of Alice" })
        assert.isTrue(Option.isNone(yield* storage.findLogin("alicia")))
        assert.isTrue(Option.isNone(yield* storage.findLogin("")))
      }))

    test("updateAccount changes what is given; bots are replaced", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const account = yield* storage.insertAccount(accountInput("desk", { bot_ids: [a.id] }))
        assert.deepStrictEqual(yield* storage.updateAccount(account.id, {}), Option.some(account))
        const renamed = some(yield* storage.updateAccount(account.id, { display_name: "Front desk" }))
        assert.deepStrictEqual(renamed, { ...account, display_name: "Front desk" })
        const moved = some(yield* storage.updateAccount(account.id, { scopes: botScopes([b.id, a.id]) }))
        assert.deepStrictEqual(moved.bot_ids, [a.id, b.id])
        const promoted = some(yield* storage.updateAccount(account.id, { role: "admin", scopes: [], enabled: false }))
        assert.deepStrictEqual(promoted, { ...renamed, role: "admin", bot_ids: [], scopes: [], enabled: false })
        assert.deepStrictEqual(yield* storage.findAccount(account.id), Option.some(promoted))
        assert.isTrue(Option.isNone(yield* storage.updateAccount(99, { enabled: true })))
        assert.isTrue(Option.isNone(yield* storage.updateAccount(99, {})))
      }))

    test("setPasswordHash, recordLogin and countEnabledAdmins", (storage) =>
      Effect.gen(function*() {
        const admin = yield* storage.insertAccount(accountInput("root", { role: "admin" }))
        const other = yield* storage.insertAccount(accountInput("other", { role: "admin" }))
        yield* storage.insertAccount(accountInput("desk"))
        assert.strictEqual(yield* storage.countEnabledAdmins, 2)
        yield* storage.updateAccount(other.id, { enabled: false })
        assert.strictEqual(yield* storage.countEnabledAdmins, 1)
        assert.isTrue(yield* storage.setPasswordHash(admin.id, "new hash"))
        assert.isFalse(yield* storage.setPasswordHash(99, "new hash"))
        assert.strictEqual(some(yield* storage.findLogin("root")).password_hash, "new hash")
        yield* storage.recordLogin(admin.id, t1)
        yield* storage.recordLogin(admin.id, t2)
        yield* storage.recordLogin(99, t2)
        assert.deepStrictEqual(yield* storage.findAccount(admin.id), Option.some({ ...admin, last_login_at: t2 }))
      }))

    test("deleteAccount removes the account with its bots' links and sessions; deleting a bot unlinks it", (storage) =>
      Effect.gen(function*() {
        const a = yield* storage.insertBot(botInput(1))
        const b = yield* storage.insertBot(botInput(2))
        const account = yield* storage.insertAccount(accountInput("desk", { bot_ids: [a.id, b.id] }))
        const other = yield* storage.insertAccount(accountInput("other", { bot_ids: [a.id] }))
        yield* storage.createSession({ id_hash: "s1", account_id: account.id, created_at: t0, last_seen_at: t0 })
        yield* storage.createSession({ id_hash: "s2", account_id: other.id, created_at: t0, last_seen_at: t0 })
        assert.isTrue(yield* storage.deleteBot(a.id))
        assert.deepStrictEqual(some(yield* storage.findAccount(account.id)).bot_ids, [b.id])
        assert.deepStrictEqual(some(yield* storage.findAccount(other.id)).bot_ids, [])
        assert.isTrue(yield* storage.deleteAccount(account.id))
        assert.isFalse(yield* storage.deleteAccount(account.id))
        assert.isTrue(Option.isNone(yield* storage.findAccount(account.id)))
        assert.isTrue(Option.isNone(yield* storage.findLogin("desk")))
        assert.isTrue(Option.isNone(yield* storage.findSession("s1")))
        assert.isTrue(Option.isSome(yield* storage.findSession("s2")))
        assert.isTrue(Option.isSome(yield* storage.findBot(b.id)))
        const again = yield* storage.insertAccount(accountInput("DESK", { bot_ids: [b.id] }))
        assert.strictEqual(again.id, 3)
        assert.deepStrictEqual(again.bot_ids, [b.id])
      }))
  })
}
