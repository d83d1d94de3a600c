import {
  Accounts,
  type Bot,
  BotStore,
  Bots,
  BufferStore,
  Events,
  FloodControl,
  Inbox,
  InboxStore,
  KeyStore,
  LlmRouter,
  LongPoll,
  MappingStore,
  MessageStore,
  OutboxStore,
  Ownership,
  Routes,
  RouteStore,
  SentMessages,
  SettingsStore,
  type Stores,
  TagStore
} from "@botrelay/core"
import { NodePasswordHasher } from "@botrelay/node"
import { SqliteStores } from "@botrelay/sqlite"
import { HttpExchange, type TelegramClient } from "@botrelay/telegram"
import { Effect, Layer, Redacted } from "effect"

// The layers the runtime tests build on. Stores come from here only, so changing the driver is this file alone.

/** A bot to insert: nothing enabled, no backend, no secret, unless `fields` says otherwise. */
export const botInput = (token: string, fields: Partial<Bot.BotRecordInput> = {}): Bot.BotRecordInput => ({
  token: Redacted.make(token),
  name: "",
  source: "web",
  manage_enabled: false,
  proxy_enabled: false,
  backend_url: "",
  secret_token: Redacted.make(""),
  long_poll_enabled: false,
  description: "",
  created_at: "2025-01-01T00:00:00.000Z",
  ...fields
})

/** Empty stores for one test: SQLite in memory. */
export const storage: Layer.Layer<Stores.Stores> = Layer.orDie(SqliteStores.layer({ filename: ":memory:" }))

/** The real password hasher (Argon2id), as the node package provides it. */
export const hasher = NodePasswordHasher.layer

/** Accounts on empty storage with the real hasher; the stores too. */
export const accounts = (options: Partial<Accounts.Options> = {}) =>
  Accounts.layer(options).pipe(Layer.provideMerge(Layer.merge(storage, hasher)))

/** Every store as one object, for tests that read and write across areas. */
export const store = Effect.gen(function*() {
  return {
    ...(yield* BotStore.BotStore),
    ...(yield* RouteStore.RouteStore),
    ...(yield* MappingStore.MappingStore),
    ...(yield* MessageStore.MessageStore),
    ...(yield* TagStore.TagStore),
    ...(yield* KeyStore.KeyStore),
    ...(yield* SettingsStore.SettingsStore),
    ...(yield* InboxStore.InboxStore),
    ...(yield* BufferStore.BufferStore),
    ...(yield* OutboxStore.OutboxStore)
  }
})

/** One turn of the event loop: SQLite commits writes on the next turn. */
export const nextTurn = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Empty storage, an event bus and the recording of sent messages for one test. */
export const stores: Layer.Layer<
  Stores.Stores | Events.Events | SentMessages.SentMessages | Ownership.Ownership
> = SentMessages.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(storage, Events.layer, Ownership.everything))
)

/** An LLM router that never chooses a route. */
export const noLlm: Layer.Layer<LlmRouter.LlmRouter> = Layer.succeed(LlmRouter.LlmRouter, {
  choose: () => Effect.succeed([])
})

/** A backend that answers 200 to everything and records the update ids it received. */
export const backend = () => {
  const received: Array<number> = []
  const layer = Layer.succeed(
    HttpExchange.HttpExchange,
    HttpExchange.HttpExchange.of({
      exchange: (request) =>
        Effect.sync(() => {
          received.push((JSON.parse(String(request.body)) as { update_id: number }).update_id)
          return { status: 200, headers: {}, body: new Uint8Array() }
        })
    })
  )
  return { received, layer }
}

/** What `Supervisor.run` and the management services need, on fresh storage and the given Telegram and backend. */
export const runtime = (
  telegram: Layer.Layer<TelegramClient.TelegramClient>,
  http: Layer.Layer<HttpExchange.HttpExchange> = backend().layer,
  longPoll: LongPoll.Options = LongPoll.defaults
) =>
  Layer.mergeAll(Bots.layer, Routes.layer, LongPoll.layer(longPoll), Inbox.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(stores, hasher, FloodControl.layer(), noLlm, telegram, http))
  )

/** Lets forked fibers run until `done` holds, at most 1000 turns of the event loop; nothing here waits on the clock. */
export const until = (done: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 1000 && !done(); i++) yield* nextTurn
  })

/** Lets subscribers of the event bus take what was just published. */
export const followed = Effect.repeatN(nextTurn, 2)
