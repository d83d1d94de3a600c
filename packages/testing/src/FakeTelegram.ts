import type { Cause, Duration, Scope } from "effect"
import { Effect } from "effect"
import type { BotApi } from "@botrelay/telegram"
import { addMember, memberCount, memberOf, setRights, userOf } from "./fake/Admin.js"
import { addBot, revoke } from "./fake/Bots.js"
import { addGroup, addToGroup, addUser, groupOf, history, isMember, privateChat } from "./fake/Chats.js"
import { clearFailures, dropNext, failAlways, failNext } from "./fake/Errors.js"
import { fileContent } from "./fake/Files.js"
import { waitFor } from "./fake/Logs.js"
import { listen } from "./fake/Server.js"
import { botOf, makeState } from "./fake/State.js"
import type {
  CallRecord,
  FakeBot,
  InjectedError,
  Options,
  SentMessage,
  UploadedFile,
  UserMessage
} from "./fake/Types.js"
import { pushUpdate } from "./fake/Updates.js"
import { channelPost, userEdits, userPresses, userSends } from "./fake/Users.js"

export type {
  CallRecord,
  FakeBot,
  InjectedError,
  Options,
  SentMessage,
  UploadedFile,
  UserMessage,
  UserPhoto
} from "./fake/Types.js"


/** Telegram's refusal of a send to a person who blocked the bot: inject it with `failNext` or `failAlways`. */
export const blockedByUser: InjectedError = { error_code: 403, description: "Forbidden: bot was blocked by the user" }

