import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { SearchPage } from "@botrelay/core"
import { Schema } from "effect"

const IdParam = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.positive(),
  Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER)
)

const SignedIdParam = Schema.NumberFromString.pipe(
  Schema.int(),
  Schema.between(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
)

const UnixTime = (name: string) =>
  Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(0, Number.MAX_SAFE_INTEGER, { message: () => `${name} must be a Unix time in whole seconds` })
  )

/** `kinds`: a comma list of `message` and `note`. */
const Kinds = Schema.transform(Schema.String, Schema.Array(Schema.String), {
  strict: true,
  decode: (s) => s.split(",").map((kind) => kind.trim()),
  encode: (kinds) => kinds.join(",")
}).pipe(
  Schema.compose(Schema.Array(SearchPage.SearchKind), { strict: false }),
  Schema.filter((kinds) => kinds.length > 0, { message: () => "kinds must name message, note or both" })
).annotations({
  message: () => "kinds must be a comma list of message and note",
  description: "comma list of message and note; both for accounts, message for API keys when omitted"
})

/**
 * Query of `GET /api/search`: `q` (the query language of `SearchQuery`), the filters, and a page (`limit`, `cursor`
 * from the previous page's `next_cursor`). `q` and `cursor` are parsed by the search service, which names their
 * problems.
 */
export const SearchParams = Schema.Struct({
  q: Schema.optionalWith(Schema.String, { default: () => "" }),
  bot_id: Schema.optionalWith(IdParam, { exact: true }),
  chat_id: Schema.optionalWith(SignedIdParam, { exact: true }),
  user_id: Schema.optionalWith(SignedIdParam, { exact: true }),
  from: Schema.optionalWith(UnixTime("from"), { exact: true }),
  to: Schema.optionalWith(UnixTime("to"), { exact: true }),
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(
      Schema.int(),
      Schema.between(1, SearchPage.maxLimit, {
        message: () => `limit must be an integer from 1 to ${SearchPage.maxLimit}`
      })
    ),
    { default: () => SearchPage.defaultLimit }
  ),
  cursor: Schema.optionalWith(Schema.String, { exact: true }),
  kinds: Schema.optionalWith(Kinds, { exact: true })
})

/**
 * Full-text search over stored messages, newest stored first, in the key's scope. The API adds its
 * authorization middleware (`Api.ts`), which this module cannot import without a cycle.
 */
export class SearchGroup extends HttpApiGroup.make("search")
  .add(HttpApiEndpoint.get("search", "/").setUrlParams(SearchParams).addSuccess(SearchPage.SearchPage))
  .prefix("/search")
{}
