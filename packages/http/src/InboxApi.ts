import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Chat, Person, Stats } from "@botrelay/core"
import { Schema } from "effect"

/**
 * The contract of the operator inbox: chats, people and stats of bots that keep history. The groups
 * get their authorization where `Api` adds them.
 */

const Id = Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))
const ChatId = Schema.NumberFromString.pipe(Schema.int(), Schema.between(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER))

/** `limit` of a cursor-paginated list: 1..200, 50 by default. */
const Limit = Schema.optionalWith(
  Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(1, Chat.maxPageSize, { message: () => `limit must be an integer from 1 to ${Chat.maxPageSize}` })
  ),
  { default: () => 50 }
)

const Cursor = Schema.optionalWith(
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "cursor must be a next_cursor this endpoint returned" }),
    Schema.maxLength(200, { message: () => "cursor must be a next_cursor this endpoint returned" })
  ),
  { exact: true }
)

const Search = Schema.optionalWith(
  Schema.String.pipe(Schema.maxLength(256, { message: () => "q must be at most 256 characters" })),
  { exact: true }
)

/** A Unix time in seconds. */
const UnixTime = (field: string) =>
  Schema.NumberFromString.pipe(
    Schema.int({ message: () => `${field} must be a Unix time in whole seconds` }),
    Schema.between(0, 253_402_300_799, { message: () => `${field} must be a Unix time in seconds` })
  )

/** Query of `GET /api/chats`. */
export const ChatsQuery = Schema.Struct({
  bot_id: Schema.optionalWith(Id, { exact: true }),
  q: Search,
  type: Schema.optionalWith(Chat.ChatType, { exact: true }),
  unread: Schema.optionalWith(
    Schema.BooleanFromString.annotations({ message: () => "unread must be true or false" }),
    { exact: true }
  ),
  limit: Limit,
  cursor: Cursor
})

/** Query of `GET /api/chats/get`. */
export const ChatKeyQuery = Schema.Struct({ bot_id: Id, chat_id: ChatId })

/** Body of `POST /api/chats/read` and `POST /api/chats/refresh`. */
export const ChatKey = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive()),
  chat_id: Schema.Int
}).annotations({ identifier: "ChatKey" })

/** Chats of bots that keep history. */
export class ChatsGroup extends HttpApiGroup.make("chats")
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(ChatsQuery).addSuccess(Chat.ChatPage))
  .add(HttpApiEndpoint.get("get", "/get").setUrlParams(ChatKeyQuery).addSuccess(Chat.Chat))
  .add(HttpApiEndpoint.post("read", "/read").setPayload(ChatKey).addSuccess(Chat.Chat))
  .add(HttpApiEndpoint.post("refresh", "/refresh").setPayload(ChatKey).addSuccess(Chat.Chat))
  .prefix("/chats")
{}

/** Query of `GET /api/people`. */
export const PeopleQuery = Schema.Struct({
  bot_id: Schema.optionalWith(Id, { exact: true }),
  chat_id: Schema.optionalWith(ChatId, { exact: true }),
  q: Search,
  limit: Limit,
  cursor: Cursor
})

/** People the bots that keep history have seen. */
export class PeopleGroup extends HttpApiGroup.make("people")
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(PeopleQuery).addSuccess(Person.PersonPage))
  .add(HttpApiEndpoint.get("get", "/get").setUrlParams(Schema.Struct({ user_id: Id })).addSuccess(Person.Person))
  .prefix("/people")
{}

/** Query of `GET /api/stats`. */
export const StatsQuery = Schema.Struct({
  bot_id: Schema.optionalWith(Id, { exact: true }),
  from: Schema.optionalWith(UnixTime("from"), { exact: true }),
  to: Schema.optionalWith(UnixTime("to"), { exact: true })
})

/** Figures of the bots' activity. */
export class StatsGroup extends HttpApiGroup.make("stats")
  .add(HttpApiEndpoint.get("get", "/").setUrlParams(StatsQuery).addSuccess(Stats.Stats))
  .prefix("/stats")
{}
