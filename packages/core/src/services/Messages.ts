import { TelegramClient, TelegramError } from "@botrelay/telegram"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { BotDisabled, BotNotFound, HistoryDisabled, type StoredBot } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import { type MediaSendFields, methodOf, type SendMedia } from "../domain/Media.js"
import type { EditMessage, Message, MessageQuery, SendMessage } from "../domain/Message.js"
import { fromTelegram, NotEditable, Recorded } from "../domain/Message.js"
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
  /** Sends a text through the bot, stores what Telegram answered and returns it. */
  readonly send: (
    input: SendMessage
  ) => Effect.Effect<
    Message,
    | BotNotFound
    | BotDisabled
    | TelegramError.TelegramApiError
    | TelegramError.TelegramTransportError
    | StorageError
  >
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
  readonly edit: (input: EditMessage) => Effect.Effect<Message, SendError | HistoryDisabled | NotEditable>
}

/** Why a send fails. */
export type SendError =
  | BotNotFound
  | BotDisabled
  | TelegramError.TelegramApiError
  | TelegramError.TelegramTransportError
  | StorageError

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

const decodeSent = Schema.decodeUnknown(Recorded)

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

    return Messages.of({
      find: messageStore.findMessage,
      list: (query) =>
        messageStore.listMessages(query).pipe(
          Effect.tap((page) => page.length === 0 ? findBot(query.bot_id) : Effect.void)
        ),
      send: (input) =>
        findBot(input.bot_id).pipe(
          Effect.filterOrFail((bot) => !bot.disabled, () => new BotDisabled({ id: input.bot_id })),
          Effect.flatMap((bot) =>
            flood.send(bot.id, input.chat_id, telegram.sendMessage(bot.token, {
              chat_id: input.chat_id,
              text: input.text,
              ...(input.parse_mode === undefined ? {} : { parse_mode: input.parse_mode }),
              ...(input.disable_notification === undefined ? {} : { disable_notification: input.disable_notification }),
              ...(input.reply_to_message_id === undefined
                ? {}
                : { reply_parameters: { message_id: input.reply_to_message_id } }),
              ...(input.reply_markup === undefined ? {} : { reply_markup: input.reply_markup })
            })).pipe(
              Effect.tap((sent) => sentMessages.captureSent(bot, [sent], "api"))
            )
          ),
          Effect.map((sent) => fromTelegram(input.bot_id, sent, "out")),
          Effect.withSpan("Messages.send", { attributes: { bot_id: input.bot_id } })
        ),
      sendMedia: (input) =>
        usableBot(input.bot_id).pipe(
          Effect.flatMap((bot) =>
            flood.send(
              bot.id,
              input.chat_id,
              telegram.call(bot.token, methodOf(input.type), {
                ...mediaParams(input),
                [input.type]: input.file_id ?? input.url
              })
            ).pipe(Effect.flatMap((result) => recordSent(bot, methodOf(input.type), result)))
          ),
          Effect.withSpan("Messages.sendMedia", { attributes: { bot_id: input.bot_id, type: input.type } })
        ),
      uploadMedia: (input, upload) =>
        usableBot(input.bot_id).pipe(
          Effect.flatMap((bot) =>
            upload.send(bot, methodOf(input.type), mediaParams(input), input.type).pipe(
              Effect.flatMap((result) => recordSent(bot, methodOf(input.type), result))
            )
          ),
          Effect.withSpan("Messages.uploadMedia", { attributes: { bot_id: input.bot_id, type: input.type } })
        ),
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
          return yield* recordSent(bot, "editMessageText", edited)
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
