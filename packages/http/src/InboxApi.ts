import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Chat, Person, Stats } from "@botrelay/core"
import { ParseResult, Schema } from "effect"
import { ChatId, Id } from "./QueryParams.js"

/**
 * The contract of the operator inbox: chats, people and stats of bots that keep history. The groups
 * get their authorization where `Api` adds them.
 */


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

/** A comma list of a query parameter's values, each one `decode` reads as `item`'s; 400 naming the first other one. */
const CommaList = <A>(field: string, expected: string, item: Schema.Schema<A>, decode: (text: string) => A | undefined) =>
  Schema.transformOrFail(Schema.String, Schema.Array(item), {
    strict: true,
    decode: (text, _, ast) => {
      const items: Array<A> = []
      for (const part of text.split(",")) {
        const decoded = decode(part.trim())
        if (decoded === undefined) {
          return ParseResult.fail(new ParseResult.Type(ast, text, `${field} must be a comma list of ${expected}; "${part}" is not one`))
        }
        items.push(decoded)
      }
      return ParseResult.succeed(items)
    },
    encode: (items) => ParseResult.succeed(items.join(","))
  })

const oneOf = <L extends string>(values: ReadonlyArray<L>) => (text: string): L | undefined =>
  values.includes(text as L) ? text as L : undefined

/** An assignee as `GET /api/chats` takes it: the caller (`me`), nobody (`none`) or an account id. */
const AssigneeFilter = Schema.Union(Schema.Literal("me", "none"), Schema.Int.pipe(Schema.positive()))
export type AssigneeFilter = typeof AssigneeFilter.Type

const assigneeOf = (text: string): AssigneeFilter | undefined =>
  text === "me" || text === "none" ? text : /^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : undefined

/** Query of `GET /api/chats`. */
export const ChatsQuery = Schema.Struct({
  bot_id: Schema.optionalWith(Id, { exact: true }),
  q: Search,
  type: Schema.optionalWith(Chat.ChatType, { exact: true }),
  unread: Schema.optionalWith(
    Schema.BooleanFromString.annotations({ message: () => "unread must be true or false" }),
    { exact: true }
  ),
  status: Schema.optionalWith(
    CommaList("status", "open, pending, resolved, snoozed", Chat.ConversationStatus, oneOf(Chat.ConversationStatus.literals)),
    { exact: true }
  ),
  priority: Schema.optionalWith(
    CommaList("priority", "none, low, medium, high, urgent", Chat.Priority, oneOf(Chat.Priority.literals)),
    { exact: true }
  ),
  assignee: Schema.optionalWith(
    CommaList("assignee", "me, none or account ids", AssigneeFilter, assigneeOf),
    { exact: true }
  ),
  limit: Limit,
  cursor: Cursor
})

/** Query of `GET /api/chats/counts`. */
export const ChatCountsQuery = Schema.Struct({ bot_id: Schema.optionalWith(Id, { exact: true }) })

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
  .add(HttpApiEndpoint.post("update", "/update").setPayload(Chat.ChatUpdate).addSuccess(Chat.Chat))
  .add(HttpApiEndpoint.get("counts", "/counts").setUrlParams(ChatCountsQuery).addSuccess(Chat.ChatCounts))
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
