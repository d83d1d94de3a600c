import type * as Http from "node:http"
import type { HttpServerResponse } from "@effect/platform"
import { type Bot, Bots, CallParams, type Deliveries, Events, type LongPoll, type SentMessages } from "@botrelay/core"
import { BotApiAnswer, LocalMethods, TgApi } from "@botrelay/http"
import type { HttpExchange } from "@botrelay/telegram"
import { Cause, Effect, Exit, FiberId, Option, Queue, Runtime, type Scope } from "effect"
import * as Http1Client from "./Http1Client.js"

/** Bodies up to this size are taken here; larger ones go the streaming way. */
const maxBody = 1024 * 1024

/** `/tgapi/bot<token>/<method>` with an optional query string. */
const callPath = /^\/tgapi\/bot([^/?]+)\/([^/?]+)(\?.*)?$/

/**
 * Serves the proxy's hottest calls on node:http directly, before Botrelay's HTTP app sees them: Bot API
 * calls of known, enabled bots with a JSON, form or empty body of declared length, passed on read whole
 * over `Http1Client` (`TgApi.upstreamRequest` and `TgApi.captured`, as the app's /tgapi route does), and
 * getUpdates with a body of declared length, answered from the long-poll buffer (`LocalMethods`, as the
 * route does; a request whose client goes away stops waiting).
 * The app's server stack and a fiber per call cost more than the whole pass-through, so this is what
 * lets the proxy keep up with Telegram-speed backends. What the calls of one event-loop turn sent is
 * captured in one write, and each client gets its answer once that write is done. Anything else
 * (unknown tokens, the other local methods, uploads, files, bad paths) is left to the app, which answers it; a
 * bot's first call goes there too and makes it known here. Bots are forgotten on every change to any
 * bot (route changes leave them), so a disabled or re-tokened bot is never served from here.
 */
export const make: Effect.Effect<
  (req: Http.IncomingMessage, res: Http.ServerResponse) => boolean,
  never,
  | Bots.Bots
  | LongPoll.LongPoll
  | Deliveries.Deliveries
  | SentMessages.SentMessages
  | Events.Events
  | HttpExchange.HttpExchange
  | TgApi.Upstream
  | Scope.Scope
