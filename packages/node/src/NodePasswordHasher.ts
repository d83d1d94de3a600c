import { PasswordHasher } from "@botrelay/core"
import { type Algorithm, hash, type Options, verify } from "@node-rs/argon2"
import { Effect, Layer, Redacted } from "effect"

/** Argon2id with OWASP's parameters: 19 MiB, 2 passes, 1 lane. */
export const parameters: Options = {
  algorithm: 2 satisfies Algorithm.Argon2id,
  memoryCost: 19456,
  timeCost: 2,
  parallelism: 1
}

/** Argon2id hashes in PHC strings; verification is the library's, in constant time. */
export const make: PasswordHasher.PasswordHasherService = {
  hash: (password) => Effect.promise(() => hash(Redacted.value(password), parameters)),
  verify: (stored, password) =>
    Effect.tryPromise(() => verify(stored, Redacted.value(password))).pipe(Effect.orElseSucceed(() => false))
}

/** The hasher as a layer. */
export const layer: Layer.Layer<PasswordHasher.PasswordHasher> = Layer.succeed(PasswordHasher.PasswordHasher, make)
