import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { ChatFilter } from "../domain/Scope.js"
import type { PeopleQuery, Person } from "../domain/Person.js"

/** The users the bots that keep history have seen (written through `ChatStore.recordSightings`). */
export interface PeopleStoreService {
  /**
   * People seen by the query's bots, last seen first, each with names from the latest sighting, first and
   * last seen over those bots, the chats they were seen in (migrated-away chats left out) and their tags.
   */
  readonly listPeople: (query: PeopleQuery) => Effect.Effect<ReadonlyArray<Person>, StorageError>
  /** One user as the filter's bots and chats saw them; `None` when none of them did. */
  readonly findPerson: (
    userId: number,
    filter: ChatFilter
  ) => Effect.Effect<Option.Option<Person>, StorageError>
}

/** The people; the host's driver provides it. */
export class PeopleStore extends Context.Tag("@botrelay/core/PeopleStore")<PeopleStore, PeopleStoreService>() {}
