import { BotApi } from "@botrelay/telegram"
import { type Answer, badRequest, failure, ok } from "./Answer.js"
import { allowedUpdates, asBool, asInt, asText, clamp, isEmpty } from "./Params.js"
import type { Bot, Handler, Poll, State } from "./State.js"
import { deliver } from "./Webhook.js"

const terminated = failure(
  409,
  "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
)
const webhookActive = failure(
  409,
  "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
)
const secretPattern = /^[A-Za-z0-9_-]{1,256}$/

const accepts = (bot: Bot, kind: string | undefined) =>
  kind === undefined ||
  (bot.allowed.length === 0 ? !BotApi.optInUpdateTypes.includes(kind) : bot.allowed.includes(kind))

/** Queues an update (its `update_id` replaced) unless `allowed_updates` exclude it; answers a held poll. */
export const pushUpdate = (state: State, bot: Bot, raw: Readonly<Record<string, unknown>>): BotApi.Update | undefined => {
  const { update_id: _, ...fields } = raw
  if (!accepts(bot, BotApi.updateType(fields))) return undefined
  const update = { update_id: bot.nextUpdateId++, ...fields } as BotApi.Update
  bot.queue.push(update)
  queueMicrotask(() => {
    const poll = bot.poll
    if (poll !== undefined && bot.queue.length > 0) poll.finish(ok(bot.queue.slice(0, poll.limit)))
  })
  deliver(state, bot)
  return update
}

/** Answers the bot's held poll, if any, with `answer`. */
export const endPoll = (bot: Bot, answer: Answer) => bot.poll?.finish(answer)

const deleteWebhook: Handler = (bot, params) => {
  if (asBool(params["drop_pending_updates"])) bot.queue = []
  const had = bot.webhook !== undefined
  bot.webhook = undefined
  bot.lastError = undefined
  return ok(true, had ? "Webhook was deleted" : "Webhook is already deleted")
}

/** The update methods: `getUpdates` with long polls, and the webhook's. */
export const updateMethods = (state: State): Readonly<Record<string, Handler>> => ({
  getUpdates: (bot, params, context) => {
    if (bot.webhook !== undefined) return webhookActive
    endPoll(bot, terminated)
    const offset = asInt(params["offset"]) ?? 0
    if (offset > 0) {
      while (bot.queue[0] !== undefined && bot.queue[0].update_id < offset) bot.confirmed.push(bot.queue.shift()!)
    } else if (offset < 0) {
      bot.queue = bot.queue.slice(offset)
    }
    const limit = clamp(asInt(params["limit"]) ?? 100, 1, 100)
    const timeout = Math.max(0, asInt(params["timeout"]) ?? 0)
    const allowed = allowedUpdates(params["allowed_updates"])
    if (allowed !== undefined) bot.allowed = allowed
    if (bot.queue.length > 0 || timeout === 0 || state.closed || context.signal?.aborted === true) {
      return ok(bot.queue.slice(0, limit))
    }
    return new Promise<Answer>((resolve) => {
      let finished = false
      const poll: Poll = {
        limit,
        finish: (answer) => {
          if (finished) return
          finished = true
          clearTimeout(timer)
          context.signal?.removeEventListener("abort", onAbort)
          state.heldPolls.delete(poll)
          if (bot.poll === poll) bot.poll = undefined
          resolve(answer)
        }
      }
      const onAbort = () => poll.finish(ok([]))
      const timer = setTimeout(() => poll.finish(ok(bot.queue.slice(0, limit))), timeout * 1000)
      context.signal?.addEventListener("abort", onAbort)
      state.heldPolls.add(poll)
      bot.poll = poll
      for (const listener of [...state.pollListeners]) listener(bot.id)
    })
  },
  setWebhook: (bot, params, context) => {
    const url = asText(params["url"])
    if (url === "") return deleteWebhook(bot, params, context)
    let parsed: URL | undefined
    try {
      parsed = new URL(url)
    } catch {
      parsed = undefined
    }
    if (parsed === undefined || (parsed.protocol !== "https:" && parsed.protocol !== "http:")) {
      return badRequest("bad webhook: An HTTPS URL must be provided for webhook")
    }
    const secret = isEmpty(params["secret_token"]) ? undefined : asText(params["secret_token"])
    if (secret !== undefined && !secretPattern.test(secret)) {
      return badRequest("secret token contains unallowed characters")
    }
    const allowed = allowedUpdates(params["allowed_updates"])
    if (allowed !== undefined) bot.allowed = allowed
    if (asBool(params["drop_pending_updates"])) bot.queue = []
    endPoll(bot, webhookActive)
    const same = bot.webhook?.url === url
    if (!same) bot.lastError = undefined
    bot.webhook = { url, secret, maxConnections: clamp(asInt(params["max_connections"]) ?? 40, 1, 100) }
    deliver(state, bot)
    return ok(true, same ? "Webhook is already set" : "Webhook was set")
  },
  deleteWebhook,
  getWebhookInfo: (bot) => {
    const hook = bot.webhook
    const base = { url: hook?.url ?? "", has_custom_certificate: false, pending_update_count: bot.queue.length }
    if (hook === undefined) return ok(base)
    return ok({
      ...base,
      ...(bot.lastError === undefined
        ? {}
        : { last_error_date: bot.lastError.date, last_error_message: bot.lastError.message }),
      max_connections: hook.maxConnections,
      ...(bot.allowed.length === 0 ? {} : { allowed_updates: bot.allowed })
    })
  }
})
