import { HttpExchange } from "@botrelay/telegram"
import { Clock, Duration, Effect, Either, Option, Redacted } from "effect"
import * as BackendPolicy from "../domain/BackendPolicy.js"
import type { StoredBot } from "../domain/Bot.js"
import type { BridgeDelivery, StoredBridge } from "../domain/Bridge.js"
import { displayTitle } from "../domain/Chat.js"
import * as Signing from "../internal/Signing.js"
import { BridgeStore } from "../stores/BridgeStore.js"
import { ChatStore } from "../stores/ChatStore.js"
import type * as Outbox from "./Outbox.js"

const jsonHeaders = { "content-type": "application/json" }

/** The largest answer of a bridge read; a larger one counts as a failed attempt. */
const maxAnswerBytes = 64 * 1024

/** The JSON body of an event: its data (`type` is its name) and its id in the log. */
export const jsonBody = (delivery: Pick<BridgeDelivery, "event_id" | "data">): string =>
  JSON.stringify({ id: delivery.event_id, ...JSON.parse(delivery.data) })

/** How a bot is named in a Slack message: its name, else `@username`, else `bot <id>`. */
export const botName = (bot: Pick<StoredBot, "id" | "name" | "username"> | undefined, botId: number): string =>
  bot === undefined ? `bot ${botId}` : bot.name !== "" ? bot.name : bot.username !== "" ? `@${bot.username}` : `bot ${botId}`

interface MessageData {
  readonly first_name?: string
  readonly last_name?: string
  readonly username?: string
  readonly text?: string
  readonly media_type?: string
}

/** The person who wrote a message: first and last name, else `@username`. */
const personOf = (message: MessageData): string => {
  const name = `${message.first_name ?? ""} ${message.last_name ?? ""}`.trim()
  return name !== "" ? name : message.username !== undefined && message.username !== "" ? `@${message.username}` : ""
}

/**
 * The text of a Slack message for an event: `<bot name> · <chat title or person>: <text>` for message
 * events (a message without text shows its media type in brackets), `<bot name> · <event name>` for others.
 */
export const slackText = (bot: string, type: string, data: unknown, chatTitle: string | undefined): string => {
  const message = typeof data === "object" && data !== null && "message" in data
    ? (data as { readonly message: MessageData }).message
    : undefined
  if (message === undefined) return `${bot} · ${type}`
  const where = chatTitle !== undefined && chatTitle !== "" ? chatTitle : personOf(message)
  const text = message.text !== undefined && message.text !== ""
    ? message.text
    : message.media_type === undefined
    ? ""
    : `[${message.media_type}]`
  return `${bot} · ${where}: ${text}`
}

/**
 * Deliveries of live events to bridges, an outbox kind run by the lease owner of the event's bot: each
 * attempt POSTs the event to the bridge's URL as it is then, under the `BackendPolicy` of an admin's
 * backend URL: JSON (signed with the bridge's secret, `webhook-id` `evt_<event id>`), or a Slack message
 * (unsigned). A delivery of a bridge disabled or deleted since is dead at once.
 */
export const make = (options: { readonly timeout: Duration.DurationInput }) =>
  Effect.gen(function*() {
    const policy = yield* BackendPolicy.BackendPolicy
    const store = yield* BridgeStore
    const chats = yield* ChatStore
    const http = yield* HttpExchange.HttpExchange
    const timeout = Duration.decode(options.timeout)
    const addresses = BackendPolicy.addressesFor(policy, "api")

    const chatTitle = (delivery: BridgeDelivery, data: unknown) => {
      const chatId = typeof data === "object" && data !== null && "chat_id" in data ? Number(data.chat_id) : 0
      return chatId === 0 ? Effect.succeed(undefined) : chats.findChat(delivery.bot_id, chatId).pipe(
        Effect.map(Option.match({ onNone: () => undefined, onSome: displayTitle })),
        Effect.orElseSucceed(() => undefined)
      )
    }

    const request = (bridge: StoredBridge, delivery: BridgeDelivery, bot: StoredBot | undefined) =>
      Effect.gen(function*() {
        if (bridge.format === "slack") {
          const data: unknown = JSON.parse(delivery.data)
          const text = slackText(botName(bot, delivery.bot_id), delivery.type, data, yield* chatTitle(delivery, data))
          return { headers: jsonHeaders, body: JSON.stringify({ text }) }
        }
        const body = jsonBody(delivery)
        const signature = Redacted.value(bridge.signing_secret) === ""
          ? {}
          : Signing.sign(bridge.signing_secret, `evt_${delivery.event_id}`, yield* Clock.currentTimeMillis, body)
        return { headers: { ...jsonHeaders, ...signature }, body }
      })

    const attempt = (
      delivery: BridgeDelivery,
      _bot: StoredBot,
      bots: Outbox.Bots,
      interruptible: Outbox.Interruptible
    ): Effect.Effect<Outbox.Attempt<void>, never> =>
      Effect.gen(function*() {
        const found = yield* store.findBridge(delivery.bridge_id).pipe(Effect.orElseSucceed(() => undefined))
        if (found === undefined) {
          return { _tag: "Failed", extra: undefined, error: "could not read the bridge", retry: "later" } as const
        }
        if (Option.isNone(found) || !found.value.enabled) {
          return { _tag: "Failed", extra: undefined, error: "the bridge is disabled or deleted", retry: "never" } as const
        }
        const bridge = found.value
        const { body, headers } = yield* request(bridge, delivery, bots(delivery.bot_id))
        const result = yield* interruptible(Effect.either(http.exchange({
          method: "POST",
          url: bridge.url,
          headers,
          body,
          timeout,
          maxBytes: maxAnswerBytes,
          ...(addresses === undefined ? {} : { addresses })
        })))
        if (Either.isRight(result) && result.right.status >= 200 && result.right.status < 300) {
          return { _tag: "Done", extra: undefined } as const
        }
        return {
          _tag: "Failed",
          extra: undefined,
          error: Either.isLeft(result) ? result.left.description : `HTTP ${result.right.status}`,
          retry: "later"
        } as const
      })

    const kind: Outbox.Kind<BridgeDelivery, void> = {
      name: "bridge",
      metric: "bridge",
      line: store.nextBridgeDeliveries,
      runs: () => true,
      attempt,
      record: (recorded) =>
        store.recordBridgeAttempts(recorded.map(({ job, outcome }) =>
          [job, outcome.status === "done" ? { status: "delivered", at: outcome.at } : outcome] as const
        )),
      recordEach: false,
      annotations: (delivery) => ({ bridge_id: delivery.bridge_id, event_id: delivery.event_id })
    }
    return kind
  })
