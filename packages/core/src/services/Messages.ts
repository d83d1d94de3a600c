import { TelegramClient, TelegramError } from "@botrelay/telegram"
import { Clock, Context, Effect, Either, Layer, Option, Schema } from "effect"
import { BotDisabled, BotNotFound, HistoryDisabled, type StoredBot } from "../domain/Bot.js"
import { StorageError } from "../domain/Errors.js"
import { type MediaSendFields, methodOf, type SendMedia } from "../domain/Media.js"
import type { EditMessage, Message, MessageQuery, SendMessage } from "../domain/Message.js"
import { fromTelegram, NotEditable, Recorded } from "../domain/Message.js"
import {
  DeliveryFailed,
  DeliveryUnknown,
  isUnreachable,
  NotResolvable,
  OutgoingNotFound,
  type ResolveDelivery
} from "../domain/Outgoing.js"
import { FloodControl } from "../runtime/FloodControl.js"
import * as SentMessages from "../runtime/SentMessages.js"
import { BotStore } from "../stores/BotStore.js"
import { MessageStore } from "../stores/MessageStore.js"

/** Message history, and sending through a bot. */
export interface MessagesService {
  /** A page of one chat's history, newest first. */
  readonly list: (query: MessageQuery) => Effect.Effect<ReadonlyArray<Message>, BotNotFound | StorageError>
  /** One stored message of a chat, if the history holds it. */
  readonly find: (botId: number, chatId: number, id: number) => Effect.Effect<Option.Option<Message>, StorageError>
  /**
   * Sends a text through the bot. To a chat id, the message is stored `queued` before the call leaves, then
   * `sent` (returned), `failed` (`DeliveryFailed`: Telegram refused it, or the call never left) or `unknown`
   * (`DeliveryUnknown`: the call may have reached Telegram but no answer came; never sent again by itself).
   * To an `@username`, what Telegram answered is stored and returned, as before there was delivery truth.
   */
  readonly send: (input: SendMessage) => Effect.Effect<Message, SendError>
  /** Sends media Telegram already has (`file_id`) or fetches (`url`); stores and returns the message like `send`. */
  readonly sendMedia: (input: SendMedia) => Effect.Effect<Message, SendError>
  /**
   * Sends media whose file streams in: `upload` sends it as the `type` parameter of the call (core does
   * no HTTP). Not paced and not retried on 429, as a stream cannot be sent twice. Stores and returns the message.
   */
  readonly uploadMedia: <E>(input: MediaSendFields, upload: FileUpload<E>) => Effect.Effect<Message, SendError | E>
  /**
   * Edits the text of a message the bot sent and returns it as stored. Needs the bot's history
   * (`HistoryDisabled` without manage_enabled); a message the history shows as received is `NotEditable`;
   * otherwise Telegram decides.
   */
  readonly edit: (input: EditMessage) => Effect.Effect<Message, CallError | HistoryDisabled | NotEditable>
  /** The message sent through the API with this `local_id`. */
  readonly outgoing: (localId: number) => Effect.Effect<Message, OutgoingNotFound | StorageError>
  /**
   * An operator's word on a delivery: `sent` or `failed` settle an `unknown` one (`sent` may give Telegram's
   * `message_id`); `resend` sends an `unknown` or `failed` one again, under the same `local_id` (not an upload).
   */
  readonly resolve: (
    input: ResolveDelivery
  ) => Effect.Effect<Message, SendError | OutgoingNotFound | NotResolvable>
}

/** Why a call through a bot fails. */
export type CallError =
  | BotNotFound
  | BotDisabled
  | TelegramError.TelegramApiError
  | TelegramError.TelegramTransportError
  | StorageError

/** Why a send fails: as a call, or its message was not delivered (`failed`) or may not have been (`unknown`). */
export type SendError = CallError | DeliveryFailed | DeliveryUnknown

/** A Telegram call kept with an outgoing message, to send it again. */
interface KeptCall {
  readonly method: string
  readonly params: Readonly<Record<string, unknown>>
}

const decodeKept = Schema.decodeUnknownOption(
  Schema.parseJson(Schema.Struct({ method: Schema.String, params: Schema.Record({ key: Schema.String, value: Schema.Unknown }) }))
)

/**
 * How a host sends a file that streams in: as the multipart parameter `field` of a call of `method` by
 * `bot`, with the other parameters; the answer's `result`, undecoded.
 */
export interface FileUpload<E> {
  readonly send: (
    bot: StoredBot,
    method: string,
    params: Readonly<Record<string, unknown>>,
    field: string
  ) => Effect.Effect<unknown, TelegramError.TelegramError | E>
}

