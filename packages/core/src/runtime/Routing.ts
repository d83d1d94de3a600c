import { Duration, Effect, Option } from "effect"
import type { StoredBot } from "../domain/Bot.js"
import { int, object } from "../domain/CallParams.js"
import type { StorageError } from "../domain/Errors.js"
import type { InboxUpdate } from "./Inbox.js"
import { type Candidate, LlmRouter } from "./LlmRouter.js"
import { type Matched, matches, resolve, type RouteSet, RouteSets, stretch } from "./RouteMatcher.js"
import type { Route } from "../domain/Route.js"
import type { NewRouteSend } from "../domain/RouteSend.js"
import { MappingStore } from "../stores/MappingStore.js"

/** How routing behaves. */
export interface Options {
  /** How long a routed message's replies travel back. */
  readonly mappingTtl: Duration.DurationInput
}

/** Defaults: replies travel back for 30 days. */
export const defaults: Options = { mappingTtl: Duration.days(30) }

/** What routing decides for one update: the sends it queues, and whether the bot's backend and buffer skip it. */
export interface Decision {
  readonly sends: ReadonlyArray<NewRouteSend>
  readonly dropped: boolean
}

const none: Decision = { sends: [], dropped: false }

/** How many updates of a batch are looked at at once (each may wait for storage or the LLM). */
const lookConcurrency = 8

/** What routing reads of a message; the rest of it travels along as JSON. */
interface Seen {
  readonly message_id: number
  readonly chat_id: number
  readonly text: string
  /** The sender's user id, 0 without one. */
  readonly user_id: number
  /** Sent by a bot, or without a sending user (a channel post): it may be the service's own. */
  readonly maybeOwn: boolean
  readonly reply_to: number | undefined
}

/** The incoming message or channel post of an update, as routing reads it; undefined for other updates. */
export const seen = (payload: string): Seen | undefined => {
  let update: Readonly<Record<string, unknown>> | undefined
  try {
    update = object(JSON.parse(payload))
  } catch {
    return undefined
  }
  const message = object(update?.message) ?? object(update?.channel_post)
  const chat = object(message?.chat)
  const messageId = int(message?.message_id)
  const chatId = int(chat?.id)
  if (message === undefined || messageId === undefined || chatId === undefined) return undefined
  const from = object(message.from)
  const text = typeof message.text === "string"
    ? message.text
    : typeof message.caption === "string"
    ? message.caption
    : ""
  return {
    message_id: messageId,
    chat_id: chatId,
    text,
    user_id: int(from?.id) ?? 0,
    maybeOwn: from === undefined || from.is_bot === true,
    reply_to: int(object(message.reply_to_message)?.message_id)
  }
}

/** What routing needs of the runtime around it. */
export interface Runtime {
  /** A bot as it is now; undefined when it is gone. */
  readonly bot: (id: number) => StoredBot | undefined
  /** Whether a Telegram user id is one of the known bots'. */
  readonly isBotUser: (userId: number) => boolean
  /** Completes once no route send into the chat is under way. */
  readonly quiet: (chatId: number) => Effect.Effect<void>
}

const describeBot = (bot: StoredBot) => {
  const name = bot.name !== "" ? bot.name : bot.username !== "" ? `@${bot.username}` : `bot ${bot.id}`
  return bot.description === "" ? name : `${name}: ${bot.description}`
}

/**
 * Route evaluation for incoming updates (DESIGN.md section 5): the source bot's routes in id order, the
 * LLM for its llm routes, and the reverse path for replies to routed messages. Messages the service sent
 * never trigger either.
 */
