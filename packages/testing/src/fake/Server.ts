import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { adminMethods } from "./Admin.js"
import { type Answer, failure, notFound, ok, statusOf, unauthorized } from "./Answer.js"
import { noFiles, parseBody, readBody } from "./Body.js"
import { botMethods } from "./Bots.js"
import { chatMethods } from "./Chats.js"
import { takeDrop, takeFailure } from "./Errors.js"
import { fileMethods, serveFile } from "./Files.js"
import { decodeToken, sendJson } from "./Http.js"
import { recordCall } from "./Logs.js"
import { mediaMethods } from "./Media.js"
import { messageMethods } from "./Messages.js"
import type { Handler, Invoke, State } from "./State.js"
import { updateMethods } from "./Updates.js"
import { callbackMethods } from "./Users.js"

/** A listening fake server. */
export interface Server {
  readonly port: number
  /** Ends held polls, webhook deliveries and waits, then stops listening and drops open connections. */
  readonly close: () => Promise<void>
}

const makeInvoke = (state: State, methods: Readonly<Record<string, Handler>>): Invoke => {
  const methodNames = new Map(Object.keys(methods).map((name) => [name.toLowerCase(), name]))
  return async (bot, requested, params, context, webhookReply, parseFailure) => {
    const method = methodNames.get(requested.toLowerCase()) ?? requested
    const receivedAt = Date.now()
    const log = (result: Answer) => {
      recordCall(state, {
        botId: bot?.id,
        method,
        params,
        status: statusOf(result),
        receivedAt,
        ...(context.userAgent === undefined ? {} : { userAgent: context.userAgent }),
        ...(webhookReply ? { webhookReply: true as const } : {})
      })
      return result
    }
    if (bot === undefined) return log(unauthorized)
    const injected = takeFailure(state, method, bot)
    if (injected !== undefined) return log(injected)
    const handler = methods[method]
    if (handler === undefined) return log(notFound)
    if (parseFailure !== undefined) return log(parseFailure)
    const result = log(await handler(bot, params, context))
    if (webhookReply || !takeDrop(state, method, bot)) return result
    const unanswered = { ...result }
    state.dropped.add(unanswered)
    return unanswered
  }
}

/** `/bot<token>/<method>`: the call's answer. */
const answer = async (state: State, req: Http.IncomingMessage, url: URL, signal: AbortSignal): Promise<Answer> => {
  const route = /^\/bot([^/]+)\/([^/]+)$/.exec(url.pathname)
  if (route === null) return notFound
  const token = decodeToken(route[1]!)
  let requested: string
  try {
    requested = decodeURIComponent(route[2]!)
  } catch {
    return notFound
  }
  if (token === undefined) return notFound
  const query = Object.fromEntries(url.searchParams)
  const parsed = parseBody(await readBody(req), req.headers["content-type"] ?? "", { ...query })
  const bot = state.botsByToken.get(token)
  const userAgent = req.headers["user-agent"]
  return parsed._tag === "Params"
    ? state.invoke(bot, requested, parsed.params, { signal, files: parsed.files, userAgent }, false)
    : state.invoke(bot, requested, query, { signal, files: noFiles, userAgent }, false, parsed.failure)
}

/** Routes the Bot API methods and file downloads of `state` on 127.0.0.1, on a free port. */
export const listen = async (state: State): Promise<Server> => {
  state.invoke = makeInvoke(state, {
    ...botMethods,
    ...updateMethods(state),
    ...messageMethods(state),
    ...mediaMethods(state),
    ...callbackMethods(state),
    ...chatMethods(state),
    ...adminMethods(state),
    ...fileMethods(state)
  })
  const server = Http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    if (url.pathname.startsWith("/file/")) return serveFile(state, req, res, url)
    const controller = new AbortController()
    res.on("close", () => {
      if (!res.writableFinished) controller.abort()
    })
    answer(state, req, url, controller.signal).then(
      (result) => state.dropped.has(result) ? req.socket.destroy() : sendJson(res, result),
      () => sendJson(res, failure(500, "Internal Server Error"))
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const { port } = server.address() as AddressInfo
  return {
    port,
    close: async () => {
      state.closed = true
      for (const poll of [...state.heldPolls]) poll.finish(ok([]))
      for (const abort of [...state.inFlight]) abort()
      for (const wake of [...state.sleepers]) wake()
      for (const onClose of [...state.closers]) onClose()
      await Promise.all([...state.botsById.values()].map((bot) => bot.delivery ?? Promise.resolve()))
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    }
  }
}
