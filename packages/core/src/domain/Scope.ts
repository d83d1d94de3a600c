import { Either, Schema } from "effect"
import { InvalidInput } from "./Errors.js"

/** The bots a caller may see: every bot (admins), or these (operators). */
export type BotScope = "all" | ReadonlyArray<number>

/** Whether the scope holds the bot. */
export const includes = (scope: BotScope, botId: number): boolean => scope === "all" || scope.includes(botId)

/**
 * What a scope entry lets its holder do with a bot's chats: `read` every GET, `reply` (sends, own edits,
 * read marks, conversation state, tags, notes), `moderate` (bans, admin changes, others' deletes, pins),
 * `configure` (the bot's settings, routes, bridges, deliveries). reply and moderate imply read.
 */
export const Ability = Schema.Literal("read", "reply", "moderate", "configure")
export type Ability = typeof Ability.Type

/** The abilities in their canonical order. */
export const abilities: ReadonlyArray<Ability> = Ability.literals

/** What an entry that names no abilities allows. */
export const defaultAbilities: ReadonlyArray<Ability> = ["read", "reply", "moderate"]

/** One entry of a key's or account's scope: a bot, some of its chats (none: every chat), what may be done there. */
export const Entry = Schema.Struct({
  bot_id: Schema.Int,
  chat_ids: Schema.Array(Schema.Int),
  abilities: Schema.Array(Ability)
}).annotations({ identifier: "ScopeEntry" })
export type Entry = typeof Entry.Type

/** A scope entry as a request gives it: `chat_ids` default to every chat, `abilities` to read, reply, moderate. */
export const EntryInput = Schema.Struct({
  bot_id: Schema.Int.pipe(Schema.positive({ message: () => "bot_id must be a positive integer" })),
  chat_ids: Schema.optionalWith(
    Schema.Array(Schema.Int.pipe(Schema.filter((id) => id !== 0 || "chat_ids must be chat ids (integers, not 0)")))
      .pipe(Schema.maxItems(1000, { message: () => "chat_ids may hold at most 1000 chats" })),
    { default: () => [] }
  ),
  abilities: Schema.optionalWith(
    Schema.Array(Ability).pipe(Schema.minItems(1, { message: () => "abilities must name at least one ability" })),
    { default: () => defaultAbilities }
  )
}).annotations({ identifier: "ScopeEntryInput" })
export type EntryInput = typeof EntryInput.Type

/** The `scopes` of a request body: at most one entry per bot. */
export const Entries = Schema.Array(EntryInput).pipe(
  Schema.filter((entries) => {
    const seen = new Set<number>()
    for (const [i, entry] of entries.entries()) {
      if (seen.has(entry.bot_id)) return { path: [i, "bot_id"], message: `scopes name bot ${entry.bot_id} twice` }
      seen.add(entry.bot_id)
    }
    return true
  })
).annotations({ identifier: "ScopeEntries" })

/** An entry with its chats sorted and its abilities deduplicated in canonical order. */
export const normalize = (entry: EntryInput): Entry => ({
  bot_id: entry.bot_id,
  chat_ids: [...new Set(entry.chat_ids)].sort((a, b) => a - b),
  abilities: abilities.filter((a) => entry.abilities.includes(a))
})

/** The bots of a scope, ascending: what `bot_ids` reports. */
export const botIdsOf = (entries: ReadonlyArray<Entry>): ReadonlyArray<number> =>
  [...new Set(entries.map((e) => e.bot_id))].sort((a, b) => a - b)

/**
 * The scope a body asks for: `scopes` as given, or `bot_ids` as a shorthand for entries over every chat
 * with the default abilities. Given both, they must name the same bots. `undefined` when neither is given.
 */
