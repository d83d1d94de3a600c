import { Context, Effect, Layer, Option, type Redacted } from "effect"

/** Hashes passwords and checks them against their hashes; the host provides it (`NodePasswordHasher`). */
export interface PasswordHasherService {
  /** A self-describing hash (PHC string) with a fresh salt. */
  readonly hash: (password: Redacted.Redacted<string>) => Effect.Effect<string>
  /** Whether the password matches the hash, in constant time; false for a hash it cannot read. */
  readonly verify: (hash: string, password: Redacted.Redacted<string>) => Effect.Effect<boolean>
}

/** Hashes passwords and checks them against their hashes; the host provides it (`NodePasswordHasher`). */
export class PasswordHasher extends Context.Tag("@botrelay/core/PasswordHasher")<PasswordHasher, PasswordHasherService>() {}

const missing = () =>
  Effect.dieMessage("no PasswordHasher was provided: accounts need one (NodePasswordHasher.layer from @botrelay/node)")

/** Stands in for a hasher the host did not provide: every use is a defect that says so. */
export const unavailable: PasswordHasherService = { hash: missing, verify: missing }

/** The host's hasher when its context has one, else `unavailable`. */
export const fromContextOrUnavailable: Layer.Layer<PasswordHasher> = Layer.effect(
  PasswordHasher,
  Effect.map(Effect.serviceOption(PasswordHasher), Option.getOrElse(() => unavailable))
)
