import type { PeopleStore, Person } from "@botrelay/core"
import { PeopleQueries, TagQueries } from "@botrelay/sql"
import { Option } from "effect"
import { attempt, type Connection, db } from "./SqliteConnection.js"

/** The `PeopleStore` on SQLite. */
export const make = (c: Connection): PeopleStore.PeopleStoreService => {
  /** The people with these ids as the bots saw them, in that order. */
  const people = (botIds: ReadonlyArray<number>, userIds: ReadonlyArray<number>): Array<Person.Person> =>
    userIds.length === 0 ? [] : PeopleQueries.toPeople(
      userIds,
      c.all(PeopleQueries.sightingsOf(db, botIds, userIds)),
      c.all(PeopleQueries.chatsOf(db, botIds, userIds)),
      c.all(PeopleQueries.tagsOf(db, botIds, userIds)).map(TagQueries.toTag)
    )

  return {
    listPeople: (query) =>
      attempt("listPeople", () =>
        query.bot_ids.length === 0
          ? []
          : people(query.bot_ids, c.all(PeopleQueries.pageOfPeople(db, query)).map((r) => r.user_id))),

    findPerson: (userId, botIds) =>
      attempt("findPerson", () => botIds.length === 0 ? Option.none() : Option.fromNullable(people(botIds, [userId])[0]))
  }
}
