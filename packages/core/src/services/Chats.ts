import { BotApi, TelegramClient } from "@botrelay/telegram"
import type { TelegramError } from "@botrelay/telegram"
import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import { BotDisabled, BotNotFound, type StoredBot } from "../domain/Bot.js"
import {
  type Chat,
  type ChatCounts,
  chatCursor,
  ChatNotFound,
  type ChatPage,
  type ChatType,
  type ChatUpdate,
  type Conversation,
  type ConversationStatus,
  countsOf,
  decodeChatCursor,
  HistoryDisabled,
  InvalidAssignee,
  type Priority
} from "../domain/Chat.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import * as Scope from "../domain/Scope.js"
import { nowSeconds } from "../internal/Time.js"
import { BotStore } from "../stores/BotStore.js"
import { ChatViews } from "../runtime/EventLog.js"
import { Event, Events } from "../runtime/Events.js"
import { AccountStore } from "../stores/AccountStore.js"
import { ChatStore } from "../stores/ChatStore.js"

/** A request for a page of chats. */
export interface ChatListRequest {
  /** One bot; without it, every bot in scope that keeps history. */
  readonly bot_id?: number | undefined
  /** Text the title, username or names contain, in any case. */
  readonly q?: string | undefined
  readonly type?: ChatType | undefined
  readonly unread?: boolean | undefined
  readonly statuses?: ReadonlyArray<ConversationStatus> | undefined
  readonly priorities?: ReadonlyArray<Priority> | undefined
  /** Accounts the chats are assigned to (0: unassigned). */
  readonly assignees?: ReadonlyArray<number> | undefined
  readonly limit: number
  /** `next_cursor` of the previous page. */
  readonly cursor?: string | undefined
}

/** A change of a chat's conversation state: the chat before and after, and what changed (`{field: [old, new]}`). */
export interface ConversationChange {
  readonly chat: Chat
  readonly changed: Readonly<Record<string, readonly [unknown, unknown]>>
}

/** The chats of bots that keep history: lists, read marks, refreshes from Telegram. */
export interface ChatsService {
  /**
   * A page of chats, newest activity first. With `bot_id`, that bot's (it must exist and keep history);
   * without, those of every bot in `scope` that keeps history (others are skipped).
   */
  readonly list: (
    request: ChatListRequest,
    scope: Scope.ChatScope
  ) => Effect.Effect<ChatPage, BotNotFound | HistoryDisabled | InvalidInput | StorageError>
  /** One chat of a bot that keeps history. */
  readonly get: (
    botId: number,
    chatId: number
  ) => Effect.Effect<Chat, BotNotFound | HistoryDisabled | ChatNotFound | StorageError>
  /** One chat as the API shows it, without checks; `None` when unknown (for event streams). */
  readonly find: (botId: number, chatId: number) => Effect.Effect<Option.Option<Chat>, StorageError>
  /** Marks everything in the chat up to now read (shared by all operators); the chat afterwards. */
  readonly read: (
    botId: number,
    chatId: number
  ) => Effect.Effect<Chat, BotNotFound | HistoryDisabled | ChatNotFound | StorageError>
  /**
   * Changes what the request gives of the chat's status, priority, assignee and snooze. `snoozed` needs a
   * `snoozed_until` in the future; any other status clears it. The assignee must be an enabled account
   * that may act on the bot (0 unassigns). A change publishes `ChatChanged`; no change writes nothing.
   */
  readonly update: (
    request: ChatUpdate
  ) => Effect.Effect<
    ConversationChange,
    BotNotFound | HistoryDisabled | ChatNotFound | InvalidInput | InvalidAssignee | StorageError
  >
  /** The counts of the chats of `bot_id` (checked) or of every bot in scope, narrowed to its chats; `me` is the caller's account (0 for keys). */
  readonly counts: (
    botId: number | undefined,
    scope: Scope.ChatScope,
    me: number
  ) => Effect.Effect<ChatCounts, BotNotFound | HistoryDisabled | StorageError>
  /** Asks Telegram for the chat's names and member count (getChat, getChatMemberCount); the chat afterwards. */
  readonly refresh: (
    botId: number,
    chatId: number
  ) => Effect.Effect<
    Chat,
    | BotNotFound
    | BotDisabled
    | HistoryDisabled
    | ChatNotFound
    | TelegramError.TelegramApiError
    | TelegramError.TelegramTransportError
    | StorageError
  >
}

/** The chats of bots that keep history. */
export class Chats extends Context.Tag("@botrelay/core/Chats")<Chats, ChatsService>() {}

const decodeChat = Schema.decodeUnknownEither(BotApi.Chat)

