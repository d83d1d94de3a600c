import type { BotApi } from "@botrelay/telegram"
import type { Cause, Scope } from "effect"
import { Duration, Effect } from "effect"
import { randomBytes } from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** Settings of a fake server. */
export interface Options {
  /** The clock behind `date` fields, in Unix seconds. Defaults to the wall clock. */
  readonly now?: () => number
}

/** A bot the fake knows. Its token is `<id>:<35 characters of [A-Za-z0-9_-]>`, like a real one. */
export interface FakeBot {
  readonly id: number
  readonly token: string
  readonly username: string
  readonly first_name: string
}

/** An error the next matching call answers with; the HTTP status is `error_code`. */
export interface InjectedError {
  readonly error_code: number
  readonly description: string
  readonly retry_after?: number
  readonly migrate_to_chat_id?: number
}

/** One request to `/bot<token>/<method>`. Holds the bot id, never the token. */
export interface CallRecord {
  /** The bot the token belongs to; undefined for unknown tokens. */
  readonly botId: number | undefined
  /** The method's canonical name when known (`sendMessage` for `SENDMESSAGE`), else as requested. */
  readonly method: string
  readonly params: Readonly<Record<string, unknown>>
  /** The HTTP status answered. */
  readonly status: number
}

/** A message a bot sent through the fake. */
export interface SentMessage {
  readonly botId: number
  readonly method: string
  readonly message: BotApi.Message
}

/** A running Bot API emulator on 127.0.0.1. */
export interface FakeTelegram {
  /** Where clients point, e.g. `http://127.0.0.1:45678` (no trailing slash). */
  readonly apiRoot: string
  readonly addBot: (options?: { readonly username?: string; readonly first_name?: string }) => FakeBot
  /** A user; the private chat with them (id = user id) exists from now on. */
  readonly addUser: (options?: {
    readonly first_name?: string
    readonly last_name?: string
    readonly username?: string
    readonly language_code?: string
  }) => BotApi.User
  /** A group (default), supergroup or channel; `username` makes it addressable as `@username`. */
  readonly addGroup: (options?: {
    readonly type?: "group" | "supergroup" | "channel"
    readonly title?: string
    readonly username?: string
  }) => BotApi.Chat
  /** The next call of `method` (any case; any bot unless `botId` is given) fails with `error`, once. */
  readonly failNext: (method: string, error: InjectedError, options?: { readonly botId?: number }) => void
  /** Every request so far, oldest first. */
  readonly calls: ReadonlyArray<CallRecord>
  /** Messages sent so far, oldest first, optionally of one bot. */
  readonly sent: (botId?: number) => ReadonlyArray<SentMessage>
  /** Calls `listener` for each message sent from now on; returns the unsubscribe function. */
  readonly onSent: (listener: (sent: SentMessage) => void) => () => void
  /** The first sent message, past or future, matching `predicate`; rejects after `timeout` (default 5 s). */
  readonly waitForSent: (
    predicate: (sent: SentMessage) => boolean,
    timeout?: Duration.DurationInput
  ) => Promise<SentMessage>
  /** Stops the server, dropping open connections. */
  readonly close: () => Promise<void>
}

interface Failure {
  readonly error_code: number
  readonly description: string
  readonly parameters?: { readonly retry_after?: number; readonly migrate_to_chat_id?: number }
}

type Answer = { readonly ok: true; readonly result: unknown } | Failure

type Params = Readonly<Record<string, unknown>>

interface Bot extends FakeBot {
  readonly user: BotApi.User
}

interface History {
  nextId: number
  readonly messages: Map<number, BotApi.Message>
}

type Handler = (bot: Bot, params: Params) => Answer

const failure = (error_code: number, description: string): Failure => ({ error_code, description })
const badRequest = (description: string) => failure(400, `Bad Request: ${description}`)
const notFound = failure(404, "Not Found")
const unauthorized = failure(401, "Unauthorized")

const tokenPattern = /^(\d+):[A-Za-z0-9_-]+$/

