import type { Scope } from "effect"
import { Context, Effect, Queue } from "effect"
import type { StorageError } from "../domain/Errors.js"

/** What a listener hears: a message, or that it was cut off for a while and may have missed some. */
export type Heard =
  | { readonly _tag: "Message"; readonly text: string }
  | { readonly _tag: "Reconnected" }

/** Messages between the instances sharing a storage (PostgreSQL: LISTEN/NOTIFY). */
export interface BroadcastService {
  /** Whether other instances may share the storage; when not, nobody else hears anything. */
  readonly shared: boolean
  /** The longest message `say` takes, in UTF-8 bytes. */
  readonly maxBytes: number
  /** Says the text to every instance listening, this one included; after the commits before it. */
  readonly say: (text: string) => Effect.Effect<void, StorageError>
  /** What is said from now on, until the scope closes; a lost link is retried for as long as it takes. */
  readonly listen: Effect.Effect<Queue.Dequeue<Heard>, never, Scope.Scope>
}

/** Messages between instances; the host's driver provides it. */
export class Broadcast extends Context.Tag("@botrelay/core/Broadcast")<Broadcast, BroadcastService>() {}

/** A storage no other instance shares: nobody hears what is said. */
export const alone: BroadcastService = {
  shared: false,
  maxBytes: 7_900,
  say: () => Effect.void,
  listen: Queue.unbounded<Heard>()
}
