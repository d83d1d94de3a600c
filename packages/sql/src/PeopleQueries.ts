import { Chat } from "@botrelay/core"
import type { ChatTag, Person } from "@botrelay/core"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import { containsPattern, matches } from "./ChatQueries.js"
import type { Database, PeopleTable } from "./Tables.js"

/** The user ids of a page of people (at least one bot), last seen first over the bots. */
export const pageOfPeople = (db: Kysely<Database>, query: Person.PeopleQuery) => {
  const seen = sql<number>`max(p.last_seen_at)`
  let select = db.selectFrom("botrelay_people as p")
    .select(["p.user_id", seen.as("seen")])
    .where("p.bot_id", "in", query.bot_ids)
  if (query.q !== undefined && query.q !== "") select = select.where(matches("p.search", containsPattern(query.q)))
  const chatId = query.chat_id
  if (chatId !== undefined) {
    select = select.where("p.user_id", "in", (eb) =>
      eb.selectFrom("botrelay_chat_members as cm")
        .select("cm.user_id")
        .where("cm.bot_id", "in", query.bot_ids)
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

/** What the bots (at least one) know of these users (at least one). */
export const sightingsOf = (db: Kysely<Database>, botIds: ReadonlyArray<number>, userIds: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_people").selectAll().where("bot_id", "in", botIds).where("user_id", "in", userIds)

/** The chats, not migrated away, the bots saw these users in, latest first. */
export const chatsOf = (db: Kysely<Database>, botIds: ReadonlyArray<number>, userIds: ReadonlyArray<number>) =>
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
    .where("cm.bot_id", "in", botIds)
    .where("cm.user_id", "in", userIds)
    .where("c.migrated_to_chat_id", "=", sql.lit(0))
    .orderBy("cm.last_seen_at", "desc")
    .orderBy("cm.bot_id")
    .orderBy("cm.chat_id")

/** The tags on these users (at least one) in the bots' chats (at least one bot), by id. */
export const tagsOf = (db: Kysely<Database>, botIds: ReadonlyArray<number>, userIds: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_tags").selectAll().where("bot_id", "in", botIds).where("user_id", "in", userIds).orderBy("id")

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
