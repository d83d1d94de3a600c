import { Context, Effect, Either, Layer, Option } from "effect"
import type { BotNotFound } from "../domain/Bot.js"
import { ChatNotFound, type HistoryDisabled } from "../domain/Chat.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import { decodePersonCursor, type Person, PersonNotFound, type PersonPage, personCursor } from "../domain/Person.js"
import * as Scope from "../domain/Scope.js"
import { BotStore } from "../stores/BotStore.js"
import { ChatStore } from "../stores/ChatStore.js"
import { PeopleStore } from "../stores/PeopleStore.js"
import { filterFor } from "./Chats.js"

/** A request for a page of people. */
export interface PeopleRequest {
  /** One bot; without it, every bot in scope that keeps history. */
  readonly bot_id?: number | undefined
  /** Only people seen in this chat; with `bot_id`, a chat of that bot, which must exist. */
  readonly chat_id?: number | undefined
  /** Text the username or names contain, in any case. */
  readonly q?: string | undefined
  readonly limit: number
  /** `next_cursor` of the previous page. */
  readonly cursor?: string | undefined
}

/** The users the bots that keep history have seen. */
export interface PeopleService {
  /** A page of people seen by the bot, or by every bot in `scope` that keeps history, last seen first. */
  readonly list: (
    request: PeopleRequest,
    scope: Scope.ChatScope
  ) => Effect.Effect<PersonPage, BotNotFound | HistoryDisabled | ChatNotFound | InvalidInput | StorageError>
  /** One user as the bots in `scope` that keep history saw them. */
  readonly get: (userId: number, scope: Scope.ChatScope) => Effect.Effect<Person, PersonNotFound | StorageError>
}

/** The users the bots that keep history have seen. */
export class People extends Context.Tag("@botrelay/core/People")<People, PeopleService>() {}

/** Builds the service on the stores the host provides. */
export const make: Effect.Effect<PeopleService, never, BotStore | ChatStore | PeopleStore> = Effect.gen(function*() {
  const botStore = yield* BotStore
  const chatStore = yield* ChatStore
  const peopleStore = yield* PeopleStore

  return People.of({
    list: (request, scope) =>
      Effect.gen(function*() {
        const after = request.cursor === undefined ? undefined : decodePersonCursor(request.cursor)
        if (after !== undefined && Either.isLeft(after)) return yield* Effect.fail(InvalidInput.field("cursor", after.left))
        const filter = yield* filterFor(botStore, chatStore, request.bot_id, scope)
        const chatId = request.chat_id
        if (request.bot_id !== undefined && chatId !== undefined) {
          const chat = yield* chatStore.findChat(request.bot_id, chatId)
          if (Option.isNone(chat)) return yield* Effect.fail(new ChatNotFound({ bot_id: request.bot_id, chat_id: chatId }))
        }
        const found = yield* peopleStore.listPeople({
          bot_ids: filter.bot_ids,
          chats: filter.chats,
          chat_id: chatId,
          q: request.q,
          limit: request.limit + 1,
          after: after?.right
        })
        const items = found.slice(0, request.limit)
        return {
          items,
          next_cursor: found.length > request.limit ? personCursor(items[items.length - 1]!) : null
        }
      }).pipe(Effect.withSpan("People.list")),

    get: (userId, scope) =>
      filterFor(botStore, chatStore, undefined, scope).pipe(
        Effect.catchTag("BotNotFound", "HistoryDisabled", () => Effect.succeed(Scope.filterOf(scope, []))),
        Effect.flatMap((filter) => peopleStore.findPerson(userId, filter)),
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new PersonNotFound({ user_id: userId })),
          onSome: Effect.succeed
        })),
        Effect.withSpan("People.get")
      )
  })
})

/** The service on the stores the host provides. */
export const layer: Layer.Layer<People, never, BotStore | ChatStore | PeopleStore> = Layer.effect(People, make)
