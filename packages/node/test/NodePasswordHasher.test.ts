import { Accounts, PasswordHasher } from "@botrelay/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { Botrelay, NodePasswordHasher } from "../src/index.js"

const password = Redacted.make("correct horse battery staple")

describe("NodePasswordHasher", () => {
  it.effect("hashes with Argon2id and OWASP's parameters, a fresh salt each time", () =>
    Effect.gen(function*() {
      const one = yield* NodePasswordHasher.make.hash(password)
      const two = yield* NodePasswordHasher.make.hash(password)
      assert.match(one, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
      assert.notInclude(one, Redacted.value(password))
      assert.notStrictEqual(one, two)
    }))

  it.effect("verifies the right password, refuses a wrong one and a hash it cannot read", () =>
    Effect.gen(function*() {
      const hash = yield* NodePasswordHasher.make.hash(password)
      assert.isTrue(yield* NodePasswordHasher.make.verify(hash, password))
      assert.isFalse(yield* NodePasswordHasher.make.verify(hash, Redacted.make("correct horse battery stapler")))
      assert.isFalse(yield* NodePasswordHasher.make.verify("not a hash", password))
      assert.isFalse(yield* NodePasswordHasher.make.verify("", password))
    }))

  it.effect("is the instance's hasher: an account created through it can log in", () =>
    Effect.gen(function*() {
      yield* PasswordHasher.PasswordHasher
      const accounts = yield* Accounts.Accounts
      yield* accounts.create({
        username: "root",
        display_name: "",
        role: "admin",
        bot_ids: [],
        password: Redacted.value(password)
      })
      const login = yield* accounts.login("ROOT", password)
      assert.strictEqual(login.account.username, "root")
      assert.isTrue(Option.isSome(yield* accounts.resolve(login.session)))
    }).pipe(Effect.provide(Layer.orDie(Botrelay.servicesLayer({ database: ":memory:", telegramApi: "http://127.0.0.1:9" })))))
})