/** A running Bot API emulator on 127.0.0.1. */
export interface FakeTelegram {
  /** Where clients point, e.g. `http://127.0.0.1:45678` (no trailing slash). */
  readonly apiRoot: string
  readonly addBot: (options?: { readonly username?: string; readonly first_name?: string }) => FakeBot
  /**
   * A user; the private chat with them (id = user id) exists from now on. Bots may write to it once
   * the user has messaged them; `startedBots` omitted means every bot counts as messaged.
   */
  readonly addUser: (options?: {
    readonly first_name?: string
    readonly last_name?: string
    readonly username?: string
    readonly language_code?: string
    readonly startedBots?: ReadonlyArray<number>
  }) => BotApi.User
  /**
   * A group (default), supergroup or channel; `username` makes it addressable as `@username`.
   * Only `members` see it; omitted, every bot, present or future, is a member. `creator` is the user id
   * of its owner (none by default).
   */
  readonly addGroup: (options?: {
    readonly type?: "group" | "supergroup" | "channel"
    readonly title?: string
    readonly username?: string
    readonly members?: ReadonlyArray<number>
    readonly creator?: number
  }) => BotApi.Chat
  /** Makes a bot a member of a group or channel (again, after `leaveChat` or a ban). */
  readonly addToGroup: (chatId: number, botId: number) => void
  /**
   * Makes a bot an administrator of a group or channel, promoted by a person, with these
   * ChatAdministratorRights (the others false); `undefined` makes it a plain member again.
   */
  readonly setRights: (chatId: number, botId: number, rights: Readonly<Record<string, boolean>> | undefined) => void
  /**
   * A user joins a group: as a member (default), as an administrator a person promoted (`rights`, by
   * default `can_manage_chat` only, and `custom_title`), or as its creator.
   */
  readonly addMember: (chatId: number, userId: number, options?: {
    readonly status?: "member" | "administrator" | "creator"
    readonly rights?: Readonly<Record<string, boolean>>
    readonly custom_title?: string
  }) => void
  /** The ChatMember object `getChatMember` answers the bot for the user (a person or a bot) in a group. */
  readonly chatMember: (chatId: number, userId: number, botId: number) => Readonly<Record<string, unknown>>
  /** Whether the bot is in the group or channel now. */
  readonly isMember: (chatId: number, botId: number) => boolean
  /** What `getChatMemberCount` answers for a group: its people and its bots. */
  readonly memberCount: (chatId: number) => number
  /** The pinned message ids of a chat as the bot sees it, oldest first. */
  readonly pinnedMessages: (botId: number, chatId: number) => ReadonlyArray<number>
  /** Whether the chat, as the bot sees it, still holds the message (false once deleted). */
  readonly hasMessage: (botId: number, chatId: number, messageId: number) => boolean
  /** Replaces a bot's token, as BotFather's /revoke does: the old one gets 401 from now on. */
  readonly revoke: (botId: number) => FakeBot
  /** The next call of `method` (any case; any bot unless `botId` is given) fails with `error`, once. */
  readonly failNext: (method: string, error: InjectedError, options?: { readonly botId?: number }) => void
  /** Every call of `method` (any bot unless `botId` is given) fails with `error` until `clearFailures`. */
  readonly failAlways: (method: string, error: InjectedError, options?: { readonly botId?: number }) => void
  /**
   * The next call of `method` (any case; any bot unless `botId` is given) is carried out (a send is
   * recorded as sent) but the connection is dropped before the answer, once: the caller cannot know.
   */
  readonly dropNext: (method: string, options?: { readonly botId?: number }) => void
  /** Drops every injected failure, one-shot or not, and every pending `dropNext`. */
  readonly clearFailures: () => void
  /** A user writes to a bot; the `message` update goes to that bot, or to every bot in the group. */
  readonly userSends: (botId: number, message: UserMessage) => BotApi.Message
  /** A user edits their message; an `edited_message` update goes to the bot (every bot in a group). */
  readonly userEdits: (botId: number, chatId: number, messageId: number, text: string) => BotApi.Message
  /**
   * A post in a channel; a `channel_post` update goes to every bot in it. Posts bots send to a channel
   * reach its other bots the same way.
   */
  readonly channelPost: (botId: number, chatId: number, text: string) => BotApi.Message
  /** A user presses an inline button of `message`; a `callback_query` update goes to the bot. */
  readonly userPresses: (
    botId: number,
    message: BotApi.Message,
    data: string,
    options?: { readonly user?: BotApi.User }
  ) => BotApi.CallbackQuery
  /**
   * Queues any update (without `update_id`) for a bot. Undefined when the bot's `allowed_updates`
   * exclude its kind.
   */
  readonly enqueue: (botId: number, update: Readonly<Record<string, unknown>>) => BotApi.Update | undefined
  /** Updates not yet confirmed by `getUpdates` or delivered to the webhook, oldest first. */
  readonly pendingUpdates: (botId: number) => ReadonlyArray<BotApi.Update>
  /** Updates confirmed by an `offset` or a 2xx webhook answer, oldest first. Dropped ones are in neither list. */
  readonly updatesConfirmed: (botId: number) => ReadonlyArray<BotApi.Update>
  /** The bytes served for a file (an upload's exactly as received), or undefined for an unknown `file_id`. */
  readonly fileBytes: (fileId: string) => Uint8Array | undefined
  /** Files uploaded so far, oldest first, optionally of one bot. */
  readonly uploads: (botId?: number) => ReadonlyArray<UploadedFile>
  /** Every call so far, oldest first, logged when answered. */
  readonly calls: ReadonlyArray<CallRecord>
  /** The first call, past or future, matching `predicate`; rejects after `timeout` (default 5 s). */
  readonly waitForCall: (
    predicate: (call: CallRecord) => boolean,
    timeout?: Duration.DurationInput
  ) => Promise<CallRecord>
  /** Resolves once a `getUpdates` of the bot is held open (now or later); rejects after `timeout` (default 5 s). */
  readonly waitForPoll: (botId: number, timeout?: Duration.DurationInput) => Promise<void>
  /** Messages sent so far, oldest first, optionally of one bot. */
  readonly sent: (botId?: number) => ReadonlyArray<SentMessage>
  /** Calls `listener` for each message sent from now on; returns the unsubscribe function. */
  readonly onSent: (listener: (sent: SentMessage) => void) => () => void
  /** The first sent message, past or future, matching `predicate`; rejects after `timeout` (default 5 s). */
  readonly waitForSent: (
    predicate: (sent: SentMessage) => boolean,
    timeout?: Duration.DurationInput
  ) => Promise<SentMessage>
  /** Stops the server: ends held polls and webhook deliveries and drops open connections. */
  readonly close: () => Promise<void>
}

