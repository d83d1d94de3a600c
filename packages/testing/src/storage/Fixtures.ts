import type { ApiKey, Bot, Delivery, Errors, Inbox, Message, OutboxStore, Route, RouteSend, Stores, ChatTag } from "@botrelay/core"
import { Scope } from "@botrelay/core"
import { assert, it } from "@effect/vitest"
import type { Context, Layer } from "effect"
import { Effect, Option, Redacted } from "effect"

/**
 * The storage conformance suite's shared fixtures: inputs and the rows storage must read back,
 * and the runner every area registers its tests with.
 */

export const t0 = "2025-01-02T03:04:05.000Z"
export const t1 = "2025-02-03T04:05:06.000Z"
export const t2 = "2025-03-04T05:06:07.000Z"

export const botInput = (n: number, overrides: Partial<Bot.BotRecordInput> = {}): Bot.BotRecordInput => ({
  token: Redacted.make(`${100000 + n}:AAH-secret_token-${n}`),
  name: `bot ${n}`,
  source: "web",
  manage_enabled: false,
  proxy_enabled: false,
  backend_url: "",
  secret_token: Redacted.make(""),
  long_poll_enabled: false,
  description: "",
  created_at: t0,
  ...overrides
})

export const plainBot = (bot: Bot.StoredBot) => ({
  ...bot,
  token: Redacted.value(bot.token),
  secret_token: Redacted.value(bot.secret_token),
  signing_secret: Redacted.value(bot.signing_secret)
})

export const routeInput = (
  source: number,
  target: number,
  overrides: Partial<Route.RouteRecordInput> = {}
): Route.RouteRecordInput => ({
  source_bot_id: source,
  target_bot_id: target,
  condition_type: "all",
  condition_value: "",
  action: "forward",
  target_chat_id: 0,
  enabled: true,
  description: "",
  created_at: t0,
  ...overrides
})

export const message = (
  botId: number,
  chatId: number,
  id: number,
  overrides: Partial<Message.Message> = {}
): Message.Message => ({
  id,
  chat_id: chatId,
  bot_id: botId,
  user_id: 42,
  username: "alice",
  first_name: "Alice",
  last_name: "",
  text: `message ${id}`,
  date: 1_700_000_000 + id,
  direction: "in",
  edit_date: 0,
  ...overrides
})

export const tagInput = (chatId: number, userId: number, tag: string, overrides: Partial<ChatTag.TagRecordInput> = {}) => ({
  bot_id: 1,
  chat_id: chatId,
  user_id: userId,
  username: "alice",
  tag,
  color: "",
  created_at: t0,
  ...overrides
})

/** Scope entries over every chat of these bots with the default abilities (sorted, once each). */
export const botScopes = (botIds: ReadonlyArray<number>): ReadonlyArray<Scope.Entry> =>
  [...new Set(botIds)].sort((a, b) => a - b).map((bot_id) => ({ bot_id, chat_ids: [], abilities: Scope.defaultAbilities }))

/** A key to store; `bot_ids` is a shorthand for `scopes`. */
export const keyInput = (
  n: number,
  { bot_ids, ...overrides }: Partial<ApiKey.ApiKeyRecordInput> & { readonly bot_ids?: ReadonlyArray<number> } = {}
): ApiKey.ApiKeyRecordInput => ({
  name: `key ${n}`,
  role: "operator",
  scopes: botScopes(bot_ids ?? []),
  prefix: `brk_k${n}`,
  created_at: t0,
  hash: `hash-${n}`,
  ...overrides
})

export type UpdateInput = Pick<Inbox.InboxUpdate, "update_id" | "payload" | "received_at">

export const update = (updateId: number, overrides: Partial<UpdateInput> = {}): UpdateInput => ({
  update_id: updateId,
  payload: `{"update_id":${updateId},"message":{"message_id":${updateId},"text":"hi"}}`,
  received_at: t0,
  ...overrides
})

export const held = (botId: number, ...updates: ReadonlyArray<UpdateInput>): Array<Inbox.InboxUpdate> =>
  updates.map((u) => ({ bot_id: botId, update_id: u.update_id, payload: u.payload, received_at: u.received_at }))

export const newDelivery = (
  botId: number,
  updateId: number,
  overrides: Partial<Delivery.NewDelivery> = {}
): Delivery.NewDelivery => ({
  bot_id: botId,
  update_id: updateId,
  url: `https://backend.example/bot${botId}`,
  payload: `{"update_id":${updateId}}`,
  created_at: t1,
  ...overrides
})

