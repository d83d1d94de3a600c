import { Either, Encoding, ParseResult, Schema } from "effect"
import { Message } from "./Message.js"
import { Note } from "./Note.js"

/** A message that matched a search: the message, and `highlight`, its text as HTML with each match in `<mark>`. */
export const FoundMessage = Schema.extend(Message, Schema.Struct({ highlight: Schema.String })).annotations({
  identifier: "FoundMessage"
})
export type FoundMessage = typeof FoundMessage.Type

/** What a search finds: `kind` tells messages from notes. */
export const SearchKind = Schema.Literal("message", "note")
export type SearchKind = typeof SearchKind.Type

/** A found message as a search item: `kind: "message"`. */
export const MessageItem = Schema.Struct({
  kind: Schema.Literal("message"),
  ...Message.fields,
  highlight: Schema.String
}).annotations({
  identifier: "FoundMessageItem"
})

/** A found note as a search item: `kind: "note"`, the Note and its `highlight`. */
export const NoteItem = Schema.Struct({
  kind: Schema.Literal("note"),
  ...Note.fields,
  highlight: Schema.String
}).annotations({ identifier: "FoundNoteItem" })

/** An item of a search page. */
export const SearchItem = Schema.Union(MessageItem, NoteItem).annotations({ identifier: "SearchItem" })
export type SearchItem = typeof SearchItem.Type

/**
 * A page of search results, newest first (messages in the order they were stored; with notes, both by
 * time); `next_cursor` fetches the next page, `null` on the last.
 */
export const SearchPage = Schema.Struct({
  items: Schema.Array(SearchItem),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "SearchPage" })
export type SearchPage = typeof SearchPage.Type

/** The default page size of `GET /api/search`. */
export const defaultLimit = 50

/** The largest page size of `GET /api/search`. */
export const maxLimit = 200

/** What `GET /api/search` asks for, once its parameters are well-formed; `q` and `cursor` are still unparsed. */
export interface SearchRequest {
  readonly q: string
  readonly bot_id?: number | undefined
  readonly chat_id?: number | undefined
  readonly user_id?: number | undefined
  /** Unix seconds, inclusive. */
  readonly from?: number | undefined
  /** Unix seconds, exclusive. */
  readonly to?: number | undefined
  readonly limit: number
  readonly cursor?: string | undefined
  /** What to find; messages only when omitted. */
  readonly kinds?: ReadonlyArray<SearchKind> | undefined
}

/**
 * Where a message stands in search order: a positive integer the store assigns, larger for messages stored
 * later, and kept when a message is edited or moved.
 */
export type Position = number

const positionText = /^p([1-9][0-9]{0,15})$/

/**
 * A cursor as clients see it (opaque: base64url of the position of the last message of a page) and the position
 * it stands for. Anything that is not a cursor this API gave out fails to decode.
 */
export const Cursor = Schema.transformOrFail(Schema.String, Schema.Int.pipe(Schema.positive()), {
  strict: true,
  decode: (cursor, _, ast) => {
    const text = Encoding.decodeBase64UrlString(cursor).pipe(Either.getOrElse(() => ""))
    const digits = positionText.exec(text)?.[1]
    const position = digits === undefined ? NaN : Number(digits)
    return Number.isSafeInteger(position) && Encoding.encodeBase64Url(text) === cursor
      ? ParseResult.succeed(position)
      : ParseResult.fail(new ParseResult.Type(ast, cursor, "cursor must be a next_cursor this endpoint gave out"))
  },
  encode: (position) => ParseResult.succeed(Encoding.encodeBase64Url(`p${position}`))
})

/** The cursor of the page that follows the message at `position`. */
export const cursorAfter = (position: Position): string => Schema.encodeSync(Cursor)(position)

/** Where a search over messages and notes stands: the last message's and the last note's position taken (0: none yet). */
export interface MixedPosition {
  readonly message: Position
  readonly note: Position
}

const mixedText = /^m(0|[1-9][0-9]{0,15})n(0|[1-9][0-9]{0,15})$/

/** A cursor of a search that finds notes: opaque, base64url of both positions; nothing else decodes. */
export const MixedCursor = Schema.transformOrFail(
  Schema.String,
  Schema.Struct({ message: Schema.Int, note: Schema.Int }),
  {
    strict: true,
    decode: (cursor, _, ast) => {
      const text = Encoding.decodeBase64UrlString(cursor).pipe(Either.getOrElse(() => ""))
      const canonical = Encoding.encodeBase64Url(text) === cursor
      const mixed = mixedText.exec(text)
      const parts = mixed === null ? undefined : [Number(mixed[1]), Number(mixed[2])]
      return canonical && parts !== undefined && parts.every(Number.isSafeInteger)
        ? ParseResult.succeed({ message: parts[0]!, note: parts[1]! })
        : ParseResult.fail(new ParseResult.Type(ast, cursor, "cursor must be a next_cursor this endpoint gave out"))
    },
    encode: (position) => ParseResult.succeed(Encoding.encodeBase64Url(`m${position.message}n${position.note}`))
  }
)

/** The cursor of the page of a search with notes that follows these positions. */
export const mixedCursorAfter = (position: MixedPosition): string => Schema.encodeSync(MixedCursor)(position)