/** Starts a fake on 127.0.0.1 port 0, for callers outside Effect. Close it with `close()`. */
export const start = async (options: Options = {}): Promise<FakeTelegram> => {
  const state = makeState(options)
  const server = await listen(state)
  /** The chat as the bot sees it: a user's private chat with it, or a group. */
  const chatHistory = (botId: number, chatId: number) => {
    const person = state.people.get(chatId)
    const chat = person === undefined ? groupOf(state, chatId).chat : privateChat(person.user)
    return history(state, botOf(state, botId), chat)
  }
  return {
    apiRoot: `http://127.0.0.1:${server.port}`,
    addBot: (options = {}) => addBot(state, options),
    addUser: (options = {}) => addUser(state, options),
    addGroup: (options = {}) => addGroup(state, options),
    addToGroup: (chatId, botId) => addToGroup(state, chatId, botId),
    setRights: (chatId, botId, rights) => setRights(state, chatId, botOf(state, botId), rights),
    addMember: (chatId, userId, options = {}) => addMember(state, chatId, userId, options),
    chatMember: (chatId, userId, botId) => {
      const user = userOf(state, userId)
      if (user === undefined) throw new Error(`FakeTelegram: no user ${userId}`)
      return memberOf(state, groupOf(state, chatId), user, botOf(state, botId))
    },
    isMember: (chatId, botId) => isMember(groupOf(state, chatId), botOf(state, botId)),
    memberCount: (chatId) => memberCount(state, groupOf(state, chatId)),
    pinnedMessages: (botId, chatId) => [...chatHistory(botId, chatId).pinned],
    hasMessage: (botId, chatId, messageId) => chatHistory(botId, chatId).messages.has(messageId),
    revoke: (botId) => revoke(state, botId),
    failNext: (method, error, options = {}) => failNext(state, method, error, options.botId),
    failAlways: (method, error, options = {}) => failAlways(state, method, error, options.botId),
    dropNext: (method, options = {}) => dropNext(state, method, options.botId),
    clearFailures: () => clearFailures(state),
    userSends: (botId, message) => userSends(state, botId, message),
    userEdits: (botId, chatId, messageId, text) => userEdits(state, botId, chatId, messageId, text),
    channelPost: (botId, chatId, text) => channelPost(state, botId, chatId, text),
    userPresses: (botId, message, data, options = {}) => userPresses(state, botId, message, data, options),
    enqueue: (botId, update) => pushUpdate(state, botOf(state, botId), update),
    pendingUpdates: (botId) => [...botOf(state, botId).queue],
    updatesConfirmed: (botId) => [...botOf(state, botId).confirmed],
    fileBytes: (fileId) => {
      const file = state.files.get(fileId)
      return file === undefined ? undefined : new Uint8Array(fileContent(file))
    },
    uploads: (botId) => state.uploadLog.filter((upload) => botId === undefined || upload.botId === botId),
    get calls() {
      return [...state.callLog]
    },
    waitForCall: (predicate, timeout = "5 seconds") =>
      waitFor(
        state,
        state.callLog,
        state.callListeners,
        predicate,
        timeout,
        "a call",
        (ms) => `no matching call within ${ms} ms (${state.callLog.length} calls in total)`
      ),
    waitForPoll: (botId, timeout = "5 seconds") => {
      const bot = botOf(state, botId)
      if (bot.poll !== undefined) return Promise.resolve()
      return waitFor<number>(
        state,
        [],
        state.pollListeners,
        (id) => id === botId,
        timeout,
        "a poll",
        (ms) => `no getUpdates of bot ${botId} held within ${ms} ms`
      ).then(() => undefined)
    },
    sent: (botId) => state.sentLog.filter((sent) => botId === undefined || sent.botId === botId),
    onSent: (listener) => {
      state.sentListeners.add(listener)
      return () => state.sentListeners.delete(listener)
    },
    waitForSent: (predicate, timeout = "5 seconds") =>
      waitFor(
        state,
        state.sentLog,
        state.sentListeners,
        predicate,
        timeout,
        "a sent message",
        (ms) => `no matching message sent within ${ms} ms (${state.sentLog.length} sent in total)`
      ),
    close: server.close
  }
}

/** Starts a fake on 127.0.0.1 port 0 and stops it, connections included, when the scope closes. */
export const make = (options?: Options): Effect.Effect<FakeTelegram, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => start(options)),
    (fake) => Effect.promise(() => fake.close())
  )

/** The first sent message, past or future, matching `predicate`; fails after `timeout` (default 5 s). */
export const awaitSent = (
  fake: FakeTelegram,
  predicate: (sent: SentMessage) => boolean,
  timeout: Duration.DurationInput = "5 seconds"
): Effect.Effect<SentMessage, Cause.TimeoutException> =>
  Effect.async<SentMessage>((resume) => {
    const found = fake.sent().find(predicate)
    if (found !== undefined) return resume(Effect.succeed(found))
    const unsubscribe = fake.onSent((sent) => {
      if (!predicate(sent)) return
      unsubscribe()
      resume(Effect.succeed(sent))
    })
    return Effect.sync(unsubscribe)
  }).pipe(Effect.timeout(timeout))
