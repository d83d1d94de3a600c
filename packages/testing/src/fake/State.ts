import type { BotApi } from "@botrelay/telegram"
import { Duration } from "effect"
import { randomBytes, randomInt } from "node:crypto"
import type { Answer, Failure } from "./Answer.js"
import type { FilePart } from "./Body.js"
import type { Injected } from "./Errors.js"
import type { MediaKind } from "./MediaKinds.js"
import type { Params } from "./Params.js"
import type { CallRecord, Options, SentMessage, UploadedFile } from "./Types.js"

/** A held `getUpdates`. */
export interface Poll {
  readonly limit: number
  readonly finish: (answer: Answer) => void
}

/** A bot's webhook, as `setWebhook` set it. */
export interface Webhook {
  readonly url: string
  readonly secret: string | undefined
  readonly maxConnections: number
}

/** A bot and its update queue. */
export interface Bot {
  readonly id: number
  token: string
  readonly username: string
  readonly first_name: string
  readonly user: BotApi.User
  nextUpdateId: number
  queue: Array<BotApi.Update>
  readonly confirmed: Array<BotApi.Update>
  allowed: ReadonlyArray<string>
  poll: Poll | undefined
  webhook: Webhook | undefined
  lastError: { readonly date: number; readonly message: string } | undefined
  delivery: Promise<void> | undefined
}

/** A user, and the bots they have messaged. */
export interface Person {
  readonly user: BotApi.User
  readonly started: Set<number> | "all"
}

/** An administrator of a group or channel: their rights, custom title and who promoted them. */
export interface Admin {
  /** ChatAdministratorRights by Telegram's field names; absent ones are false. */
  readonly rights: Readonly<Record<string, boolean>>
  custom_title: string
  /** The bot that promoted them; undefined when a person did (the bot then cannot edit them). */
  readonly promotedBy: number | undefined
}

/** A group, supergroup or channel: the bots in it, its people and their standing, its pins. */
export interface Group {
  readonly chat: BotApi.Chat
  readonly members: Set<number> | "all"
  /** Bots that left with `leaveChat`: no longer members, whatever `members` says, until added again. */
  readonly left: Set<number>
  /** The people in it by user id, the creator and administrators included. */
  readonly users: Set<number>
  /** The creator's user id. */
  creator: number | undefined
  /** Administrators other than the creator, people or bots, by user id. */
  readonly admins: Map<number, Admin>
  /** Banned users and their `until_date` (0: for ever). */
  readonly banned: Map<number, number>
  /** Restricted members: their ChatPermissions and `until_date`. */
  readonly restricted: Map<number, { readonly permissions: Readonly<Record<string, boolean>>; readonly until_date: number }>
}

/** The messages of a chat as one bot sees them (private chats), or as all do (groups). */
export interface History {
  nextId: number
  readonly messages: Map<number, BotApi.Message>
  /** The bot that sent each message, by message id. */
  readonly authors: Map<number, number>
  /** Pinned message ids, oldest first. */
  readonly pinned: Array<number>
}

/** A file `getFile` and the download route know. */
export interface StoredFile {
  readonly file_id: string
  readonly file_unique_id: string
  readonly file_size: number
  readonly file_path: string
  readonly mime_type: string
  readonly kind: MediaKind
  readonly seed: number
  /** The bytes of an upload; generated files have none and are made from `seed`. */
  readonly bytes: Buffer | undefined
}

/** What a call carries besides its parameters. */
export interface Context {
  readonly signal: AbortSignal | undefined
  /** The file parts of a multipart request, by part name. */
  readonly files: ReadonlyMap<string, FilePart>
  /** The request's `User-Agent` header, when it had one. */
  readonly userAgent?: string | undefined
}

/** A Bot API method's implementation. */
export type Handler = (bot: Bot, params: Params, context: Context) => Answer | Promise<Answer>

/** One call through the whole pipeline: token, injected failures, method, handler; logged when answered. */
export type Invoke = (
  bot: Bot | undefined,
  requested: string,
  params: Params,
  context: Context,
  webhookReply: boolean,
  parseFailure?: Failure
) => Promise<Answer>

