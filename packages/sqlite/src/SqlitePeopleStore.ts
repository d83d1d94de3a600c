import { type PeopleStore, type Person, Scope } from "@botrelay/core"
import { PeopleQueries, TagQueries } from "@botrelay/sql"
import { Option } from "effect"
import { attempt, type Connection, db } from "./SqliteConnection.js"

/** The `PeopleStore` on SQLite. */
export const make = (c: Connection): PeopleStore.PeopleStoreService => {
  /** The people with these ids as the bots saw them, in that order. */
  const people = (filter: Scope.ChatFilter, userIds: ReadonlyArray<number>): Array<Person.Person> =>
    userIds.length === 0 ? [] : PeopleQueries.toPeople(
      userIds,
      c.all(PeopleQueries.sightingsOf(db, filter, userIds)),
      c.all(PeopleQueries.chatsOf(db, filter, userIds)),
      c.all(PeopleQueries.tagsOf(db, filter, userIds)).map(TagQueries.toTag)
    )

  return {
    listPeople: (query) =>
      attempt("listPeople", () =>
        query.bot_ids.length === 0 && (query.chats ?? []).length === 0
          ? []
          : people(PeopleQueries.filterOf(query), c.all(PeopleQueries.pageOfPeople(db, query)).map((r) => r.user_id))),

    findPerson: (userId, filter) =>
      attempt("findPerson", () => Scope.isEmpty(filter) ? Option.none() : Option.fromNullable(people(filter, [userId])[0]))
  }
}
