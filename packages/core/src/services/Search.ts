import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import { BotNotFound } from "../domain/Bot.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import { Cursor, cursorAfter, type SearchPage, type SearchRequest } from "../domain/SearchPage.js"
import * as Scope from "../domain/Scope.js"
import * as SearchQuery from "../domain/SearchQuery.js"
import { BotStore } from "../stores/BotStore.js"
import { SearchStore } from "../stores/SearchStore.js"

/** The chats a caller may search: every chat, or those of a chat scope. */
export type SearchScope = Scope.ChatScope

/** Full-text search over the stored messages. */
export interface SearchService {
  /**
   * One page of the messages of the bots in `scope` (of `bot_id` only, when given; the caller checks that it is
   * in scope) matching `q`, newest stored first. `InvalidInput` names a malformed `q`, `cursor` or range.
   */
  readonly search: (
    request: SearchRequest,
    scope: SearchScope
  ) => Effect.Effect<SearchPage, InvalidInput | BotNotFound | StorageError>
}

/** Full-text search over the stored messages. */
export class Search extends Context.Tag("@botrelay/core/Search")<Search, SearchService>() {}

const decodeCursor = Schema.decodeEither(Cursor)

const emptyPage: SearchPage = { items: [], next_cursor: null }

/** Builds the service on the stores the host provides. */
export const make: Effect.Effect<SearchService, never, BotStore | SearchStore> = Effect.gen(function*() {
  const botStore = yield* BotStore
  const searchStore = yield* SearchStore

  const filterFor = (botId: number | undefined, scope: SearchScope) =>
    botId === undefined
      ? Effect.succeed(scope === "all" ? undefined : Scope.filterOf(scope, scope.map((e) => e.bot_id)))
      : botStore.findBot(botId).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new BotNotFound({ id: botId })),
          onSome: () => Effect.succeed(Scope.filterOf(scope, [botId]))
        }))
      )

  return Search.of({
    search: (request, scope) =>
      Effect.gen(function*() {
        const terms = yield* Either.mapLeft(SearchQuery.parse(request.q), (problem) => InvalidInput.field("q", problem))
        const before = request.cursor === undefined
          ? undefined
          : yield* Either.mapLeft(
            decodeCursor(request.cursor),
            () => InvalidInput.field("cursor", "cursor must be a next_cursor this endpoint gave out")
          )
        if (request.from !== undefined && request.to !== undefined && request.from >= request.to) {
          return yield* InvalidInput.field("from", "from must be earlier than to")
        }
        const filter = yield* filterFor(request.bot_id, scope)
        if (filter !== undefined && Scope.isEmpty(filter)) return emptyPage
        const found = yield* searchStore.searchMessages({
          terms,
          bot_ids: filter?.bot_ids,
          chats: filter?.chats,
          chat_id: request.chat_id,
          user_id: request.user_id,
          from: request.from,
          to: request.to,
          before,
          limit: request.limit + 1
        })
        const items = found.slice(0, request.limit)
        return {
          items: items.map((f) => f.message),
          next_cursor: found.length > request.limit ? cursorAfter(items[items.length - 1]!.position) : null
        }
      }).pipe(Effect.withSpan("Search.search"))
  })
})

/** The service on the stores the host provides. */
export const layer: Layer.Layer<Search, never, BotStore | SearchStore> = Layer.effect(Search, make)