/** Everything one fake knows and has seen. */
export interface State {
  readonly now: () => number
  readonly retryDelay: number
  readonly webhookTimeout: number
  readonly botsByToken: Map<string, Bot>
  readonly botsById: Map<number, Bot>
  readonly people: Map<number, Person>
  readonly groups: Map<number, Group>
  readonly groupsByUsername: Map<string, number>
  readonly histories: Map<string, History>
  readonly files: Map<string, StoredFile>
  readonly filesByPath: Map<string, StoredFile>
  /** The message field each file appeared in (a PhotoSize array for photos), to send it again by `file_id`. */
  readonly mediaOf: Map<string, unknown>
  readonly uploadLog: Array<UploadedFile>
  readonly callbacks: Map<string, { readonly botId: number; answered: boolean }>
  readonly oneShot: Array<Injected>
  readonly always: Array<Injected>
  /** Calls to carry out and then leave unanswered, the connection dropped (`dropNext`), once each. */
  readonly drops: Array<{ readonly method: string; readonly botId: number | undefined }>
  /** The answers of those calls: never written. */
  readonly dropped: WeakSet<object>
  readonly callLog: Array<CallRecord>
  readonly sentLog: Array<SentMessage>
  readonly sentListeners: Set<(sent: SentMessage) => void>
  readonly callListeners: Set<(call: CallRecord) => void>
  readonly pollListeners: Set<(botId: number) => void>
  readonly closers: Set<() => void>
  readonly heldPolls: Set<Poll>
  readonly inFlight: Set<() => void>
  readonly sleepers: Set<() => void>
  closed: boolean
  nextBot: number
  nextUser: number
  nextGroup: number
  nextFile: number
  nextQuery: number
  nextAlbum: number
  defaultUser: BotApi.User | undefined
  readonly queryPrefix: string
  /** The call pipeline, for webhook replies; set by the server once its methods exist. */
  invoke: Invoke
}

/** Milliseconds of a duration. */
export const millis = (duration: Duration.DurationInput) => Duration.toMillis(Duration.decode(duration))

/** An empty fake. */
export const makeState = (options: Options): State => ({
  now: options.now ?? (() => Math.floor(Date.now() / 1000)),
  retryDelay: millis(options.webhookRetryDelay ?? 100),
  webhookTimeout: millis(options.webhookTimeout ?? "10 seconds"),
  botsByToken: new Map(),
  botsById: new Map(),
  people: new Map(),
  groups: new Map(),
  groupsByUsername: new Map(),
  histories: new Map(),
  files: new Map(),
  filesByPath: new Map(),
  mediaOf: new Map(),
  uploadLog: [],
  callbacks: new Map(),
  oneShot: [],
  always: [],
  drops: [],
  dropped: new WeakSet(),
  callLog: [],
  sentLog: [],
  sentListeners: new Set(),
  callListeners: new Set(),
  pollListeners: new Set(),
  closers: new Set(),
  heldPolls: new Set(),
  inFlight: new Set(),
  sleepers: new Set(),
  closed: false,
  nextBot: 1,
  nextUser: 1,
  nextGroup: 1,
  nextFile: 1,
  nextQuery: 1,
  nextAlbum: 1,
  defaultUser: undefined,
  queryPrefix: String(randomInt(100_000, 999_999)),
  invoke: () => Promise.reject(new Error("FakeTelegram: no server yet"))
})

/** A token for bot `id`: `<id>:` and 35 characters of [A-Za-z0-9_-]. */
export const makeToken = (id: number) => `${id}:AA${randomBytes(32).toString("base64url").slice(0, 33)}`

/** The bot with `botId`; throws for an unknown one. */
export const botOf = (state: State, botId: number): Bot => {
  const bot = state.botsById.get(botId)
  if (bot === undefined) throw new Error(`FakeTelegram: no bot ${botId}`)
  return bot
}
