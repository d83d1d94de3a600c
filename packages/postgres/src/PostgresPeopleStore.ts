import { type PeopleStore, type Person, Scope } from "@botrelay/core"
import { PeopleQueries, type Tables, TagQueries } from "@botrelay/sql"
import { Option } from "effect"
import type { Kysely } from "kysely"
import { all, type Connection } from "./PostgresConnection.js"

/** The `PeopleStore` on Postgres. */
export const make = (c: Connection): PeopleStore.PeopleStoreService => {
  /** The people with these ids as the bots saw them, in that order. */
  const people = async (
    db: Kysely<Tables.Database>,
    filter: Scope.ChatFilter,
    userIds: ReadonlyArray<number>
  ): Promise<Array<Person.Person>> =>
    userIds.length === 0 ? [] : PeopleQueries.toPeople(
      userIds,
      await all(db, PeopleQueries.sightingsOf(db, filter, userIds)),
      await all(db, PeopleQueries.chatsOf(db, filter, userIds)),
      (await all(db, PeopleQueries.tagsOf(db, filter, userIds))).map(TagQueries.toTag)
    )

  return {
    listPeople: (query) =>
      c.use("listPeople", async (db) =>
        query.bot_ids.length === 0 && (query.chats ?? []).length === 0
          ? []
          : people(db, PeopleQueries.filterOf(query), (await all(db, PeopleQueries.pageOfPeople(db, query))).map((r) => r.user_id))),

    findPerson: (userId, filter) =>
      c.use("findPerson", async (db) =>
        Scope.isEmpty(filter) ? Option.none() : Option.fromNullable((await people(db, filter, [userId]))[0]))
  }
}