> = Effect.gen(function*() {
  const bots = yield* Bots.Bots
  const { capture, upstreamRequest } = yield* TgApi.makeRelay
  const getUpdates = (yield* LocalMethods.make).get("getupdates")!
  const runtime = yield* Effect.runtime<never>()
  const client = yield* Effect.acquireRelease(Effect.sync(() => Http1Client.make()), (c) => Effect.sync(c.close))
  const known = new Map<string, Bot.StoredBot>()
  /** Bumped on every change, so a lookup that started before one never stores what it read. */
  let generation = 0

  const events = yield* (yield* Events.Events).subscribe("BotChanged")
  yield* Queue.take(events).pipe(
    Effect.map((event) => {
      if (event._tag !== "BotChanged") return
      generation++
      known.clear()
    }),
    Effect.forever,
    Effect.forkScoped
  )

  const learn = (token: string) =>
    Effect.suspend(() => {
      const started = generation
      return bots.byToken(token).pipe(
        Effect.map(Option.map((bot) => {
          if (!bot.disabled && generation === started) known.set(token, bot)
        })),
        Effect.ignore
      )
    })

  /** Calls answered by Telegram whose record is being written, each with the answer its client waits for. */
  let recording: Array<{ readonly call: SentMessages.Call; readonly answer: () => void }> = []

  const record = () => {
    const batch = recording
    recording = []
    Runtime.runFork(runtime)(capture(batch.map((b) => b.call))).addObserver(() => {
      for (const { answer } of batch) answer()
    })
  }

  /** Answers the client; an answer node:http refuses to send (a header it finds invalid) drops the connection. */
  const send = (
    res: Http.ServerResponse,
    status: number,
    headers: Readonly<Record<string, string>>,
    body: Uint8Array
  ) => {
    if (res.destroyed) return
    try {
      res.writeHead(status, { ...headers, "content-length": body.length })
    } catch {
      return void res.destroy()
    }
    res.end(body)
  }

  const failed = (res: Http.ServerResponse, status: number, description: string) =>
    send(res, status, { "content-type": "application/json" }, Buffer.from(BotApiAnswer.errorBody(status, description)))

  /** Logs a failure of Botrelay's own (never the call's URL) and answers a bare 500. */
  const unexpected = (res: Http.ServerResponse, call: Omit<TgApi.WholeCall, "body">, error: unknown) => {
    Runtime.runFork(runtime)(
      Effect.logError("a /tgapi call failed", error).pipe(
        Effect.annotateLogs({ bot_id: call.bot.id, method: call.method })
      )
    )
    failed(res, 500, "Internal Server Error")
  }

  const answered = (res: Http.ServerResponse, call: TgApi.WholeCall, answer: Http1Client.Answer) => {
    const relayed = TgApi.relayed(answer)
    const toRecord = TgApi.captured(call, answer)
    if (toRecord === undefined) return send(res, relayed.status, relayed.headers, relayed.body)
    if (recording.length === 0) setImmediate(record)
    recording.push({ call: toRecord, answer: () => send(res, relayed.status, relayed.headers, relayed.body) })
  }

  const pass = (res: Http.ServerResponse, call: TgApi.WholeCall) => {
    const cancel = client.request(upstreamRequest(call), (failure, answer) => {
      if (failure !== undefined) return failed(res, 502, TgApi.exchangeFailureDescription(failure))
      try {
        answered(res, call, answer!)
      } catch (error) {
        unexpected(res, call, error)
      }
    })
    res.once("close", () => {
      if (!res.writableFinished) cancel()
    })
  }

  /** Sends an answer of the app's local methods; those are JSON read whole. */
  const respond = (res: Http.ServerResponse, response: HttpServerResponse.HttpServerResponse) => {
    const body = response.body
    if (body._tag !== "Uint8Array") return failed(res, 500, "Internal Server Error")
    send(res, response.status, { ...response.headers, "content-type": body.contentType }, body.body)
  }

  /** Answers getUpdates from the bot's long-poll buffer; the poll ends when its client goes away. */
  const poll = (res: Http.ServerResponse, call: TgApi.WholeCall) => {
    const fiber = Runtime.runFork(runtime)(getUpdates(call.bot, CallParams.parse(call.search, call.body, call.contentType)))
    res.once("close", () => {
      if (!res.writableFinished) fiber.unsafeInterruptAsFork(FiberId.none)
    })
    fiber.addObserver((exit) => {
      if (Exit.isSuccess(exit)) respond(res, exit.value)
      else if (!Exit.isInterrupted(exit)) unexpected(res, call, Cause.squash(exit.cause))
    })
  }

  /** Reads the body whole, then `then` serves the call. */
  const read = (
    req: Http.IncomingMessage,
    res: Http.ServerResponse,
    call: Omit<TgApi.WholeCall, "body">,
    then: (res: Http.ServerResponse, call: TgApi.WholeCall) => void
  ) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      try {
        then(res, {
          bot: call.bot,
          method: call.method,
          search: call.search,
          httpMethod: call.httpMethod,
          contentType: call.contentType,
          body
        })
      } catch (error) {
        unexpected(res, call, error)
      }
    })
  }

  /** Serves the request when it is one of the calls taken here; false leaves it to the app. */
  return (req: Http.IncomingMessage, res: Http.ServerResponse): boolean => {
    const url = req.url
    if (url === undefined || !url.startsWith("/tgapi/bot")) return false
    const match = callPath.exec(url)
    if (match === null) return false
    const [, tokenSegment, method, search] = match as unknown as [string, string, string, string | undefined]
    const contentType = req.headers["content-type"]
    const length = req.headers["content-length"]
    const hasBody = length !== undefined && length !== "0"
    const polls = method.toLowerCase() === "getupdates"
    if (
      (req.method !== "POST" && req.method !== "GET") || req.headers["transfer-encoding"] !== undefined ||
      (hasBody && Number(length) > maxBody) || (!polls && !TgApi.passesWhole(method, contentType))
    ) return false
    const token = TgApi.decode(tokenSegment)
    if (token === undefined) return false
    const bot = known.get(token)
    if (bot === undefined) {
      Runtime.runFork(runtime)(learn(token))
      return false
    }
    read(req, res, { bot, method, search: search ?? "", httpMethod: req.method, contentType }, polls ? poll : pass)
    return true
  }
})