const asInt = (value: unknown): number | undefined => {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : undefined
  if (typeof value === "string" && /^\s*-?\d+\s*$/.test(value)) {
    const n = Number(value)
    return Number.isSafeInteger(n) ? n : undefined
  }
  return undefined
}

const asBool = (value: unknown): boolean => value === true || value === "true" || value === "True" || value === "1"

const asObject = (value: unknown): Record<string, unknown> | undefined => {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value)
    } catch {
      return undefined
    }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined
}

const asArray = (value: unknown): ReadonlyArray<unknown> | undefined => {
  if (typeof value === "string") {
    try {
      value = JSON.parse(value)
    } catch {
      return undefined
    }
  }
  return Array.isArray(value) ? value : undefined
}

const asText = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? String(value) : ""

const isEmpty = (value: unknown) => value === undefined || value === null || value === ""

const withoutReply = (message: BotApi.Message): BotApi.Message => {
  const { reply_to_message: _, ...rest } = message
  return rest
}

const makeToken = (id: number) => `${id}:AA${randomBytes(32).toString("base64url").slice(0, 33)}`

const readBody = (req: Http.IncomingMessage): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

type ParsedParams =
  | { readonly _tag: "Params"; readonly params: Params }
  | { readonly _tag: "Failure"; readonly failure: Failure }

const parseParams = async (req: Http.IncomingMessage, url: URL): Promise<ParsedParams> => {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams)
  const body = await readBody(req)
  const ok = (params: Params): ParsedParams => ({ _tag: "Params", params })
  const fail = (failure: Failure): ParsedParams => ({ _tag: "Failure", failure })
  if (body.length === 0) return ok(params)
  const header = req.headers["content-type"] ?? ""
  const contentType = header.toLowerCase()
  if (contentType.startsWith("application/json")) {
    const parsed = asObject(body.toString("utf8"))
    return parsed === undefined ? fail(badRequest("can't parse JSON object")) : ok({ ...params, ...parsed })
  }
  if (contentType.startsWith("application/x-www-form-urlencoded")) {
    return ok({ ...params, ...Object.fromEntries(new URLSearchParams(body.toString("utf8"))) })
  }
  if (contentType.startsWith("multipart/form-data")) {
    try {
      const form = await new Response(new Uint8Array(body), { headers: { "content-type": header } }).formData()
      form.forEach((value, name) => {
        params[name] = typeof value === "string"
          ? value
          : { file_name: value.name, mime_type: value.type, file_size: value.size }
      })
    } catch {
      return fail(badRequest("can't parse multipart/form-data"))
    }
  }
  return ok(params)
}

