import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { ApiKey, ApiKeyRecordInput } from "./ApiKey.js"
import type { BotPatch, BotRecordInput, DuplicateToken, StoredBot } from "./Bot.js"
import type { Delivery, DeliveryOutcome, DeliveryStatus } from "./Delivery.js"
import type { StorageError } from "./Errors.js"
import type { InboxUpdate, UpdateCompletion } from "./Inbox.js"
import type { BufferedUpdate, BufferQuery, BufferRetention, BufferState } from "./LongPoll.js"
import type { Message, MessageQuery } from "./Message.js"
import type { Route, RouteRecordInput } from "./Route.js"
import type { NewRouteMapping, RouteMapping, RouteSend, SendOutcome, SendStatus } from "./RouteSend.js"
import type { Tag, TagRecordInput } from "./Tag.js"

/**
 * Everything Botrelay persists. Drivers implement it (`MemoryStorage`, `@botrelay/sqlite`) and
 * must pass the conformance suite in `@botrelay/testing`. Ids referenced by records (a route's
 * bots, a key's bots) are checked by the services before they reach storage.
 */
export interface StorageService {
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

  readonly insertRoute: (route: RouteRecordInput) => Effect.Effect<Route, StorageError>
  /** Replaces every field but `id` and `created_at`; `None` when no route has the id. */
  readonly replaceRoute: (
    id: number,
    route: Omit<RouteRecordInput, "created_at">
  ) => Effect.Effect<Option.Option<Route>, StorageError>
  readonly findRoute: (id: number) => Effect.Effect<Option.Option<Route>, StorageError>
  /** Routes ordered by id; with `bot_id`, those whose source or target is that bot. */
  readonly listRoutes: (filter: { readonly bot_id?: number }) => Effect.Effect<ReadonlyArray<Route>, StorageError>
  readonly deleteRoute: (id: number) => Effect.Effect<boolean, StorageError>

  /** Inserts or replaces the message with the same (bot_id, chat_id, id). */
  readonly saveMessage: (message: Message) => Effect.Effect<void, StorageError>
  /**
   * `saveMessage` for each message in order, in one write. A message that cannot be saved (its bot was
   * deleted meanwhile) does not keep the others from being saved; the effect then fails.
   */
  readonly saveMessages: (messages: ReadonlyArray<Message>) => Effect.Effect<void, StorageError>
  /** One chat's messages, newest first (date desc, then id desc). */
  readonly listMessages: (query: MessageQuery) => Effect.Effect<ReadonlyArray<Message>, StorageError>
  /** The stored message with this (bot_id, chat_id, id); `None` when the history does not hold it. */
  readonly findMessage: (botId: number, chatId: number, id: number) => Effect.Effect<Option.Option<Message>, StorageError>
  /** Marks the bot's stored messages of the chat with these ids deleted; returns how many it holds. */
  readonly markMessagesDeleted: (
    botId: number,
    chatId: number,
    ids: ReadonlyArray<number>
  ) => Effect.Effect<number, StorageError>

  /** Assigns a tag; assigning the same (bot, chat, user, tag) again updates username and colour and keeps the id. */
  readonly upsertTag: (tag: TagRecordInput) => Effect.Effect<Tag, StorageError>
  /** A chat's tags ordered by id, optionally of one bot and of one user. */
  readonly listTags: (filter: {
    readonly chat_id: number
    readonly bot_id?: number | undefined
    readonly user_id?: number | undefined
  }) => Effect.Effect<ReadonlyArray<Tag>, StorageError>
  readonly findTag: (id: number) => Effect.Effect<Option.Option<Tag>, StorageError>
  readonly deleteTag: (id: number) => Effect.Effect<boolean, StorageError>

  readonly insertApiKey: (key: ApiKeyRecordInput) => Effect.Effect<ApiKey, StorageError>
  /** All keys, ordered by id. */
  readonly listApiKeys: Effect.Effect<ReadonlyArray<ApiKey>, StorageError>
  readonly findApiKey: (id: number) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  readonly findApiKeyByHash: (hash: string) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  readonly setApiKeyEnabled: (id: number, enabled: boolean) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  readonly touchApiKey: (id: number, at: string) => Effect.Effect<void, StorageError>
  readonly deleteApiKey: (id: number) => Effect.Effect<boolean, StorageError>

  /** The offset the bot's next getUpdates asks for: 0 until a batch was committed. */
  readonly ingressOffset: (botId: number) => Effect.Effect<number, StorageError>
  /**
   * In one transaction: adds the updates the inbox does not hold yet (by bot and update_id) and
   * raises the bot's ingress offset to `nextOffset` (never lowers it). Returns how many were new.
   */
  readonly commitUpdates: (
    botId: number,
    updates: ReadonlyArray<Pick<InboxUpdate, "update_id" | "payload" | "received_at">>,
    nextOffset: number
  ) => Effect.Effect<number, StorageError>
  /** The secret Telegram sends with the bot's webhook updates; `None` while no webhook is registered. */
  readonly webhookSecret: (botId: number) => Effect.Effect<Option.Option<string>, StorageError>
  /** Stores the bot's webhook secret; `undefined` clears it. */
  readonly setWebhookSecret: (botId: number, secret: string | undefined) => Effect.Effect<void, StorageError>
  /** The bot's unprocessed updates, by update_id ascending, at most `limit`. */
  readonly pendingUpdates: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<InboxUpdate>, StorageError>
  /**
   * In one transaction for the whole batch: for each completion, saves the messages, queues the
   * deliveries and route sends, adds the update to the bot's long-poll buffer (unless held there already) and marks
   * the update processed. A completion whose update the inbox does not hold unprocessed is skipped,
   * so completing twice is harmless.
   */
  readonly completeUpdates: (completions: ReadonlyArray<UpdateCompletion>) => Effect.Effect<void, StorageError>
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