export const make = (runtime: Runtime, options: Options = defaults) =>
  Effect.gen(function*() {
    const mappings = yield* MappingStore
    const routeSets = yield* RouteSets
    const llm = yield* LlmRouter
    const ttl = Duration.toMillis(options.mappingTtl)

    const isOwn = (message: Seen) =>
      Effect.gen(function*() {
        if (!message.maybeOwn) return false
        if (message.user_id !== 0 && runtime.isBotUser(message.user_id)) return true
        yield* runtime.quiet(message.chat_id)
        return Option.isSome(yield* mappings.findProduced(message.chat_id, message.message_id))
      })

    const send = (
      bot: StoredBot,
      update: InboxUpdate,
      message: Seen,
      created_at: string,
      fields: Pick<NewRouteSend, "bot_id" | "kind" | "route_id" | "chat_id" | "reply_to_message_id">
    ): NewRouteSend => ({
      bot_id: fields.bot_id,
      kind: fields.kind,
      route_id: fields.route_id,
      chat_id: fields.chat_id,
      reply_to_message_id: fields.reply_to_message_id,
      source_bot_id: bot.id,
      update_id: update.update_id,
      from_chat_id: message.chat_id,
      message_id: message.message_id,
      hop: 1,
      created_at
    })

    const reverse = (bot: StoredBot, update: InboxUpdate, message: Seen, now: number, inbound: ReadonlySet<number>) =>
      Effect.gen(function*() {
        if (message.reply_to === undefined || inbound.size === 0) return []
        yield* runtime.quiet(message.chat_id)
        const since = new Date(now - ttl).toISOString()
        const mapping = yield* mappings.findReverse(bot.id, message.chat_id, message.reply_to, since)
        if (Option.isNone(mapping) || !inbound.has(mapping.value.route_id)) return []
        const back = mapping.value
        const source = runtime.bot(back.source_bot_id)
        if (source === undefined || source.disabled) return []
        return [send(bot, update, message, new Date(now).toISOString(), {
          bot_id: back.source_bot_id,
          kind: "reply",
          route_id: back.route_id,
          chat_id: back.source_chat_id,
          reply_to_message_id: back.source_message_id
        })]
      })

    const candidate = (route: Route): Candidate => {
      const target = runtime.bot(route.target_bot_id)
      return {
        route_id: route.id,
        description: route.description,
        hint: route.condition_value,
        target: target === undefined ? "" : describeBot(target)
      }
    }

    /** Sends for the routes that fired; routes whose target bot is disabled or gone are added to `skipped`. */
    const fire = (
      bot: StoredBot,
      update: InboxUpdate,
      message: Seen,
      now: number,
      matched: Matched,
      chosen: ReadonlyArray<number>,
      back: ReadonlyArray<NewRouteSend>,
      skipped: Array<Route>
    ): Decision => {
      const { dropped, fired } = resolve(matched, chosen)
      if (fired.length === 0 && back.length === 0) return dropped ? { sends: [], dropped } : none
      const created_at = new Date(now).toISOString()
      const sends = [...back]
      for (const route of fired) {
        if (route.action === "drop") continue
        const target = runtime.bot(route.target_bot_id)
        if (target === undefined || target.disabled) {
          skipped.push(route)
          continue
        }
        sends.push(send(bot, update, message, created_at, {
          bot_id: route.target_bot_id,
          kind: route.action,
          route_id: route.id,
          chat_id: route.target_chat_id === 0 ? message.chat_id : route.target_chat_id,
          reply_to_message_id: 0
        }))
      }
      return { sends, dropped }
    }

    /** The decision for an update that needs storage or the LLM: maybe the service's own, a reply, llm routes. */
    const look = (
      bot: StoredBot,
      update: InboxUpdate,
      message: Seen,
      now: number,
      set: RouteSet,
      matched: Matched,
      skipped: Array<Route>
    ) =>
      Effect.gen(function*() {
        if (yield* isOwn(message)) return none
        const back = yield* reverse(bot, update, message, now, set.inbound)
        const chosen = matched.llmCandidates.length === 0 ? [] : yield* llm.choose({
          source_bot: describeBot(bot),
          text: message.text,
          candidates: matched.llmCandidates.map(candidate)
        })
        return fire(bot, update, message, now, matched, chosen, back, skipped)
      })

    /** Routes already reported as not sending, so a busy source bot logs each once. */
    const warned = new Set<number>()

    const warn = (skipped: ReadonlyArray<Route>) =>
      Effect.forEach(skipped, (route) => {
        if (warned.has(route.id)) return Effect.void
        warned.add(route.id)
        return Effect.logWarning("a route's target bot is disabled or gone; the route does not send").pipe(
          Effect.annotateLogs({ route_id: route.id, target_bot_id: route.target_bot_id })
        )
      }, { discard: true })

    /**
     * What routing decides for each of a batch of the bot's updates, in order: its route sends, and whether a
     * drop route keeps it from the bot's backend and buffer. Rule routes are decided at once; updates that need
     * storage or the LLM are looked at a few at a time.
     */
    const evaluate = (
      bot: StoredBot,
      updates: ReadonlyArray<InboxUpdate>,
      now: number
    ): Effect.Effect<ReadonlyArray<Decision>, StorageError> =>
      Effect.flatMap(routeSets.get(bot.id), (set) => {
        if (set.compiled.routes.length === 0 && set.inbound.size === 0) return Effect.succeed(updates.map(() => none))
        const decisions: Array<Decision> = []
        const looks: Array<Effect.Effect<void, StorageError>> = []
        const skipped: Array<Route> = []
        const pace = stretch()
        const decide = (update: InboxUpdate, message: Seen, matched: Matched) => {
          const at = decisions.length
          if (
            message.maybeOwn || (message.reply_to !== undefined && set.inbound.size > 0) ||
            matched.llmCandidates.length > 0
          ) {
            decisions.push(none)
            const decided = look(bot, update, message, now, set, matched, skipped)
            looks.push(Effect.map(decided, (decision) => void (decisions[at] = decision)))
          } else {
            decisions.push(fire(bot, update, message, now, matched, [], [], skipped))
          }
        }
        const matchAll = Effect.forEach(updates, (update) => {
          const message = seen(update.payload)
          if (message === undefined) return Effect.sync(() => void decisions.push(none))
          return Effect.map(matches(set.compiled, message, pace), (matched) => decide(update, message, matched))
        }, { discard: true })
        const looked = Effect.suspend(() =>
          looks.length === 0 ? Effect.void : Effect.all(looks, { concurrency: lookConcurrency, discard: true })
        )
        return matchAll.pipe(
          Effect.zipRight(looked),
          Effect.zipRight(Effect.suspend(() => warn(skipped))),
          Effect.as(decisions)
        )
      })

    return { evaluate } as const
  })