/** The bot, when it exists and keeps history. */
export const historyBot = (
  botStore: BotStore["Type"],
  botId: number
): Effect.Effect<StoredBot, BotNotFound | HistoryDisabled | StorageError> =>
  Effect.flatMap(botStore.findBot(botId), (found): Effect.Effect<StoredBot, BotNotFound | HistoryDisabled> => {
    if (Option.isNone(found)) return Effect.fail(new BotNotFound({ id: botId }))
    return found.value.manage_enabled ? Effect.succeed(found.value) : Effect.fail(new HistoryDisabled({ bot_id: botId }))
  })

/** The bots a request covers: the one it names (checked), else every bot in scope that keeps history. */
export const botsOf = (
  botStore: BotStore["Type"],
  chatStore: ChatStore["Type"],
  botId: number | undefined,
  scope: Scope.BotScope
): Effect.Effect<ReadonlyArray<number>, BotNotFound | HistoryDisabled | StorageError> =>
  botId !== undefined
    ? Effect.as(historyBot(botStore, botId), [botId])
    : Effect.map(chatStore.historyBotIds, (ids) => ids.filter((id) => Scope.includes(scope, id)))

/** The bots and chats a request covers: those of `botsOf`, narrowed to the chats of the scope. */
export const filterFor = (
  botStore: BotStore["Type"],
  chatStore: ChatStore["Type"],
  botId: number | undefined,
  scope: Scope.ChatScope
): Effect.Effect<Scope.ChatFilter, BotNotFound | HistoryDisabled | StorageError> =>
  Effect.map(botsOf(botStore, chatStore, botId, Scope.botsOf(scope)), (ids) => Scope.filterOf(scope, ids))

/** The conversation state a request makes of `before` at `now` (Unix seconds), or why it cannot. */
export const applyUpdate = (
  before: Conversation,
  request: Omit<ChatUpdate, "bot_id" | "chat_id">,
  now: number
): Either.Either<Conversation, InvalidInput> => {
  const status = request.status ?? before.status
  if (status !== "snoozed") {
    if (request.snoozed_until !== undefined && request.snoozed_until !== 0) {
      return Either.left(InvalidInput.field("snoozed_until", "snoozed_until needs status snoozed"))
    }
  }
  const snoozedUntil = status === "snoozed" ? request.snoozed_until ?? before.snoozed_until : 0
  if (status === "snoozed" && snoozedUntil <= now) {
    return Either.left(
      InvalidInput.field("snoozed_until", "status snoozed needs snoozed_until, a Unix time in seconds in the future")
    )
  }
  return Either.right({
    status,
    priority: request.priority ?? before.priority,
    assignee_id: request.assignee_id ?? before.assignee_id,
    snoozed_until: snoozedUntil
  })
}

/** What changed between two conversation states, `{field: [old, new]}`. */
export const changesOf = (before: Conversation, after: Conversation): Record<string, readonly [unknown, unknown]> => {
  const changed: Record<string, readonly [unknown, unknown]> = {}
  for (const field of ["status", "priority", "assignee_id", "snoozed_until"] as const) {
    if (before[field] !== after[field]) changed[field] = [before[field], after[field]]
  }
  return changed
}

/** How often a change lost to a concurrent one is tried again. */
const attempts = 5

/** Builds the service on the stores and `TelegramClient` the host provides. */
export const make: Effect.Effect<
  ChatsService,
  never,
  AccountStore | BotStore | ChatStore | Events | TelegramClient.TelegramClient
