import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { BotPatch, BotRecordInput, DuplicateToken, StoredBot } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"

/** The registered bots. Drivers must pass the bots part of the conformance suite in `@botrelay/testing`. */
export interface BotStoreService {
  /** Creates a bot; fails with `DuplicateToken` when another bot has the token. */
  readonly insertBot: (bot: BotRecordInput) => Effect.Effect<StoredBot, DuplicateToken | StorageError>
  /** Applies a change; `None` when no bot has the id. Sets `updated_at` when given in the patch. */
  readonly updateBot: (
    id: number,
    patch: BotPatch & { readonly updated_at?: string }
  ) => Effect.Effect<Option.Option<StoredBot>, DuplicateToken | StorageError>
  readonly findBot: (id: number) => Effect.Effect<Option.Option<StoredBot>, StorageError>
  readonly findBotByToken: (token: string) => Effect.Effect<Option.Option<StoredBot>, StorageError>
  /** All bots, ordered by id. */
  readonly listBots: Effect.Effect<ReadonlyArray<StoredBot>, StorageError>
  /**
   * Removes the bot with its routes, messages, inbox, ingress offset, webhook secret, deliveries,
   * long-poll buffer, the route sends it makes, the mappings it is source or target of, and its place
   * in operator keys; false when absent.
   */
  readonly deleteBot: (id: number) => Effect.Effect<boolean, StorageError>
}

/** The registered bots; the host's driver provides it. */
export class BotStore extends Context.Tag("@botrelay/core/BotStore")<BotStore, BotStoreService>() {}
