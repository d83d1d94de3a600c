import type { BotApi } from "@botrelay/telegram"
import * as Http from "node:http"
import * as Https from "node:https"
import { parseBody, readBody } from "./Body.js"
import type { Bot, State, Webhook } from "./State.js"

type Outcome =
  | { readonly _tag: "Delivered"; readonly body: Buffer; readonly contentType: string }
  | { readonly _tag: "Failed"; readonly message: string }

const describeConnectionError = (error: unknown): string => {
  const code = (error as { readonly code?: unknown } | undefined)?.code
  switch (code) {
    case "ECONNREFUSED":
      return "Connection refused"
    case "ETIMEDOUT":
      return "Read timeout expired"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "Failed to resolve host: Name or service not known"
    default:
      return "Connection reset by peer"
  }
}

const sleep = (state: State, ms: number) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      state.sleepers.delete(done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    state.sleepers.add(done)
  })

const postUpdate = (state: State, hook: Webhook, update: BotApi.Update): Promise<Outcome> =>
  new Promise((resolve) => {
    let settled = false
    const settle = (outcome: Outcome) => {
      if (settled) return
      settled = true
      state.inFlight.delete(abort)
      resolve(outcome)
    }
    const abort = () => {
      settle({ _tag: "Failed", message: "Connection closed" })
      request.destroy()
    }
    const body = JSON.stringify(update)
    const url = new URL(hook.url)
    const request = (url.protocol === "https:" ? Https : Http).request(url, {
      method: "POST",
      agent: false,
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        ...(hook.secret === undefined ? {} : { "x-telegram-bot-api-secret-token": hook.secret })
      }
    }, (response) => {
      readBody(response).then((answer) => {
        const status = response.statusCode ?? 0
        settle(
          status >= 200 && status < 300
            ? { _tag: "Delivered", body: answer, contentType: response.headers["content-type"] ?? "" }
            : {
              _tag: "Failed",
              message: `Wrong response from the webhook: ${status} ${response.statusMessage ?? ""}`.trim()
            }
        )
      }, () => settle({ _tag: "Failed", message: "Connection reset by peer" }))
    })
    request.setTimeout(state.webhookTimeout, () => {
      settle({ _tag: "Failed", message: "Read timeout expired" })
      request.destroy()
    })
    request.on("error", (error) => settle({ _tag: "Failed", message: describeConnectionError(error) }))
    state.inFlight.add(abort)
    request.end(body)
  })

/** Runs a webhook response that is itself a Bot API call (`{"method": ...}`, JSON or a form). */
const runWebhookReply = async (state: State, bot: Bot, body: Buffer, contentType: string) => {
  const type = contentType.toLowerCase()
  const header = type.startsWith("application/json") || type.startsWith("application/x-www-form-urlencoded") ||
      type.startsWith("multipart/form-data")
    ? contentType
    : body.toString("utf8").trimStart().startsWith("{")
    ? "application/json"
    : ""
  if (header === "") return
  const parsed = parseBody(body, header)
  if (parsed._tag === "Failure") return
  const { method, ...params } = parsed.params
  if (typeof method !== "string" || method === "") return
  await state.invoke(bot, method, params, { signal: undefined, files: parsed.files }, true)
}

const deliveryLoop = async (state: State, bot: Bot) => {
  while (!state.closed) {
    const hook = bot.webhook
    const update = bot.queue[0]
    if (hook === undefined || update === undefined) return
    const outcome = await postUpdate(state, hook, update)
    if (state.closed) return
    if (outcome._tag === "Delivered") {
      if (bot.queue[0] === update) bot.confirmed.push(bot.queue.shift()!)
      await runWebhookReply(state, bot, outcome.body, outcome.contentType)
    } else {
      if (bot.webhook === hook) bot.lastError = { date: state.now(), message: outcome.message }
      await sleep(state, state.retryDelay)
    }
  }
}

/** Starts delivering the bot's queue to its webhook, one update at a time, unless that is under way. */
export const deliver = (state: State, bot: Bot) => {
  if (state.closed || bot.delivery !== undefined || bot.webhook === undefined || bot.queue.length === 0) return
  bot.delivery = deliveryLoop(state, bot).finally(() => {
    bot.delivery = undefined
    deliver(state, bot)
  })
}
