import { Chat } from "@botrelay/core"
import type { ChatTag, Person, Scope } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import { containsPattern, matches } from "./ChatQueries.js"
import { inFilter } from "./ScopeQueries.js"
import type { Database, PeopleTable } from "./Tables.js"

/** Every bot a filter touches. */
const botsOf = (filter: Scope.ChatFilter): ReadonlyArray<number> => [
  ...new Set([...filter.bot_ids, ...filter.chats.map((c) => c.bot_id)])
]

/**
 * Sightings (`botrelay_people as p`) in the filter: of its whole bots, or of a bot whose single chats in the
 * filter the user was seen in.
 */
const visible = (filter: Scope.ChatFilter) =>
  filter.chats.length === 0
    ? sql<boolean>`${sql.ref("p.bot_id")} in (${sql.join(filter.bot_ids)})`
    : sql<boolean>`(${
      filter.bot_ids.length === 0 ? sql`1 = 0` : sql`${sql.ref("p.bot_id")} in (${sql.join(filter.bot_ids)})`
    } or exists (select 1 from botrelay_chat_members cm where cm.bot_id = p.bot_id and cm.user_id = p.user_id and ${
      inFilter({ bot_ids: [], chats: filter.chats }, "cm.bot_id", "cm.chat_id")
    }))`

/** The filter of a people query. */
export const filterOf = (query: Person.PeopleQuery): Scope.ChatFilter => ({ bot_ids: query.bot_ids, chats: query.chats ?? [] })

/** The user ids of a page of people (at least one bot or chat), last seen first over the bots. */
export const pageOfPeople = (db: Kysely<Database>, query: Person.PeopleQuery) => {
  const seen = sql<number>`max(p.last_seen_at)`
  const filter = filterOf(query)
  let select = db.selectFrom("botrelay_people as p")
    .select(["p.user_id", seen.as("seen")])
    .where(visible(filter))
  if (query.q !== undefined && query.q !== "") select = select.where(matches("p.search", containsPattern(query.q)))
  const chatId = query.chat_id
  if (chatId !== undefined) {
    select = select.where("p.user_id", "in", (eb) =>
      eb.selectFrom("botrelay_chat_members as cm")
        .select("cm.user_id")
        .where("cm.bot_id", "in", botsOf(filter))
        .where("cm.chat_id", "=", chatId))
  }
  let grouped = select.groupBy("p.user_id")
  const after = query.after
  if (after !== undefined) {
    grouped = grouped.having((eb) =>
      eb.or([
        eb(seen, "<", after.last_seen_at),
        eb.and([eb(seen, "=", after.last_seen_at), eb("p.user_id", "<", after.user_id)])
      ])
    )
  }
  return grouped.orderBy("seen", "desc").orderBy("p.user_id", "desc").limit(query.limit)
}

/** What the filter's bots (at least one bot or chat) know of these users (at least one). */
export const sightingsOf = (db: Kysely<Database>, filter: Scope.ChatFilter, userIds: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_people as p").selectAll().where(visible(filter)).where("p.user_id", "in", userIds)

/** The chats in the filter, not migrated away, these users were seen in, latest first. */
export const chatsOf = (db: Kysely<Database>, filter: Scope.ChatFilter, userIds: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_chat_members as cm")
    .innerJoin("botrelay_chats as c", (join) => join.onRef("c.bot_id", "=", "cm.bot_id").onRef("c.chat_id", "=", "cm.chat_id"))
    .select([
      "cm.user_id",
      "cm.bot_id",
      "cm.chat_id",
      "c.title",
      "c.username",
      "c.first_name",
      "c.last_name",
      "c.unreachable_since",
      "c.unreachable_reason"
    ])
    .where(inFilter(filter, "cm.bot_id", "cm.chat_id"))
    .where("cm.user_id", "in", userIds)
    .where("c.migrated_to_chat_id", "=", sql.lit(0))
    .orderBy("cm.last_seen_at", "desc")
    .orderBy("cm.bot_id")
    .orderBy("cm.chat_id")

/** The tags on these users (at least one) in the filter's chats (at least one bot or chat), by id. */
export const tagsOf = (db: Kysely<Database>, filter: Scope.ChatFilter, userIds: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_tags").selectAll().where(inFilter(filter, "bot_id", "chat_id")).where("user_id", "in", userIds)
    .orderBy("id")

/** A row of `chatsOf`. */
export interface ChatOfRow {
  readonly user_id: number
  readonly bot_id: number
  readonly chat_id: number
  readonly title: string
  readonly username: string
  readonly first_name: string
  readonly last_name: string
  readonly unreachable_since: number
  readonly unreachable_reason: string
}

/**
 * People from what the bots know of them, in the order of `userIds`: names, language and is_bot from the
 * latest sighting, first and last seen over the bots; users none of the bots saw are left out.
 */
export const toPeople = (
  userIds: ReadonlyArray<number>,
  sightings: ReadonlyArray<Selectable<PeopleTable>>,
  chats: ReadonlyArray<ChatOfRow>,
  tags: ReadonlyArray<ChatTag.Tag>
): Array<Person.Person> => {
  const byUser = new Map<number, Array<Selectable<PeopleTable>>>()
  for (const s of sightings) {
    const list = byUser.get(s.user_id)
    if (list === undefined) byUser.set(s.user_id, [s])
    else list.push(s)
  }
  const people: Array<Person.Person> = []
  for (const userId of userIds) {
    const seen = byUser.get(userId)
    if (seen === undefined) continue
    const latest = seen.reduce((a, b) =>
      b.last_seen_at > a.last_seen_at || (b.last_seen_at === a.last_seen_at && b.bot_id > a.bot_id) ? b : a
    )
    const language = latest.language_code !== ""
      ? latest.language_code
      : seen.find((s) => s.language_code !== "")?.language_code ?? ""
    const own = chats.filter((c) => c.user_id === userId)
    people.push({
      user_id: userId,
      username: latest.username,
      first_name: latest.first_name,
      last_name: latest.last_name,
      language_code: language,
      is_bot: latest.is_bot === 1,
      first_seen_at: Math.min(...seen.map((s) => s.first_seen_at)),
      last_seen_at: latest.last_seen_at,
      chats: own.map((c) => ({
        bot_id: c.bot_id,
        chat_id: c.chat_id,
        title: Chat.displayTitle(c),
        reachable: c.unreachable_since === 0,
        unreachable_since: c.unreachable_since,
        unreachable_reason: c.unreachable_reason
      })),
      tags: tags.filter((t) => t.user_id === userId),
      reachable_bot_ids: [
        ...new Set(own.filter((c) => c.chat_id === userId && c.unreachable_since === 0).map((c) => c.bot_id))
      ]
    })
  }
  return people
}
