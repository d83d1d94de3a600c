import type * as Http from "node:http"
import { BotActivity, type Bot, Storage } from "@botrelay/core"
import { BotApiAnswer, TgApi } from "@botrelay/http"
import { Cause, Effect, Exit, Fiber, Option, Queue, Runtime } from "effect"

/** Bodies up to this size are taken here; larger ones go the streaming way. */
const maxBody = 1024 * 1024

/** `/tgapi/bot<token>/<method>` with an optional query string. */
const callPath = /^\/tgapi\/bot([^/?]+)\/([^/?]+)(\?.*)?$/

/**
 * Serves the proxy's hottest calls on node:http directly, before Botrelay's HTTP app sees them: Bot API
 * calls of known, enabled bots with a JSON, form or empty body of declared length, passed on read whole
 * (`TgApi.makeRelay`, the same code the app's /tgapi route runs). The app's server stack costs more per
 * request than the whole pass-through, so this is what lets the proxy keep up with Telegram-speed
 * backends. Anything else (unknown tokens, local methods, uploads, files, bad paths) is left to the app,
 * which answers it; a bot's first call goes there too and makes it known here. Bots are forgotten on
 * every change to any bot, so a disabled or re-tokened bot is never served from here.
 */
export const make = Effect.gen(function*() {
  const storage = yield* Storage.Storage
  const activity = yield* BotActivity.BotActivity
  const { passWhole } = yield* TgApi.makeRelay
  const runtime = yield* Effect.runtime<never>()
  const known = new Map<string, Bot.StoredBot>()
  /** Bumped on every change, so a lookup that started before one never stores what it read. */
  let generation = 0

  const changes = yield* activity.subscribe
  yield* Queue.take(changes).pipe(
    Effect.zipRight(Effect.sync(() => {
      generation++
      known.clear()
    })),
    Effect.forever,
    Effect.forkScoped
  )

  const learn = (token: string) =>
    Effect.suspend(() => {
      const started = generation
      return storage.findBotByToken(token).pipe(
        Effect.map(Option.map((bot) => {
          if (!bot.disabled && generation === started) known.set(token, bot)
        })),
        Effect.ignore
      )
    })

  const send = (res: Http.ServerResponse, status: number, headers: Readonly<Record<string, string>>, body: Uint8Array) => {
    res.writeHead(status, { ...headers, "content-length": body.length })
    res.end(body)
  }

  const pass = (req: Http.IncomingMessage, res: Http.ServerResponse, call: Omit<TgApi.WholeCall, "body">) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const body = chunks.length === 0 ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      const fiber = Runtime.runFork(runtime)(passWhole({ ...call, body }))
      res.once("close", () => {
        if (!res.writableFinished) Runtime.runFork(runtime)(Fiber.interrupt(fiber))
      })
      fiber.addObserver((exit) => {
        if (Exit.isSuccess(exit)) return send(res, exit.value.status, exit.value.headers, exit.value.body)
        const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
        const description = failure === undefined ? undefined : TgApi.exchangeFailureDescription(failure)
        if (description === undefined && !Exit.isInterrupted(exit)) {
          Runtime.runFork(runtime)(
            Effect.logError("a /tgapi call failed").pipe(Effect.annotateLogs({ bot_id: call.bot.id, method: call.method }))
          )
        }
        if (res.destroyed) return
        const text = description === undefined
          ? BotApiAnswer.errorBody(500, "Internal Server Error")
          : BotApiAnswer.errorBody(502, description)
        send(res, description === undefined ? 500 : 502, { "content-type": "application/json" }, Buffer.from(text))
      })
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
    if (
      (req.method !== "POST" && req.method !== "GET") || req.headers["transfer-encoding"] !== undefined ||
      (hasBody && Number(length) > maxBody) || !TgApi.passesWhole(method, contentType)
    ) return false
    const token = TgApi.decode(tokenSegment)
    if (token === undefined) return false
    const bot = known.get(token)
    if (bot === undefined) {
      Runtime.runFork(runtime)(learn(token))
      return false
    }
    pass(req, res, { bot, tokenSegment, method, search: search ?? "", httpMethod: req.method, contentType })
    return true
  }
})
