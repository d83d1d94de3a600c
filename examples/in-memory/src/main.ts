import { fileURLToPath } from "node:url"
import { FetchHttpClient } from "@effect/platform"
import { Bot, Bots, type Errors, type Message, Messages, type Outgoing, Runtime } from "@botrelay/core"
import { SqliteStores } from "@botrelay/sqlite"
import { HttpExchange, type TelegramError } from "@botrelay/telegram"
import { FakeTelegram } from "@botrelay/testing"
import { Effect, Layer, Schema } from "effect"

/** Registers a bot, sends through it and reads the stored history, all in memory against FakeTelegram. */
export const program: Effect.Effect<
  ReadonlyArray<Message.Message>,
  | Errors.StorageError
  | SqliteStores.MigrationError
  | SqliteStores.SecretKeyError
  | Errors.InvalidInput
  | Bot.BotNotFound
  | Bot.BotDisabled
  | Bot.DuplicateToken
  | TelegramError.TelegramError
  | Outgoing.DeliveryFailed
  | Outgoing.DeliveryUnknown
> = Effect.gen(function*() {
  const telegram = yield* FakeTelegram.make()
  const helloBot = telegram.addBot({ username: "hello_bot" })
  const ann = telegram.addUser({ first_name: "Ann" })

  const services = Runtime.layer({ telegramApi: telegram.apiRoot }).pipe(
    Layer.provideMerge(SqliteStores.layer({ filename: ":memory:" })),
    Layer.provideMerge(HttpExchange.layer),
    Layer.provide(FetchHttpClient.layer)
  )

  return yield* Effect.gen(function*() {
    const bots = yield* Bots.Bots
    const messages = yield* Messages.Messages
    const bot = yield* bots.add(Schema.decodeUnknownSync(Bot.NewBot)({ name: "hello", token: helloBot.token }))
    yield* messages.send({ bot_id: bot.id, chat_id: ann.id, text: "Hello from Botrelay" })
    return yield* messages.list({ bot_id: bot.id, chat_id: ann.id, limit: 10, offset: 0 })
  }).pipe(Effect.provide(services))
}).pipe(Effect.scoped)

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  void Effect.runPromise(program).then((history) => {
    for (const message of history) console.log(`${message.direction} #${message.id} to ${message.chat_id}: ${message.text}`)
  })
}