  /** The bot's oldest pending deliveries (FIFO by id), whether or not they are due, at most `limit`. */
  readonly nextDeliveries: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /**
   * Records attempts, all or none: delivered, pending again (attempts + 1, next time, error), or dead.
   * Unknown ids are skipped.
   */
  readonly recordAttempts: (
    attempts: ReadonlyArray<readonly [id: number, outcome: DeliveryOutcome]>
  ) => Effect.Effect<void, StorageError>
  /** Deliveries newest first, optionally of one bot and one status, at most `limit`. */
  readonly listDeliveries: (filter: {
    readonly bot_id?: number
    readonly status?: DeliveryStatus
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Delivery>, StorageError>
  /** Puts a dead delivery back in line (pending, due now, attempts 0); `None` when absent or not dead. */
  readonly retryDelivery: (id: number, at: string) => Effect.Effect<Option.Option<Delivery>, StorageError>
  /**
   * Points the bot's pending deliveries at `url`, due at `at` with attempts 0 (the backoff starts over);
   * returns how many.
   */
  readonly retargetDeliveries: (botId: number, url: string, at: string) => Effect.Effect<number, StorageError>

  /** The bot's oldest pending route sends (FIFO by id), whether or not they are due, at most `limit`. */
  readonly nextSends: (botId: number, limit: number) => Effect.Effect<ReadonlyArray<RouteSend>, StorageError>
  /**
   * In one transaction: records an attempt at a send (sent; pending again with attempts + 1, next time
   * and error; or dead) and adds the mappings it produced. An unknown id records nothing.
   */
  readonly recordSend: (
    id: number,
    outcome: SendOutcome,
    mappings: ReadonlyArray<NewRouteMapping>
  ) => Effect.Effect<void, StorageError>
  /** Route sends newest first, optionally of one sending bot and one status, at most `limit`. */
  readonly listSends: (filter: {
    readonly bot_id?: number
    readonly status?: SendStatus
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<RouteSend>, StorageError>
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

  /** Forgets the bot's buffered updates whose update_id is below `offset`; returns how many. */
  readonly confirmBuffered: (botId: number, offset: number) => Effect.Effect<number, StorageError>
  /** Forgets all but the bot's `count` newest buffered updates; returns how many were forgotten. */
  readonly keepNewestBuffered: (botId: number, count: number) => Effect.Effect<number, StorageError>
  /** The bot's buffered updates from update_id `offset` up whose type `types` lets through, by update_id. */
  readonly readBuffered: (
    botId: number,
    query: BufferQuery
  ) => Effect.Effect<ReadonlyArray<BufferedUpdate>, StorageError>
  /** How many updates the bot's buffer holds. */
  readonly countBuffered: (botId: number) => Effect.Effect<number, StorageError>
  /** Forgets every buffered update of the bot; returns how many. Not counted as trimmed. */
  readonly dropBuffered: (botId: number) => Effect.Effect<number, StorageError>
  /**
   * In one transaction: forgets the bot's oldest buffered updates beyond `max_updates` and those buffered
   * before `before`; when any were, adds their number to the bot's trimmed count and records `at` as the
   * last trim. Returns how many.
   */
  readonly trimBuffered: (botId: number, retention: BufferRetention) => Effect.Effect<number, StorageError>
  /** The bot's remembered allowed_updates and trims; `[]`, 0 and "" for a bot never polled or trimmed. */
  readonly bufferState: (botId: number) => Effect.Effect<BufferState, StorageError>
  /** Remembers the allowed_updates of the bot's getUpdates. */
  readonly setAllowedUpdates: (botId: number, types: ReadonlyArray<string>) => Effect.Effect<void, StorageError>

  /** The stored values of these settings; names without a value are absent from the result. */
  readonly readSettings: (
    names: ReadonlyArray<string>
  ) => Effect.Effect<Readonly<Record<string, string>>, StorageError>
  /** Stores settings in one transaction; `undefined` forgets a setting. */
  readonly writeSettings: (values: Readonly<Record<string, string | undefined>>) => Effect.Effect<void, StorageError>

  /** Succeeds when storage can serve queries. */
  readonly ping: Effect.Effect<void, StorageError>
}

/**
 * Settings whose values are secrets: drivers that encrypt at rest encrypt these (the LLM router's key).
 * The bot tokens, bots' `secret_token` and webhook secrets are secrets too.
 */
export const secretSettings: ReadonlySet<string> = new Set(["llm.api_key"])

/** The storage a Botrelay instance runs on; the host chooses the driver. */
export class Storage extends Context.Tag("@botrelay/core/Storage")<Storage, StorageService>() {}