/** The Telegram parameters of a media send, besides the media itself. */
const mediaParams = (input: MediaSendFields): Record<string, unknown> => ({
  chat_id: input.chat_id,
  ...(input.caption === undefined || input.caption === "" ? {} : { caption: input.caption }),
  ...(input.parse_mode === undefined ? {} : { parse_mode: input.parse_mode }),
  ...(input.disable_notification === undefined ? {} : { disable_notification: input.disable_notification }),
  ...(input.reply_to_message_id === undefined ? {} : { reply_parameters: { message_id: input.reply_to_message_id } }),
  ...(input.reply_markup === undefined ? {} : { reply_markup: input.reply_markup })
})

/** The Telegram parameters of a text send. */
const textParams = (input: SendMessage): Record<string, unknown> => ({
  chat_id: input.chat_id,
  text: input.text,
  ...(input.parse_mode === undefined ? {} : { parse_mode: input.parse_mode }),
  ...(input.disable_notification === undefined ? {} : { disable_notification: input.disable_notification }),
  ...(input.reply_to_message_id === undefined ? {} : { reply_parameters: { message_id: input.reply_to_message_id } }),
  ...(input.reply_markup === undefined ? {} : { reply_markup: input.reply_markup })
})

const decodeSent = Schema.decodeUnknown(Recorded)
const decodeSentEither = Schema.decodeUnknownEither(Recorded)

/** Message history, and sending through a bot. */
export class Messages extends Context.Tag("@botrelay/core/Messages")<Messages, MessagesService>() {}

/** Builds the service on the stores, `TelegramClient` and `FloodControl` the host provides; sends are paced and told on the bus. */
export const make: Effect.Effect<
  MessagesService,
  never,
  BotStore | MessageStore | SentMessages.SentMessages | TelegramClient.TelegramClient | FloodControl
