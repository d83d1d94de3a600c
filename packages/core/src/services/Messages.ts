import { TelegramClient } from "@botrelay/telegram"
import type { TelegramError } from "@botrelay/telegram"
import { Context, Effect, Layer, Option } from "effect"
import { BotDisabled, BotNotFound } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import type { Message, MessageQuery, SendMessage } from "../domain/Message.js"
import { fromTelegram } from "../domain/Message.js"
import { FloodControl } from "../runtime/FloodControl.js"
import * as SentMessages from "../runtime/SentMessages.js"
import { BotStore } from "../stores/BotStore.js"
import { ChatStore } from "../stores/ChatStore.js"
import { MessageStore } from "../stores/MessageStore.js"

/** Message history, and sending through a bot. */
export interface MessagesService {
  /** A page of one chat's history, newest first. */
  readonly list: (query: MessageQuery) => Effect.Effect<ReadonlyArray<Message>, BotNotFound | StorageError>
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
}

/** Message history, and sending through a bot. */
export class Messages extends Context.Tag("@botrelay/core/Messages")<Messages, MessagesService>() {}

/** Builds the service on the stores, `TelegramClient` and `FloodControl` the host provides; sends are paced. */
export const make: Effect.Effect<
  MessagesService,
  never,
  BotStore | MessageStore | ChatStore | TelegramClient.TelegramClient | FloodControl
> = Effect.gen(
  function*() {
    const botStore = yield* BotStore
    const messageStore = yield* MessageStore
    const chatStore = yield* ChatStore
    const telegram = yield* TelegramClient.TelegramClient
    const flood = yield* FloodControl

    const findBot = (id: number) =>
      botStore.findBot(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BotNotFound({ id })), onSome: Effect.succeed }))
      )

    return Messages.of({
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
                : { reply_parameters: { message_id: input.reply_to_message_id } })
            })).pipe(
              Effect.tap((sent) => SentMessages.captureSent(bot, [sent], "api")),
              Effect.provideService(MessageStore, messageStore),
              Effect.provideService(ChatStore, chatStore)
            )
          ),
          Effect.map((sent) => fromTelegram(input.bot_id, sent, "out")),
          Effect.withSpan("Messages.send", { attributes: { bot_id: input.bot_id } })
        )
    })
  }
)

/** The service on the stores, `TelegramClient` and `FloodControl` the host provides. */
export const layer: Layer.Layer<Messages, never, BotStore | MessageStore | ChatStore | TelegramClient.TelegramClient | FloodControl> = Layer.effect(
  Messages,
  make
)
