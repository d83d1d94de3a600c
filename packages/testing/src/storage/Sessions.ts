import { AccountStore, SessionStore } from "@botrelay/core"
import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { accountInput } from "./Accounts.js"
import { type Runner, t0, t1, t2 } from "./Fixtures.js"

const session = (idHash: string, accountId: number, createdAt = t0, lastSeenAt = createdAt) => ({
  id_hash: idHash,
  account_id: accountId,
  created_at: createdAt,
  last_seen_at: lastSeenAt
})

/** The conformance tests for console sessions. */
export const sessions = (run: Runner): void => {
  const test = run(AccountStore.AccountStore, SessionStore.SessionStore)
  describe("sessions", () => {
    test("createSession, findSession, touchSession and deleteSession", (storage) =>
      Effect.gen(function*() {
        const account = yield* storage.insertAccount(accountInput("desk"))
        yield* storage.createSession(session("a".repeat(64), account.id))
        assert.deepStrictEqual(yield* storage.findSession("a".repeat(64)), Option.some(session("a".repeat(64), account.id)))
        assert.isTrue(Option.isNone(yield* storage.findSession("b".repeat(64))))
        yield* storage.touchSession("a".repeat(64), t1)
        yield* storage.touchSession("b".repeat(64), t1)
        assert.deepStrictEqual(
          yield* storage.findSession("a".repeat(64)),
          Option.some(session("a".repeat(64), account.id, t0, t1))
        )
        yield* storage.deleteSession("a".repeat(64))
        yield* storage.deleteSession("a".repeat(64))
        assert.isTrue(Option.isNone(yield* storage.findSession("a".repeat(64))))
      }))

    test("deleteAccountSessions ends an account's sessions, but the one kept", (storage) =>
      Effect.gen(function*() {
        const one = yield* storage.insertAccount(accountInput("one"))
        const two = yield* storage.insertAccount(accountInput("two"))
        for (const id of ["1a", "1b", "1c"]) yield* storage.createSession(session(id, one.id))
        yield* storage.createSession(session("2a", two.id))
        assert.strictEqual(yield* storage.deleteAccountSessions(one.id, "1b"), 2)
        assert.isTrue(Option.isSome(yield* storage.findSession("1b")))
        assert.isTrue(Option.isNone(yield* storage.findSession("1a")))
        assert.strictEqual(yield* storage.deleteAccountSessions(one.id), 1)
        assert.strictEqual(yield* storage.deleteAccountSessions(one.id), 0)
        assert.isTrue(Option.isSome(yield* storage.findSession("2a")))
      }))

    test("pruneSessions deletes those idle or old, by the given times", (storage) =>
      Effect.gen(function*() {
        const account = yield* storage.insertAccount(accountInput("desk"))
        yield* storage.createSession(session("idle", account.id, t1, t1))
        yield* storage.createSession(session("old", account.id, t0, t2))
        yield* storage.createSession(session("live", account.id, t1, t2))
        assert.strictEqual(yield* storage.pruneSessions(t2, t1), 2)
        assert.isTrue(Option.isSome(yield* storage.findSession("live")))
        assert.isTrue(Option.isNone(yield* storage.findSession("idle")))
        assert.isTrue(Option.isNone(yield* storage.findSession("old")))
        assert.strictEqual(yield* storage.pruneSessions(t2, t1), 0)
      }))
  })
}
