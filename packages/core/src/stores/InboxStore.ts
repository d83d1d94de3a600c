import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { LeaseLost, StorageError } from "../domain/Errors.js"
import type { InboxUpdate, UpdateCompletion } from "../domain/Update.js"
import type { Fence } from "./LeaseStore.js"

/** The bots' ingress offsets and inbox of updates, and what finishing an update writes. */
export interface InboxStoreService {
  /** The offset the bot's next getUpdates asks for: 0 until a batch was committed. */
  readonly ingressOffset: (botId: number) => Effect.Effect<number, StorageError>
  /**
   * In one transaction: adds the updates the inbox does not hold yet (by bot and update_id) and
   * raises the bot's ingress offset to `nextOffset` (never lowers it). Returns how many were new. With a
   * `fence`, only while it holds the bot's lease (`LeaseLost` otherwise, nothing written).
   */
  readonly commitUpdates: (
    botId: number,
    updates: ReadonlyArray<Pick<InboxUpdate, "update_id" | "payload" | "received_at">>,
    nextOffset: number,
    fence?: Fence
  ) => Effect.Effect<number, StorageError | LeaseLost>
  /**
   * `commitUpdates`, and when the bot has no unprocessed update the new ones are completed in the same
   * transaction (what `completeUpdates` writes) with the completions `complete` gives for them (one per update,
   * in order), so they never
   * wait in the inbox; `complete` answering `undefined` leaves them for processing. Returns how many were new
   * and the completions written (`undefined` when none were). A driver without it leaves every update for
   * processing.
   */
  readonly commitCompleting?: (
    botId: number,
    updates: ReadonlyArray<InboxUpdate>,
    nextOffset: number,
    complete: (updates: ReadonlyArray<InboxUpdate>) => ReadonlyArray<UpdateCompletion> | undefined,
    fence?: Fence
  ) => Effect.Effect<
    { readonly added: number; readonly completed: ReadonlyArray<UpdateCompletion> | undefined },
    StorageError | LeaseLost
  >
  /** The secret Telegram sends with the bot's webhook updates; `None` while no webhook is registered. */
  readonly webhookSecret: (botId: number) => Effect.Effect<Option.Option<string>, StorageError>
  /** Stores the bot's webhook secret (a new one forgets where it was registered); `undefined` clears it. */
  readonly setWebhookSecret: (botId: number, secret: string | undefined) => Effect.Effect<void, StorageError>
  /** Where the bot's webhook was registered with its current secret; "" when not yet. */
  readonly webhookUrl: (botId: number) => Effect.Effect<string, StorageError>
  /** Records that Telegram accepted the webhook at `url` with the stored secret. */
  readonly setWebhookUrl: (botId: number, url: string) => Effect.Effect<void, StorageError>
  /** The bot's unprocessed updates, by update_id ascending, at most `limit`. */
  readonly pendingUpdates: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<InboxUpdate>, StorageError>
  /**
   * In one transaction for the whole batch: for each completion, saves the messages, queues the
   * deliveries and route sends, adds the update to the bot's long-poll buffer (unless held there already) and marks
   * the update processed. A completion whose update the inbox does not hold unprocessed is skipped,
   * so completing twice is harmless. With a `fence`, only while it holds the lease of the bot it names
   * (`LeaseLost` otherwise, nothing written).
   */
  readonly completeUpdates: (
    completions: ReadonlyArray<UpdateCompletion>,
    fence?: Fence
  ) => Effect.Effect<void, StorageError | LeaseLost>
  /** How much of the bot's work is waiting: unprocessed updates plus pending deliveries. */
  readonly backlog: (botId: number) => Effect.Effect<number, StorageError>
  /** Ids of bots with unprocessed updates, pending deliveries or pending route sends (work left from before a restart). */
  readonly botsWithWork: Effect.Effect<ReadonlyArray<number>, StorageError>
  /**
   * Deletes finished work older than `before`: processed inbox updates received before it, delivered
   * deliveries and sent route sends last updated before it, at most `limit` rows of each. Dead and
   * pending ones stay. Returns how many rows went.
   */
  readonly pruneFinished: (
    before: string,
    limit: number
  ) => Effect.Effect<
    { readonly updates: number; readonly deliveries: number; readonly sends: number },
    StorageError
  >
}

/** The inbox; the host's driver provides it. */
export class InboxStore extends Context.Tag("@botrelay/core/InboxStore")<InboxStore, InboxStoreService>() {}