export const fromInput = (
  botIds: ReadonlyArray<number> | undefined,
  scopes: ReadonlyArray<EntryInput> | undefined
): Either.Either<ReadonlyArray<Entry> | undefined, InvalidInput> => {
  if (scopes === undefined) {
    return Either.right(
      botIds === undefined
        ? undefined
        : [...new Set(botIds)].sort((a, b) => a - b).map((bot_id) => ({
          bot_id,
          chat_ids: [],
          abilities: defaultAbilities
        }))
    )
  }
  const entries = scopes.map(normalize).sort((a, b) => a.bot_id - b.bot_id)
  if (botIds !== undefined) {
    const named = [...new Set(botIds)].sort((a, b) => a - b)
    const scoped = botIdsOf(entries)
    if (named.length !== scoped.length || named.some((id, i) => id !== scoped[i])) {
      return Either.left(InvalidInput.field("bot_ids", "bot_ids must name the same bots as scopes; give one of them"))
    }
  }
  return Either.right(entries)
}

/** Whether the entry allows the ability; reply and moderate imply read. */
export const allows = (entry: Entry, ability: Ability): boolean =>
  entry.abilities.includes(ability) ||
  (ability === "read" && (entry.abilities.includes("reply") || entry.abilities.includes("moderate")))

/** A bot and the chats of it a caller may read (none listed: every chat). */
export interface ChatsOf {
  readonly bot_id: number
  readonly chat_ids: ReadonlyArray<number>
}

/** The chats a caller may read: every chat of every bot (admins), or these. */
export type ChatScope = "all" | ReadonlyArray<ChatsOf>

/** The readable part of a caller's entries. */
export const readable = (entries: ReadonlyArray<Entry>): ReadonlyArray<ChatsOf> =>
  entries.filter((e) => allows(e, "read")).map(({ bot_id, chat_ids }) => ({ bot_id, chat_ids }))

/** Whether the scope holds the chat. */
export const holdsChat = (scope: ChatScope, botId: number, chatId: number): boolean =>
  scope === "all" || scope.some((e) => e.bot_id === botId && (e.chat_ids.length === 0 || e.chat_ids.includes(chatId)))

/** The bots a chat scope touches at all. */
export const botsOf = (scope: ChatScope): BotScope => scope === "all" ? "all" : scope.map((e) => e.bot_id)

/**
 * A chat scope as store queries take it: `bot_ids` whose chats are all in it, and `chats` of other bots
 * named one by one.
 */
export interface ChatFilter {
  readonly bot_ids: ReadonlyArray<number>
  readonly chats: ReadonlyArray<{ readonly bot_id: number; readonly chat_id: number }>
}

/** The filter of a scope restricted to these bots (the bots that keep history, or the one asked for). */
export const filterOf = (scope: ChatScope, botIds: ReadonlyArray<number>): ChatFilter => {
  if (scope === "all") return { bot_ids: botIds, chats: [] }
  const wanted = new Set(botIds)
  const entries = scope.filter((e) => wanted.has(e.bot_id))
  return {
    bot_ids: entries.filter((e) => e.chat_ids.length === 0).map((e) => e.bot_id),
    chats: entries.flatMap((e) => e.chat_ids.map((chat_id) => ({ bot_id: e.bot_id, chat_id })))
  }
}

/** Whether a filter lets nothing through. */
export const isEmpty = (filter: ChatFilter): boolean => filter.bot_ids.length === 0 && filter.chats.length === 0

/** Entries that named the old id of a chat that became a supergroup name the new id too. */
export const followMigration = (
  entries: ReadonlyArray<Entry>,
  botId: number,
  fromChatId: number,
  toChatId: number
): ReadonlyArray<Entry> | undefined => {
  let changed = false
  const next = entries.map((e) => {
    if (e.bot_id !== botId || !e.chat_ids.includes(fromChatId) || e.chat_ids.includes(toChatId)) return e
    changed = true
    return { ...e, chat_ids: [...e.chat_ids, toChatId].sort((a, b) => a - b) }
  })
  return changed ? next : undefined
}
