import { Either, Schema } from "effect"
import { decodeCursor, encodeCursor } from "./Chat.js"
import { Tag } from "./ChatTag.js"

/** A chat a person was seen in, through one bot; `title` is the chat's title, or the name of a private chat's user. */
export const PersonChat = Schema.Struct({
  bot_id: Schema.Int,
  chat_id: Schema.Int,
  title: Schema.String,
  /** False once a send through this bot failed because the person blocked it (see `Chat.reachable`). */
  reachable: Schema.Boolean,
  /** Unix seconds since the chat is unreachable; 0 while reachable. */
  unreachable_since: Schema.Int,
  /** Telegram's reason; "" while reachable. */
  unreachable_reason: Schema.String
}).annotations({ identifier: "PersonChat" })
export type PersonChat = typeof PersonChat.Type

/**
 * A Telegram user seen by the caller's bots: names from the latest sighting, first and last seen (Unix
 * seconds) over those bots, the chats they were seen in and their tags.
 */
export const Person = Schema.Struct({
  user_id: Schema.Int,
  username: Schema.String,
  first_name: Schema.String,
  last_name: Schema.String,
  language_code: Schema.String,
  is_bot: Schema.Boolean,
  first_seen_at: Schema.Int,
  last_seen_at: Schema.Int,
  chats: Schema.Array(PersonChat),
  tags: Schema.Array(Tag),
  /** The bots (of the caller's scope) with a private chat with the person that is not marked unreachable. */
  reachable_bot_ids: Schema.Array(Schema.Int)
}).annotations({ identifier: "Person" })
export type Person = typeof Person.Type

/** A page of people: `next_cursor` continues it, null on the last page. */
export const PersonPage = Schema.Struct({
  items: Schema.Array(Person),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PersonPage" })
export type PersonPage = typeof PersonPage.Type

/** Where a page of people starts: after this person in the list order (last seen first). */
export interface PersonCursor {
  readonly last_seen_at: number
  readonly user_id: number
}

/** A query of people, last seen first (last_seen_at desc, then user_id desc). */
export interface PeopleQuery {
  /** The bots whose sightings count. */
  readonly bot_ids: ReadonlyArray<number>
  /** Single chats of other bots whose members count too (a chat-level scope). */
  readonly chats?: ReadonlyArray<{ readonly bot_id: number; readonly chat_id: number }> | undefined
  /** Only people seen in this chat (of any of the bots). */
  readonly chat_id?: number | undefined
  /** Lower-case text the username or names must contain. */
  readonly q?: string | undefined
  readonly limit: number
  readonly after?: PersonCursor | undefined
}

/** The cursor after a person. */
export const personCursor = (person: Pick<Person, "last_seen_at" | "user_id">): string =>
  encodeCursor([person.last_seen_at, person.user_id])

/** The position a person cursor names. */
export const decodePersonCursor = (cursor: string): Either.Either<PersonCursor, string> =>
  Either.map(decodeCursor(cursor, 2), ([last_seen_at, user_id]) => ({ last_seen_at: last_seen_at!, user_id: user_id! }))

/** None of the caller's bots has seen this user. */
export class PersonNotFound extends Schema.TaggedError<PersonNotFound>()("PersonNotFound", {
  user_id: Schema.Int
}) {
  override get message() {
    return `no bot in scope has seen user ${this.user_id}`
  }
}
