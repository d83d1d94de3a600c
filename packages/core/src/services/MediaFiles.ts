import { TelegramClient, type TelegramError } from "@botrelay/telegram"
import { Context, Effect, Layer, Option } from "effect"
import { BotDisabled, BotNotFound, type StoredBot } from "../domain/Bot.js"
import type { StorageError } from "../domain/Errors.js"
import { FileNotFound, FileTooBig } from "../domain/Media.js"
import { BotStore } from "../stores/BotStore.js"
import { MessageStore } from "../stores/MessageStore.js"

/** A file ready to download from Telegram's file endpoint through `bot`. */
export interface Located {
  readonly bot: StoredBot
  /** Where the file is under `<apiRoot>/file/bot<token>/`, for about an hour. */
  readonly file_path: string
  /** Its size in bytes, when Telegram says. */
  readonly file_size: number | undefined
}

/** Files of the messages bots saw or sent. */
export interface MediaFilesService {
  /** The chats of the bot whose stored messages carry the file. */
  readonly chatsWith: (botId: number, fileId: string) => Effect.Effect<ReadonlyArray<number>, StorageError>
  /**
   * The file with `fileId`, when a message in the bot's history carries it, described by getFile:
   * `FileNotFound` when the history holds no such message or Telegram no longer has the file,
   * `FileTooBig` over Telegram's 20 MB download limit.
   */
  readonly locate: (
    botId: number,
    fileId: string
  ) => Effect.Effect<
    Located,
    | BotNotFound
    | BotDisabled
    | FileNotFound
    | FileTooBig
    | TelegramError.TelegramApiError
    | TelegramError.TelegramTransportError
    | StorageError
  >
}

/** Files of the messages bots saw or sent. */
export class MediaFiles extends Context.Tag("@botrelay/core/MediaFiles")<MediaFiles, MediaFilesService>() {}

/** getFile's refusal of a file that is gone, or of an id it does not know. */
const gone = /invalid file_id|wrong file_id|file not found|temporarily unavailable|wrong remote file/i

/** Builds the service on the stores and the `TelegramClient` the host provides. */
export const make: Effect.Effect<MediaFilesService, never, BotStore | MessageStore | TelegramClient.TelegramClient> = Effect
  .gen(function*() {
    const botStore = yield* BotStore
    const messageStore = yield* MessageStore
    const telegram = yield* TelegramClient.TelegramClient
    return MediaFiles.of({
      chatsWith: messageStore.chatsWithFile,
      locate: (botId, fileId) =>
        Effect.gen(function*() {
          const bot = yield* botStore.findBot(botId).pipe(
            Effect.flatMap(Option.match({
              onNone: () => Effect.fail(new BotNotFound({ id: botId })),
              onSome: Effect.succeed
            }))
          )
          if (bot.disabled) return yield* Effect.fail(new BotDisabled({ id: botId }))
          const notFound = new FileNotFound({ bot_id: botId, file_id: fileId })
          if (!(yield* messageStore.hasFile(botId, fileId))) return yield* Effect.fail(notFound)
          const file = yield* telegram.getFile(bot.token, { file_id: fileId }).pipe(
            Effect.catchTag(
              "TelegramApiError",
              (e): Effect.Effect<never, FileNotFound | FileTooBig | TelegramError.TelegramApiError> =>
                e.error_code === 400 && /file is too big/i.test(e.description)
                  ? Effect.fail(new FileTooBig({ bot_id: botId }))
                  : e.error_code === 400 && gone.test(e.description)
                  ? Effect.fail(notFound)
                  : Effect.fail(e)
            )
          )
          if (file.file_path === undefined || file.file_path === "") return yield* Effect.fail(notFound)
          return { bot, file_path: file.file_path, file_size: file.file_size }
        }).pipe(Effect.withSpan("MediaFiles.locate", { attributes: { bot_id: botId } }))
    })
  })

/** The service on the stores and the `TelegramClient` the host provides. */
export const layer: Layer.Layer<MediaFiles, never, BotStore | MessageStore | TelegramClient.TelegramClient> = Layer
  .effect(MediaFiles, make)