/** Starts a fake on 127.0.0.1 port 0, for callers outside Effect. Close it with `close()`. */
export const start = async (options: Options = {}): Promise<FakeTelegram> => {
  const now = options.now ?? (() => Math.floor(Date.now() / 1000))
  const botsByToken = new Map<string, Bot>()
  const botIds = new Set<number>()
  const users = new Map<number, BotApi.User>()
  const groups = new Map<number, BotApi.Chat>()
  const groupsByUsername = new Map<string, number>()
  const histories = new Map<string, History>()
  const failures = new Map<string, Array<{ readonly botId: number | undefined; readonly error: InjectedError }>>()
  const callLog: Array<CallRecord> = []
  const sentLog: Array<SentMessage> = []
  const listeners = new Set<(sent: SentMessage) => void>()
  let nextBot = 1
  let nextUser = 1
  let nextGroup = 1

  const findChat = (value: unknown): BotApi.Chat | number | undefined => {
    if (typeof value === "string" && value.startsWith("@")) {
      const id = groupsByUsername.get(value.slice(1).toLowerCase())
      return id === undefined ? undefined : groups.get(id)
    }
    const id = asInt(value)
    if (id === undefined) return undefined
    const user = users.get(id)
    if (user !== undefined) {
      return {
        id: user.id,
        first_name: user.first_name,
        ...(user.last_name === undefined ? {} : { last_name: user.last_name }),
        ...(user.username === undefined ? {} : { username: user.username }),
        type: "private"
      }
    }
    return groups.get(id) ?? (botIds.has(id) ? id : undefined)
  }

  const history = (bot: Bot, chat: BotApi.Chat): History => {
    const key = chat.type === "private" ? `${bot.id}/${chat.id}` : `${chat.id}`
    let found = histories.get(key)
    if (found === undefined) {
      found = { nextId: 1, messages: new Map() }
      histories.set(key, found)
    }
    return found
  }

  const record = (bot: Bot, method: string, message: BotApi.Message) => {
    const sent: SentMessage = { botId: bot.id, method, message }
    sentLog.push(sent)
    for (const listener of [...listeners]) listener(sent)
  }

  const methods: Record<string, Handler> = {
    getMe: (bot) => ({
      ok: true,
      result: {
        ...bot.user,
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
        can_connect_to_business: false,
        has_main_web_app: false
      }
    }),
    sendMessage: (bot, params) => {
      if (isEmpty(params["chat_id"])) return badRequest("chat_id is empty")
      const text = asText(params["text"])
      if (text.trim() === "") return badRequest("message text is empty")
      if (text.length > 4096) return badRequest("message is too long")
      const parseMode = params["parse_mode"]
      if (!isEmpty(parseMode) && !["HTML", "MarkdownV2", "Markdown"].includes(asText(parseMode))) {
        return badRequest("unsupported parse_mode")
      }
      const chat = findChat(params["chat_id"])
      if (chat === undefined) return badRequest("chat not found")
      if (typeof chat === "number") return failure(403, "Forbidden: bot can't send messages to bots")
      const chatHistory = history(bot, chat)
      const replyParameters = asObject(params["reply_parameters"])
      const replyTo = asInt(replyParameters?.["message_id"] ?? params["reply_to_message_id"])
      const replied = replyTo === undefined ? undefined : chatHistory.messages.get(replyTo)
      const allowWithoutReply = asBool(
        replyParameters?.["allow_sending_without_reply"] ?? params["allow_sending_without_reply"]
      )
      if (replyTo !== undefined && replied === undefined && !allowWithoutReply) {
        return badRequest("message to be replied not found")
      }
      const entities = asArray(params["entities"]) as ReadonlyArray<BotApi.MessageEntity> | undefined
      const message: BotApi.Message = {
        message_id: chatHistory.nextId++,
        ...(chat.type === "channel" ? { sender_chat: chat } : { from: bot.user }),
        chat,
        date: now(),
        ...(replied === undefined ? {} : { reply_to_message: withoutReply(replied) }),
        text,
        ...(entities === undefined || entities.length === 0 ? {} : { entities })
      }
      chatHistory.messages.set(message.message_id, message)
      record(bot, "sendMessage", message)
      return { ok: true, result: message }
    }
  }
  const methodNames = new Map(Object.keys(methods).map((name) => [name.toLowerCase(), name]))

  const takeFailure = (method: string, bot: Bot): InjectedError | undefined => {
    const queue = failures.get(method.toLowerCase())
    const index = queue?.findIndex((entry) => entry.botId === undefined || entry.botId === bot.id) ?? -1
    if (queue === undefined || index < 0) return undefined
    return queue.splice(index, 1)[0]?.error
  }

  const answer = async (req: Http.IncomingMessage, url: URL): Promise<Answer> => {
    const route = /^\/bot([^/]+)\/([^/]+)$/.exec(url.pathname)
    if (route === null) return notFound
    let token: string
    let requested: string
    try {
      token = decodeURIComponent(route[1]!)
      requested = decodeURIComponent(route[2]!)
    } catch {
      return notFound
    }
    if (!tokenPattern.test(token)) return notFound
    const bot = botsByToken.get(token)
    const method = methodNames.get(requested.toLowerCase()) ?? requested
    const parsed = await parseParams(req, url)
    const params = parsed._tag === "Params" ? parsed.params : {}
    const log = (result: Answer) => {
      const status = "ok" in result ? 200 : result.error_code
      callLog.push({ botId: bot?.id, method, params, status })
      return result
    }
    if (bot === undefined) return log(unauthorized)
    const injected = takeFailure(method, bot)
    if (injected !== undefined) {
      const parameters = {
        ...(injected.retry_after === undefined ? {} : { retry_after: injected.retry_after }),
        ...(injected.migrate_to_chat_id === undefined ? {} : { migrate_to_chat_id: injected.migrate_to_chat_id })
      }
      return log({
        error_code: injected.error_code,
        description: injected.description,
        ...(Object.keys(parameters).length === 0 ? {} : { parameters })
      })
    }
    const handler = methods[method]
    if (handler === undefined) return log(notFound)
    if (parsed._tag === "Failure") return log(parsed.failure)
    return log(handler(bot, params))
  }

  const server = Http.createServer((req, res) => {
    const reply = (result: Answer) => {
      const status = "ok" in result ? 200 : result.error_code
      const body = JSON.stringify("ok" in result ? result : { ok: false, ...result })
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    }
    answer(req, new URL(req.url ?? "/", "http://127.0.0.1")).then(reply, () =>
      reply(failure(500, "Internal Server Error")))
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  const closers = new Set<() => void>()

  const fake: FakeTelegram = {
    apiRoot: `http://127.0.0.1:${port}`,
    addBot: (options = {}) => {
      const n = nextBot++
      const id = 7_000_000_000 + n
      const username = options.username ?? `fake${n}_bot`
      const first_name = options.first_name ?? `Fake Bot ${n}`
      const bot: Bot = {
        id,
        token: makeToken(id),
        username,
        first_name,
        user: { id, is_bot: true, first_name, username }
      }
      botsByToken.set(bot.token, bot)
      botIds.add(id)
      return { id, token: bot.token, username, first_name }
    },
    addUser: (options = {}) => {
      const n = nextUser++
      const user: BotApi.User = {
        id: 100_000_000 + n,
        is_bot: false,
        first_name: options.first_name ?? `User ${n}`,
        ...(options.last_name === undefined ? {} : { last_name: options.last_name }),
        ...(options.username === undefined ? {} : { username: options.username }),
        ...(options.language_code === undefined ? {} : { language_code: options.language_code })
      }
      users.set(user.id, user)
      return user
    },
    addGroup: (options = {}) => {
      const n = nextGroup++
      const type = options.type ?? "group"
      const chat: BotApi.Chat = {
        id: type === "group" ? -(4_000_000_000 + n) : -(1_002_000_000_000 + n),
        title: options.title ?? `Group ${n}`,
        ...(type !== "group" && options.username !== undefined ? { username: options.username } : {}),
        type
      }
      groups.set(chat.id, chat)
      if (chat.username !== undefined) groupsByUsername.set(chat.username.toLowerCase(), chat.id)
      return chat
    },
    failNext: (method, error, options = {}) => {
      const key = method.toLowerCase()
      const queue = failures.get(key) ?? []
      queue.push({ botId: options.botId, error })
      failures.set(key, queue)
    },
    get calls() {
      return [...callLog]
    },
    sent: (botId) => sentLog.filter((sent) => botId === undefined || sent.botId === botId),
    onSent: (listener) => {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    waitForSent: (predicate, timeout = "5 seconds") => {
      const found = sentLog.find(predicate)
      if (found !== undefined) return Promise.resolve(found)
      return new Promise((resolve, reject) => {
        const done = () => {
          clearTimeout(timer)
          listeners.delete(listener)
          closers.delete(onClose)
        }
        const listener = (sent: SentMessage) => {
          if (!predicate(sent)) return
          done()
          resolve(sent)
        }
        const onClose = () => {
          done()
          reject(new Error("FakeTelegram closed while waiting for a sent message"))
        }
        const millis = Duration.toMillis(timeout)
        const timer = setTimeout(() => {
          done()
          reject(new Error(`no matching message sent within ${millis} ms (${sentLog.length} sent in total)`))
        }, millis)
        listeners.add(listener)
        closers.add(onClose)
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const onClose of [...closers]) onClose()
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
  return fake
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
