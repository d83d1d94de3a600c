import { Context, Effect, Either, Layer, Option, Schema } from "effect"
import { BotNotFound } from "../domain/Bot.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import {
  Cursor,
  cursorAfter,
  MixedCursor,
  mixedCursorAfter,
  type SearchItem,
  type SearchPage,
  type SearchRequest
} from "../domain/SearchPage.js"
import * as Scope from "../domain/Scope.js"
import * as SearchQuery from "../domain/SearchQuery.js"
import { BotStore } from "../stores/BotStore.js"
import { type Found, type FoundNoteAt, SearchStore } from "../stores/SearchStore.js"

/** The chats a caller may search: every chat, or those of a chat scope. */
export type SearchScope = Scope.ChatScope

/** Full-text search over the stored messages and notes. */
export interface SearchService {
  /**
   * One page of the messages (and notes, when `kinds` names them) of the bots in `scope` (of `bot_id` only,
   * when given; the caller checks that it is in scope) matching `q`: messages alone newest stored first,
   * with notes both newest first by time (a message's `date`, a note's `created_at`). Notes have no sender:
   * with `user_id` none is found. `InvalidInput` names a malformed `q`, `cursor` or range.
   */
  readonly search: (
    request: SearchRequest,
    scope: SearchScope
  ) => Effect.Effect<SearchPage, InvalidInput | BotNotFound | StorageError>
}

/** Full-text search over the stored messages. */
export class Search extends Context.Tag("@botrelay/core/Search")<Search, SearchService>() {}

const decodeCursor = Schema.decodeEither(Cursor)
const decodeMixedCursor = Schema.decodeEither(MixedCursor)

const badCursor = () => InvalidInput.field("cursor", "cursor must be a next_cursor this endpoint gave out")

/** A found message or note, with its time and position, on the way to a page. */
type Candidate =
  | { readonly kind: "message"; readonly at: number; readonly found: Found }
  | { readonly kind: "note"; readonly at: number; readonly found: FoundNoteAt }

/**
 * Found messages and notes, each in its own order, as one list newest first: the newer head each time (a
 * note on a tie), so that what a page takes of each is a prefix of it and the cursor can resume both.
 */
const merge = (messages: ReadonlyArray<Candidate>, notes: ReadonlyArray<Candidate>): Array<Candidate> => {
  const merged: Array<Candidate> = []
  let m = 0
  let n = 0
  while (m < messages.length || n < notes.length) {
    const message = messages[m]
    const note = notes[n]
    if (note !== undefined && (message === undefined || note.at >= message.at)) {
      merged.push(note)
      n++
    } else {
      merged.push(message!)
      m++
    }
  }
  return merged
}

const itemOf = (candidate: Candidate): SearchItem =>
  candidate.kind === "message"
    ? { kind: "message", ...candidate.found.message }
    : { kind: "note", ...candidate.found.note }

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
        if (request.from !== undefined && request.to !== undefined && request.from >= request.to) {
          return yield* InvalidInput.field("from", "from must be earlier than to")
        }
        const kinds = request.kinds ?? ["message"]
        const withNotes = kinds.includes("note")
        const withMessages = kinds.includes("message")
        const before = request.cursor === undefined
          ? { message: 0, note: 0 }
          : withNotes
          ? yield* Either.mapLeft(decodeMixedCursor(request.cursor), badCursor)
          : { message: yield* Either.mapLeft(decodeCursor(request.cursor), badCursor), note: 0 }
        const filter = yield* filterFor(request.bot_id, scope)
        if (filter !== undefined && Scope.isEmpty(filter)) return emptyPage
        const filters = { terms, bot_ids: filter?.bot_ids, chats: filter?.chats, chat_id: request.chat_id, from: request.from, to: request.to, limit: request.limit + 1 }
        const foundMessages = withMessages
          ? yield* searchStore.searchMessages({
            ...filters,
            user_id: request.user_id,
            before: before.message === 0 ? undefined : before.message
          })
          : []
        if (!withNotes) {
          const items = foundMessages.slice(0, request.limit)
          return {
            items: items.map((f): SearchItem => ({ kind: "message", ...f.message })),
            next_cursor: foundMessages.length > request.limit ? cursorAfter(items[items.length - 1]!.position) : null
          }
        }
        const foundNotes = request.user_id !== undefined
          ? []
          : yield* searchStore.searchNotes({ ...filters, before: before.note === 0 ? undefined : before.note })
        const candidates = merge(
          foundMessages.map((found): Candidate => ({ kind: "message", at: found.message.date, found })),
          foundNotes.map((found): Candidate => ({ kind: "note", at: found.note.created_at, found }))
        )
        const taken = candidates.slice(0, request.limit)
        const last = (kind: Candidate["kind"], otherwise: number) =>
          taken.reduce((position, c) => c.kind === kind ? c.found.position : position, otherwise)
        return {
          items: taken.map(itemOf),
          next_cursor: candidates.length > request.limit
            ? mixedCursorAfter({ message: last("message", before.message), note: last("note", before.note) })
            : null
        }
      }).pipe(Effect.withSpan("Search.search"))
  })
})

/** The service on the stores the host provides. */
export const layer: Layer.Layer<Search, never, BotStore | SearchStore> = Layer.effect(Search, make)
