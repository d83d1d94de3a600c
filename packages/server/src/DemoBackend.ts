/**
 * The demo's one backend: a small bot on node:http at 127.0.0.1, the support bot's `backend_url`.
 * Botrelay POSTs it every update; it answers `/start` with a greeting and an inline keyboard as a
 * webhook reply, answers button presses (answerCallbackQuery, also a webhook reply) and follows them
 * with a message sent through Botrelay's `/tgapi`, as any bot behind Botrelay would.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Option, Schema, type Scope } from "effect"
import * as Cast from "./DemoCast.js"

/** The backend while it runs. */
export interface Backend {
  /** Its address, e.g. `http://127.0.0.1:45678/`. */
  readonly url: string
  /** Updates received so far (the latest 500), oldest first. */
  readonly received: () => ReadonlyArray<unknown>
  /** How many updates it has received. */
  readonly count: () => number
  /** Where it calls the Bot API from now on: the support bot's `/tgapi` root, `http://host/tgapi/bot<token>`. */
  readonly connect: (botApi: string) => void
  readonly close: () => Promise<void>
}

/** The most updates `received` keeps. */
const keep = 500

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > 1024 * 1024) req.destroy(new Error("body too large"))
      else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

const User = Schema.Struct({ first_name: Schema.String, language_code: Schema.optional(Schema.String) })
const ChatOf = Schema.Struct({ chat: Schema.Struct({ id: Schema.Number }) })

/** The parts of an update the bot reads; the rest is ignored. */
const Update = Schema.Struct({
  message: Schema.optional(Schema.Struct({ ...ChatOf.fields, text: Schema.optional(Schema.String), from: Schema.optional(User) })),
  callback_query: Schema.optional(Schema.Struct({
    id: Schema.String,
    from: User,
    data: Schema.optional(Schema.String),
    message: Schema.optional(ChatOf)
  }))
})

const languageOf = (user: typeof User.Type | undefined): Cast.Language => user?.language_code === "ru" ? "ru" : "en"

/** The topic buttons, two a row. */
const keyboard = (language: Cast.Language) => {
  const buttons = Cast.topics.map((topic) => ({ text: topic.button[language], callback_data: topic.data }))
  const rows: Array<typeof buttons> = []
  for (let i = 0; i < buttons.length; i += 2) rows.push(buttons.slice(i, i + 2))
  return { inline_keyboard: rows }
}

/** What the bot answers an update with: a webhook reply, and a message to send after it. */
const answer = (json: unknown): {
  readonly reply: Readonly<Record<string, unknown>> | undefined
  readonly after: Readonly<Record<string, unknown>> | undefined
} => {
  const none = { reply: undefined, after: undefined }
  const decoded = Schema.decodeUnknownOption(Update)(json)
  if (Option.isNone(decoded)) return none
  const { callback_query: query, message } = decoded.value
  if (message?.text?.startsWith("/") === true) {
    const language = languageOf(message.from)
    const start = /^\/start(@\w+)?(\s|$)/.test(message.text)
    return {
      reply: {
        method: "sendMessage",
        chat_id: message.chat.id,
        text: Cast.say(start ? Cast.greeting : Cast.unknownCommand, language, { first: message.from?.first_name ?? "" }),
        ...(start ? { reply_markup: keyboard(language) } : {})
      },
      after: undefined
    }
  }
  if (query !== undefined) {
    const language = languageOf(query.from)
    const topic = Cast.topics.find((t) => t.data === query.data)
    return {
      reply: {
        method: "answerCallbackQuery",
        callback_query_id: query.id,
        ...(topic === undefined ? {} : { text: topic.toast[language] })
      },
      after: topic === undefined || query.message === undefined
        ? undefined
        : { chat_id: query.message.chat.id, text: topic.prompt[language] }
    }
  }
  return none
}

/** Starts the backend on 127.0.0.1, port 0; it accepts only POSTs that carry `secret`. */
export const start = async (options: { readonly secret: string }): Promise<Backend> => {
  const received: Array<unknown> = []
  let count = 0
  let botApi: string | undefined
  let closed = false
  const inFlight = new Set<AbortController>()

  /** Sends a message through the Bot API; failures are the demo's own business (it may be stopping). */
  const send = (params: Readonly<Record<string, unknown>>) => {
    if (botApi === undefined || closed) return
    const abort = new AbortController()
    inFlight.add(abort)
    fetch(`${botApi}/sendMessage`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
      signal: abort.signal
    }).then((response) => response.arrayBuffer(), () => undefined).catch(() => undefined).finally(() =>
      inFlight.delete(abort)
    )
  }

  const server = createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end()
      return
    }
    if (req.headers["x-telegram-bot-api-secret-token"] !== options.secret) {
      res.writeHead(401).end()
      return
    }
    readBody(req).then((body) => {
      let update: unknown
      try {
        update = JSON.parse(body)
      } catch {
        res.writeHead(400).end()
        return
      }
      count++
      received.push(update)
      if (received.length > keep) received.splice(0, received.length - keep)
      const { after, reply } = answer(update)
      if (reply === undefined) {
        res.writeHead(200).end()
      } else {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply))
      }
      if (after !== undefined) res.once("finish", () => send(after))
    }, () => {
      if (!res.headersSent) res.writeHead(400).end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    received: () => [...received],
    count: () => count,
    connect: (api) => {
      botApi = api
    },
    close: async () => {
      closed = true
      for (const abort of inFlight) abort.abort()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    }
  }
}

/** The backend for the scope: closed, its own requests cut short, when the scope closes. */
export const make = (options: { readonly secret: string }): Effect.Effect<Backend, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => start(options)), (backend) => Effect.promise(() => backend.close()))