export const queued = (id: number, input: Delivery.NewDelivery): Delivery.Delivery => ({
  id,
  bot_id: input.bot_id,
  update_id: input.update_id,
  url: input.url,
  payload: input.payload,
  status: "pending",
  attempts: 0,
  next_attempt_at: input.created_at,
  last_error: "",
  created_at: input.created_at,
  updated_at: input.created_at
})

export const newSend = (
  botId: number,
  sourceBotId: number,
  updateId: number,
  overrides: Partial<RouteSend.NewRouteSend> = {}
): RouteSend.NewRouteSend => ({
  bot_id: botId,
  kind: "forward",
  route_id: 1,
  source_bot_id: sourceBotId,
  update_id: updateId,
  from_chat_id: 100,
  message_id: updateId,
  chat_id: 200,
  reply_to_message_id: 0,
  hop: 0,
  created_at: t1,
  ...overrides
})

/** The send as storage reads it back: with the payload of its update in the receiving bot's inbox. */
export const queuedSend = (
  id: number,
  input: RouteSend.NewRouteSend,
  payload = update(input.update_id).payload
): RouteSend.RouteSend => ({
  id,
  bot_id: input.bot_id,
  kind: input.kind,
  route_id: input.route_id,
  source_bot_id: input.source_bot_id,
  update_id: input.update_id,
  from_chat_id: input.from_chat_id,
  message_id: input.message_id,
  chat_id: input.chat_id,
  reply_to_message_id: input.reply_to_message_id,
  hop: input.hop,
  payload,
  status: "pending",
  attempts: 0,
  next_attempt_at: input.created_at,
  last_error: "",
  created_at: input.created_at,
  updated_at: input.created_at
})

export const newMapping = (
  sourceBotId: number,
  targetBotId: number,
  targetMessageId: number,
  overrides: Partial<RouteSend.NewRouteMapping> = {}
): RouteSend.NewRouteMapping => ({
  route_id: 1,
  source_bot_id: sourceBotId,
  source_chat_id: 100,
  source_message_id: 1,
  target_bot_id: targetBotId,
  target_chat_id: 200,
  target_message_id: targetMessageId,
  hop: 1,
  reversible: true,
  created_at: t1,
  ...overrides
})

export const completion = (
  botId: number,
  updateId: number,
  overrides: Partial<Omit<Inbox.UpdateCompletion, "bot_id" | "update_id">> = {}
): Inbox.UpdateCompletion => ({ bot_id: botId, update_id: updateId, messages: [], deliveries: [], ...overrides })

export const some = <A>(option: Option.Option<A>): A => {
  if (Option.isNone(option)) return assert.fail("expected Some, got None")
  return option.value
}

export const ids = (items: ReadonlyArray<{ readonly id: number }>) => items.map((item) => item.id)

/** The bot's oldest pending delivery. */
export const nextDelivery = (
  storage: OutboxStore.OutboxStoreService,
  botId: number
): Effect.Effect<Option.Option<Delivery.Delivery>, Errors.StorageError> =>
  Effect.map(storage.nextDeliveries(botId, 1), (deliveries) => Option.fromNullable(deliveries[0]))

/** Registers one conformance test: `body` runs against fresh stores, `S` their services merged. */
export type Test<S> = (title: string, body: (storage: S) => Effect.Effect<void, unknown>) => void

/** The services of these store tags in one object (their method names differ). */
export type Merged<Tags extends ReadonlyArray<Context.Tag<any, any>>> = UnionToIntersection<
  Context.Tag.Service<Tags[number]>
>

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/**
 * The suite's runner: an area names the stores it needs and gets its `test`. Every test builds `layer`
 * once, so `layer` must give fresh, empty stores each time it is built.
 */
export const runner = (layer: Layer.Layer<Stores.Stores, unknown>) =>
<const Tags extends ReadonlyArray<Context.Tag<any, any>>>(...tags: Tags): Test<Merged<Tags>> =>
(title, body) =>
  it.effect(title, () =>
    Effect.forEach(tags, (tag): Effect.Effect<object, never, Stores.Stores> => tag).pipe(
      Effect.flatMap((services) => body(Object.assign({}, ...services) as Merged<Tags>)),
      Effect.provide(layer)
    ))

/** What an area of the suite registers its tests with. */
export type Runner = ReturnType<typeof runner>
