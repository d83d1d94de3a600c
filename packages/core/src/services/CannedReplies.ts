import { Context, Effect, Layer, Option } from "effect"
import { BotNotFound } from "../domain/Bot.js"
import {
  type CannedReply,
  CannedReplyNotFound,
  type CannedReplyUpdate,
  type DuplicateCode,
  type NewCannedReply,
  offeredFor,
  render
} from "../domain/CannedReply.js"
import type { Chat } from "../domain/Chat.js"
import type { StorageError } from "../domain/Errors.js"
import { nowSeconds } from "../internal/Time.js"
import { BotStore } from "../stores/BotStore.js"
import { CannedReplyStore } from "../stores/CannedReplyStore.js"
import { MessageStore } from "../stores/MessageStore.js"

/** The replies the team shares, and their text filled for a chat. */
export interface CannedRepliesService {
  /** Every reply by code; with a bot, those offered for it. */
  readonly list: (botId?: number) => Effect.Effect<ReadonlyArray<CannedReply>, StorageError>
  readonly get: (id: number) => Effect.Effect<CannedReply, CannedReplyNotFound | StorageError>
  /** Keeps a new reply; its bots must exist. */
  readonly add: (input: NewCannedReply) => Effect.Effect<CannedReply, DuplicateCode | BotNotFound | StorageError>
  /** Changes the fields given. */
  readonly update: (
    input: CannedReplyUpdate
  ) => Effect.Effect<CannedReply, CannedReplyNotFound | DuplicateCode | BotNotFound | StorageError>
  /** Deletes a reply; the reply as it was. */
  readonly remove: (id: number) => Effect.Effect<CannedReply, CannedReplyNotFound | StorageError>
  /**
   * The text of the reply with the code (not found unless offered for the chat's bot), its variables filled
   * from the chat and the bot: `{first_name}`, `{username}` of a private chat's person, or in a group of the
   * sender of its newest incoming message ("" when none); `{bot_name}`.
   */
  readonly render: (
    code: string,
    chat: Chat,
    botName: string
  ) => Effect.Effect<{ readonly text: string }, CannedReplyNotFound | StorageError>
}

/** The replies the team shares. */
export class CannedReplies extends Context.Tag("@botrelay/core/CannedReplies")<CannedReplies, CannedRepliesService>() {}

/** How many of a group's newest messages `render` looks through for an incoming one. */
const senderLookback = 50

/** Builds the service on the stores the host provides. */
export const make: Effect.Effect<CannedRepliesService, never, CannedReplyStore | BotStore | MessageStore> = Effect.gen(
  function*() {
    const store = yield* CannedReplyStore
    const bots = yield* BotStore
    const messages = yield* MessageStore

    const get = (id: number) =>
      store.findCannedReply(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new CannedReplyNotFound({ id })), onSome: Effect.succeed }))
      )

    const botsExist = (ids: ReadonlyArray<number>) =>
      Effect.forEach(ids, (id) =>
        bots.findBot(id).pipe(
          Effect.flatMap((found) => Option.isNone(found) ? Effect.fail(new BotNotFound({ id })) : Effect.void)
        ), { discard: true })

    const personOf = (chat: Chat) =>
      chat.type === "private"
        ? Effect.succeed({ first_name: chat.first_name, username: chat.username })
        : messages.listMessages({ bot_id: chat.bot_id, chat_id: chat.chat_id, limit: senderLookback, offset: 0 }).pipe(
          Effect.map((page) => {
            const sender = page.find((m) => m.direction === "in" && m.user_id !== 0)
            return { first_name: sender?.first_name ?? "", username: sender?.username ?? "" }
          })
        )

    return CannedReplies.of({
      list: (botId) =>
        store.listCannedReplies.pipe(
          Effect.map((all) => botId === undefined ? all : all.filter((reply) => offeredFor(reply, botId)))
        ),
      get,
      add: (input) =>
        Effect.gen(function*() {
          yield* botsExist(input.bot_ids)
          const at = yield* nowSeconds
          return yield* store.insertCannedReply({
            code: input.code,
            text: input.text,
            bot_ids: input.bot_ids,
            created_at: at,
            updated_at: at
          })
        }).pipe(Effect.withSpan("CannedReplies.add")),
      update: (input) =>
        Effect.gen(function*() {
          const reply = yield* get(input.id)
          if (input.bot_ids !== undefined) yield* botsExist(input.bot_ids)
          const updated = yield* store.updateCannedReply(reply.id, {
            code: input.code ?? reply.code,
            text: input.text ?? reply.text,
            bot_ids: input.bot_ids ?? reply.bot_ids,
            created_at: reply.created_at,
            updated_at: yield* nowSeconds
          })
          return yield* Option.match(updated, {
            onNone: () => Effect.fail(new CannedReplyNotFound({ id: reply.id })),
            onSome: Effect.succeed
          })
        }).pipe(Effect.withSpan("CannedReplies.update")),
      remove: (id) =>
        get(id).pipe(
          Effect.tap(() => store.deleteCannedReply(id)),
          Effect.withSpan("CannedReplies.remove")
        ),
      render: (code, chat, botName) =>
        Effect.gen(function*() {
          const found = yield* store.findByCode(code)
          if (Option.isNone(found) || !offeredFor(found.value, chat.bot_id)) {
            return yield* new CannedReplyNotFound({ code })
          }
          const person = yield* personOf(chat)
          return { text: render(found.value.text, { ...person, bot_name: botName }) }
        }).pipe(Effect.withSpan("CannedReplies.render"))
    })
  }
)

/** The service on the stores the host provides. */
export const layer: Layer.Layer<CannedReplies, never, CannedReplyStore | BotStore | MessageStore> = Layer.effect(
  CannedReplies,
  make
)