> = Effect.gen(
  function*() {
    const botStore = yield* BotStore
    const messageStore = yield* MessageStore
    const sentMessages = yield* SentMessages.SentMessages
    const telegram = yield* TelegramClient.TelegramClient
    const flood = yield* FloodControl

    const findBot = (id: number) =>
      botStore.findBot(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BotNotFound({ id })), onSome: Effect.succeed }))
      )

    /** The bot, when it exists and is not disabled. */
    const usableBot = (id: number) =>
      findBot(id).pipe(Effect.filterOrFail((bot) => !bot.disabled, () => new BotDisabled({ id })))

    /** Records in the history what a send or an edit answered, and returns it as stored. */
    const recordSent = (bot: StoredBot, method: string, result: unknown) =>
      decodeSent(result).pipe(
        Effect.mapError(() =>
          new TelegramError.TelegramTransportError({
            reason: "Decode",
            method,
            description: "the answer is not the message sent"
          })
        ),
        Effect.tap(() =>
          sentMessages.capture([{ bot, method: method.toLowerCase(), params: {}, result }], "api")
        ),
        Effect.map((sent) => fromTelegram(bot.id, sent, "out"))
      )

    const nowSeconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

    /**
     * Sets the delivery of an outgoing message and tells the bus `as` a new message (the first the bus hears
     * of it), an edited one, or nothing (`none`: its capture tells).
     */
    const settle = (
      localId: number,
      delivery: "sent" | "failed" | "unknown" | "queued",
      error: string,
      as: "new" | "edited" | "none",
      messageId = 0,
      date = 0
    ) =>
      Effect.gen(function*() {
        const at = yield* nowSeconds
        const stored = yield* messageStore.setDelivery(localId, {
          delivery,
          delivery_error: error,
          delivery_at: at,
          message_id: messageId,
          date
        })
        if (Option.isNone(stored)) {
          return yield* Effect.fail(
            new StorageError({ operation: "setDelivery", cause: new OutgoingNotFound({ local_id: localId }) })
          )
        }
        if (as !== "none") yield* sentMessages.tell(stored.value, as)
        return stored.value
      })

    /**
     * Makes the call of a queued message and records what became of it: sent (Telegram's answer is captured),
     * failed (refused, or never sent; a refusal for a person who blocked the bot marks the chat unreachable),
     * or unknown (no answer after the call may have left). Other failures of `call` mark it failed and pass on.
     * `told`: whether the bus heard of the message before (a resend), so that changes are told as edits.
     */
    const attempt = <E>(
      bot: StoredBot,
      queued: Message,
      method: string,
      call: Effect.Effect<unknown, TelegramError.TelegramError | E>,
      told: boolean
    ) =>
      Effect.gen(function*() {
        const localId = queued.local_id!
        const as = told ? "edited" : "new"
        const outcome = yield* Effect.either(call)
        if (Either.isRight(outcome)) {
          const sent = decodeSentEither(outcome.right)
          if (Either.isLeft(sent)) {
            const description = "the answer is not the message sent"
            const stored = yield* settle(localId, "unknown", "", as)
            return yield* Effect.fail(new DeliveryUnknown({ description, stored }))
          }
          const settled = yield* settle(localId, "sent", "", told ? "edited" : "none", sent.right.message_id, sent.right.date)
          yield* sentMessages.capture([{
            bot,
            method: method.toLowerCase(),
            params: {},
            result: outcome.right,
            delivery: {
              local_id: localId,
              delivery: "sent",
              delivery_error: "",
              ...(settled.delivery_at === undefined ? {} : { delivery_at: settled.delivery_at })
            }
          }], "api")
          yield* sentMessages.setReachable(bot.id, queued.chat_id, undefined)
          const stored = yield* messageStore.findOutgoing(localId)
          return Option.match(stored, {
            onNone: () => fromTelegram(bot.id, sent.right, "out"),
            onSome: (o) => o.message
          })
        }
        const e = outcome.left
        if (e instanceof TelegramError.TelegramApiError) {
          const refusal = e
          const stored = yield* settle(localId, "failed", refusal.description, as)
          if (isUnreachable(refusal.error_code, refusal.description)) {
            yield* sentMessages.setReachable(bot.id, queued.chat_id, {
              since: stored.delivery_at ?? stored.date,
              reason: refusal.description
            })
          }
          return yield* Effect.fail(
            new DeliveryFailed({
              error_code: refusal.error_code,
              description: refusal.description,
              ...(refusal.retry_after === undefined ? {} : { retry_after: refusal.retry_after }),
              stored
            })
          )
        }
        if (e instanceof TelegramError.TelegramTransportError) {
          const transport = e
          if (transport.reason === "Unsent") {
            const description = `the request never reached Telegram: ${transport.description}`
            const stored = yield* settle(localId, "failed", description, as)
            return yield* Effect.fail(new DeliveryFailed({ error_code: 0, description, stored }))
          }
          const stored = yield* settle(localId, "unknown", "", as)
          return yield* Effect.fail(new DeliveryUnknown({ description: transport.description, stored }))
        }
        yield* settle(localId, "failed", "the request was not completed", as)
        return yield* Effect.fail(e)
      })

    /** Queues an outgoing message to a chat id, then `attempt`s its call; `kept` is the call to keep for a resend. */
    const deliver = <E>(
      bot: StoredBot,
      message: Message,
      kept: KeptCall | undefined,
      method: string,
      call: Effect.Effect<unknown, TelegramError.TelegramError | E>
    ) =>
      Effect.gen(function*() {
        const queued = yield* messageStore.queueMessage(message, kept === undefined ? "" : JSON.stringify(kept))
        return yield* attempt(bot, queued, method, call, false)
      })

    /** A paced call of `method` through the bot. */
    const paced = (bot: StoredBot, chatId: number | string, method: string, params: Readonly<Record<string, unknown>>) =>
      flood.send(bot.id, chatId, telegram.call(bot.token, method, params))

    return Messages.of({
      find: messageStore.findMessage,
      list: (query) =>
        messageStore.listMessages(query).pipe(
          Effect.tap((page) => page.length === 0 ? findBot(query.bot_id) : Effect.void)
        ),
      send: (input) =>
        usableBot(input.bot_id).pipe(
          Effect.flatMap((bot): Effect.Effect<Message, SendError> => {
            const params = textParams(input)
            const chatId = input.chat_id
            if (typeof chatId !== "number") {
              return paced(bot, chatId, "sendMessage", params).pipe(
                Effect.flatMap((result) => recordSent(bot, "sendMessage", result))
              )
            }
            return Effect.flatMap(nowSeconds, (now) =>
              deliver(
                bot,
                SentMessages.botMessage(bot, chatId, input.text, now, {
                  ...(input.reply_to_message_id === undefined ? {} : { reply_to_message_id: input.reply_to_message_id })
                }),
                { method: "sendMessage", params },
                "sendMessage",
                paced(bot, chatId, "sendMessage", params)
              ))
          }),
          Effect.withSpan("Messages.send", { attributes: { bot_id: input.bot_id } })
        ),
      sendMedia: (input) =>
        usableBot(input.bot_id).pipe(
          Effect.flatMap((bot): Effect.Effect<Message, SendError> => {
            const method = methodOf(input.type)
            const params = { ...mediaParams(input), [input.type]: input.file_id ?? input.url }
            const chatId = input.chat_id
            if (typeof chatId !== "number") {
              return paced(bot, chatId, method, params).pipe(Effect.flatMap((result) => recordSent(bot, method, result)))
            }
            return Effect.flatMap(nowSeconds, (now) =>
              deliver(
                bot,
                SentMessages.botMessage(bot, chatId, input.caption ?? "", now, {
                  media_type: input.type,
                  ...(input.file_id === undefined ? {} : { file_id: input.file_id }),
                  ...(input.reply_to_message_id === undefined ? {} : { reply_to_message_id: input.reply_to_message_id })
                }),
                { method, params },
                method,
                paced(bot, chatId, method, params)
              ))
          }),
          Effect.withSpan("Messages.sendMedia", { attributes: { bot_id: input.bot_id, type: input.type } })
        ),
      uploadMedia: <E>(input: MediaSendFields, upload: FileUpload<E>) =>
        usableBot(input.bot_id).pipe(
          Effect.flatMap((bot): Effect.Effect<Message, SendError | E> => {
            const method = methodOf(input.type)
            const call = upload.send(bot, method, mediaParams(input), input.type)
            const chatId = input.chat_id
            if (typeof chatId !== "number") return call.pipe(Effect.flatMap((result) => recordSent(bot, method, result)))
            return Effect.flatMap(nowSeconds, (now) =>
              deliver(
                bot,
                SentMessages.botMessage(bot, chatId, input.caption ?? "", now, {
                  media_type: input.type,
                  ...(input.reply_to_message_id === undefined ? {} : { reply_to_message_id: input.reply_to_message_id })
                }),
                undefined,
                method,
                call
              ))
          }),
          Effect.withSpan("Messages.uploadMedia", { attributes: { bot_id: input.bot_id, type: input.type } })
        ),
      outgoing: (localId) =>
        messageStore.findOutgoing(localId).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new OutgoingNotFound({ local_id: localId })),
            onSome: (o) => Effect.succeed(o.message)
          }))
        ),
      resolve: (input) =>
        Effect.gen(function*() {
          const found = yield* messageStore.findOutgoing(input.local_id)
          if (Option.isNone(found)) return yield* Effect.fail(new OutgoingNotFound({ local_id: input.local_id }))
          const { message, request } = found.value
          const delivery = message.delivery ?? "sent"
          const refuse = new NotResolvable({ local_id: input.local_id, delivery, outcome: input.outcome })
          if (input.outcome !== "resend") {
            if (delivery !== "unknown") return yield* Effect.fail(refuse)
            const stored = yield* settle(
              input.local_id,
              input.outcome,
              input.outcome === "failed" ? "marked failed by an operator" : "",
              "edited",
              input.outcome === "sent" ? input.message_id ?? 0 : 0
            )
            if (input.outcome === "sent") yield* sentMessages.setReachable(message.bot_id, message.chat_id, undefined)
            return stored
          }
          const kept = decodeKept(request)
          if ((delivery !== "unknown" && delivery !== "failed") || Option.isNone(kept)) return yield* Effect.fail(refuse)
          const bot = yield* usableBot(message.bot_id)
          const queued = yield* settle(input.local_id, "queued", "", "edited")
          const { method, params } = kept.value
          return yield* attempt(bot, queued, method, paced(bot, message.chat_id, method, params), true)
        }).pipe(Effect.withSpan("Messages.resolve", { attributes: { local_id: input.local_id, outcome: input.outcome } })),
      edit: (input) =>
        Effect.gen(function*() {
          const bot = yield* usableBot(input.bot_id)
          if (!bot.manage_enabled) return yield* Effect.fail(new HistoryDisabled({ id: bot.id }))
          const stored = yield* messageStore.findMessage(bot.id, input.chat_id, input.message_id)
          if (Option.exists(stored, (m) => m.direction === "in")) {
            return yield* Effect.fail(
              new NotEditable({ bot_id: bot.id, chat_id: input.chat_id, message_id: input.message_id })
            )
          }
          const edited = yield* telegram.editMessageText(bot.token, {
            chat_id: input.chat_id,
            message_id: input.message_id,
            text: input.text,
            ...(input.parse_mode === undefined ? {} : { parse_mode: input.parse_mode })
          })
          const recorded = yield* recordSent(bot, "editMessageText", edited)
          return Option.getOrElse(yield* messageStore.findMessage(bot.id, recorded.chat_id, recorded.id), () => recorded)
        }).pipe(Effect.withSpan("Messages.edit", { attributes: { bot_id: input.bot_id } }))
    })
  }
)

/** The service on the stores, `TelegramClient`, `FloodControl` and the `Events` bus the host provides. */
export const layer: Layer.Layer<
  Messages,
  never,
  BotStore | MessageStore | SentMessages.SentMessages | TelegramClient.TelegramClient | FloodControl
> = Layer.effect(
  Messages,
  make
)
