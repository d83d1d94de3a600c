import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { RouteMapping } from "../domain/RouteSend.js"

/** Which message a route send produced from which; written with the send by `OutboxStore.recordSend`. */
export interface MappingStoreService {
  /**
   * The newest reversible mapping whose target is this message of this bot, created at or after
   * `since`; `None` when there is none.
   */
  readonly findReverse: (
    targetBotId: number,
    targetChatId: number,
    targetMessageId: number,
    since: string
  ) => Effect.Effect<Option.Option<RouteMapping>, StorageError>
  /** The newest mapping (of any bot) whose target is this message: set when the service sent it. */
  readonly findProduced: (chatId: number, messageId: number) => Effect.Effect<Option.Option<RouteMapping>, StorageError>
  /** Deletes mappings created before `before`, at most `limit`; returns how many. */
  readonly pruneMappings: (before: string, limit: number) => Effect.Effect<number, StorageError>
}

/** The route mappings; the host's driver provides it. */
export class MappingStore extends Context.Tag("@botrelay/core/MappingStore")<MappingStore, MappingStoreService>() {}