> = Effect
  .gen(function*() {
    const botStore = yield* BotStore
    const chatStore = yield* ChatStore
    const accountStore = yield* AccountStore
    const events = yield* Events
    const telegram = yield* TelegramClient.TelegramClient

    /** Fails unless the account may be given chats of the bot. */
    const checkAssignee = (botId: number, assigneeId: number) =>
      assigneeId === 0 ? Effect.void : accountStore.findAccount(assigneeId).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new InvalidAssignee({ assignee_id: assigneeId, reason: "is not an account" })),
          onSome: (account) =>
            !account.enabled
              ? Effect.fail(new InvalidAssignee({ assignee_id: assigneeId, reason: "is a disabled account" }))
              : account.role !== "admin" && !account.bot_ids.includes(botId)
              ? Effect.fail(new InvalidAssignee({ assignee_id: assigneeId, reason: `may not act on bot ${botId}` }))
              : Effect.void
        }))
      )

    const existing = (botId: number, chatId: number) =>
      chatStore.findChat(botId, chatId).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new ChatNotFound({ bot_id: botId, chat_id: chatId })),
          onSome: Effect.succeed
        }))
      )

    const get = (botId: number, chatId: number) =>
      historyBot(botStore, botId).pipe(Effect.zipRight(existing(botId, chatId)))

    return Chats.of({
      list: (request, scope) =>
        Effect.gen(function*() {
          const after = request.cursor === undefined ? undefined : decodeChatCursor(request.cursor)
          if (after !== undefined && Either.isLeft(after)) return yield* Effect.fail(InvalidInput.field("cursor", after.left))
          const filter = yield* filterFor(botStore, chatStore, request.bot_id, scope)
          const found = yield* chatStore.listChats({
            bot_ids: filter.bot_ids,
            chats: filter.chats,
            q: request.q,
            type: request.type,
            unread: request.unread,
            statuses: request.statuses,
            priorities: request.priorities,
            assignees: request.assignees,
            limit: request.limit + 1,
            after: after?.right
          })
          const items = found.slice(0, request.limit)
          return {
            items,
            next_cursor: found.length > request.limit ? chatCursor(items[items.length - 1]!) : null
          }
        }).pipe(Effect.withSpan("Chats.list")),

      get,

      find: (botId, chatId) => chatStore.findChat(botId, chatId),

      read: (botId, chatId) =>
        get(botId, chatId).pipe(
          Effect.zipRight(nowSeconds),
          Effect.flatMap((now) => chatStore.markRead(botId, chatId, now)),
          Effect.zipRight(existing(botId, chatId)),
          Effect.withSpan("Chats.read", { attributes: { bot_id: botId } })
        ),

      update: (request) =>
        Effect.gen(function*() {
          const { bot_id: botId, chat_id: chatId, ...change } = request
          yield* historyBot(botStore, botId)
          if (change.assignee_id !== undefined) yield* checkAssignee(botId, change.assignee_id)
          for (let attempt = 1;; attempt++) {
            const chat = yield* existing(botId, chatId)
            const after = yield* applyUpdate(chat, change, yield* nowSeconds)
            const changed = changesOf(chat, after)
            if (Object.keys(changed).length === 0) return { chat, changed }
            if (yield* chatStore.replaceConversation(botId, chatId, chat, after)) {
              yield* events.publish(Event.ChatChanged({ bot_id: botId, chat_id: chatId }))
              return { chat: yield* existing(botId, chatId), changed }
            }
            if (attempt === attempts) {
              return yield* Effect.fail(InvalidInput.field("chat_id", "the chat kept changing; try again"))
            }
          }
        }).pipe(Effect.withSpan("Chats.update", { attributes: { bot_id: request.bot_id } })),

      counts: (botId, scope, me) =>
        filterFor(botStore, chatStore, botId, scope).pipe(
          Effect.flatMap(chatStore.chatCounts),
          Effect.map((rows) => countsOf(rows, me)),
          Effect.withSpan("Chats.counts")
        ),

      refresh: (botId, chatId) =>
        Effect.gen(function*() {
          const bot = yield* historyBot(botStore, botId)
          if (bot.disabled) return yield* Effect.fail(new BotDisabled({ id: botId }))
          const chat = yield* existing(botId, chatId)
          const info = decodeChat(yield* telegram.call(bot.token, "getChat", { chat_id: chatId }))
          const count = yield* telegram.call(bot.token, "getChatMemberCount", { chat_id: chatId })
          const names = Either.isRight(info) ? info.right : chat
          yield* chatStore.updateChat(botId, chatId, {
            title: names.title ?? "",
            username: names.username ?? "",
            first_name: names.first_name ?? "",
            last_name: names.last_name ?? "",
            member_count: typeof count === "number" && Number.isSafeInteger(count) ? count : chat.member_count
          })
          return yield* existing(botId, chatId)
        }).pipe(Effect.withSpan("Chats.refresh", { attributes: { bot_id: botId } }))
    })
  })

/** The service on the stores and `TelegramClient` the host provides. */
export const layer: Layer.Layer<
  Chats,
  never,
  AccountStore | BotStore | ChatStore | Events | TelegramClient.TelegramClient
> = Layer.effect(
  Chats,
  make
)

/** `chat` events of the event log carry the Chat resource, read from the `ChatStore`. */
export const views: Layer.Layer<ChatViews, never, ChatStore> = Layer.effect(
  ChatViews,
  Effect.map(ChatStore, (store) => (botId: number, chatId: number) =>
    store.findChat(botId, chatId).pipe(
      Effect.map(Option.map((chat): unknown => chat)),
      Effect.orElseSucceed(() => Option.none())
    ))
)
