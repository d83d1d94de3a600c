import { Scope } from "@botrelay/core"
import { Schema } from "effect"
import type { Kysely, Selectable } from "kysely"
import { sql } from "kysely"
import type { AccountBotsTable, ApiKeyBotsTable, Database } from "./Tables.js"

/** The scope columns of a link row of a key or an account. */
export type ScopeColumns = Pick<Selectable<ApiKeyBotsTable> | Selectable<AccountBotsTable>, "chat_ids" | "abilities">

const decodeChatIds = Schema.decodeUnknownSync(Schema.parseJson(Schema.Array(Schema.Int)))
const decodeAbilities = Schema.decodeUnknownSync(Schema.parseJson(Schema.Array(Scope.Ability)))

/** The scope entry a link row holds. */
export const toEntry = (row: { readonly bot_id: number } & ScopeColumns): Scope.Entry => ({
  bot_id: row.bot_id,
  chat_ids: decodeChatIds(row.chat_ids),
  abilities: decodeAbilities(row.abilities)
})

/** Link rows grouped into each owner's entries, in the rows' order. */
export const byOwner = <Row extends { readonly bot_id: number } & ScopeColumns>(
  rows: ReadonlyArray<Row>,
  owner: (row: Row) => number
): Map<number, Array<Scope.Entry>> => {
  const entries = new Map<number, Array<Scope.Entry>>()
  for (const row of rows) {
    const found = entries.get(owner(row))
    if (found === undefined) entries.set(owner(row), [toEntry(row)])
    else found.push(toEntry(row))
  }
  return entries
}

/** The columns that store an entry's chats and abilities. */
export const columnsOf = (entry: Scope.Entry): ScopeColumns => ({
  chat_ids: JSON.stringify(entry.chat_ids),
  abilities: JSON.stringify(entry.abilities)
})

/** Link rows of keys and of accounts for the bot whose chats name one chat, for following a migration. */
export const linksNaming = (db: Kysely<Database>, botId: number, chatId: number) => [
  db.selectFrom("botrelay_api_key_bots").select(["api_key_id as owner", "bot_id", "chat_ids", "abilities"])
    .where("bot_id", "=", botId).where("chat_ids", "like", `%${chatId}%`),
  db.selectFrom("botrelay_account_bots").select(["account_id as owner", "bot_id", "chat_ids", "abilities"])
    .where("bot_id", "=", botId).where("chat_ids", "like", `%${chatId}%`)
] as const

/** The chats of a link row that names `from` with `to` added; `undefined` when it does not name `from`. */
export const followed = (row: ScopeColumns, from: number, to: number): ReadonlyArray<number> | undefined => {
  const chatIds = decodeChatIds(row.chat_ids)
  return chatIds.includes(from) && !chatIds.includes(to) ? [...chatIds, to].sort((a, b) => a - b) : undefined
}

/** Sets the chats of a key's link to a bot. */
export const setKeyChats = (db: Kysely<Database>, keyId: number, botId: number, chatIds: ReadonlyArray<number>) =>
  db.updateTable("botrelay_api_key_bots").set({ chat_ids: JSON.stringify(chatIds) })
    .where("api_key_id", "=", keyId).where("bot_id", "=", botId)

/** Sets the chats of an account's link to a bot. */
export const setAccountChats = (db: Kysely<Database>, accountId: number, botId: number, chatIds: ReadonlyArray<number>) =>
  db.updateTable("botrelay_account_bots").set({ chat_ids: JSON.stringify(chatIds) })
    .where("account_id", "=", accountId).where("bot_id", "=", botId)

/**
 * Rows whose bot and chat columns fall in the filter: bots taken whole, then single chats. Each disjunct
 * is an equality or IN on the leading columns of the tables' (bot_id, chat_id, ...) indexes.
 */
export const inFilter = (
  filter: Scope.ChatFilter,
  botColumn: string,
  chatColumn: string
) => {
  const bot = sql.ref(botColumn)
  const chat = sql.ref(chatColumn)
  const parts = [
    ...(filter.bot_ids.length === 0 ? [] : [sql<boolean>`${bot} in (${sql.join(filter.bot_ids)})`]),
    ...byBot(filter.chats).map(([botId, chatIds]) =>
      sql<boolean>`(${bot} = ${botId} and ${chat} in (${sql.join(chatIds)}))`
    )
  ]
  return parts.length === 0 ? sql<boolean>`1 = 0` : sql<boolean>`(${sql.join(parts, sql` or `)})`
}

const byBot = (chats: Scope.ChatFilter["chats"]): Array<readonly [number, ReadonlyArray<number>]> => {
  const grouped = new Map<number, Array<number>>()
  for (const { bot_id, chat_id } of chats) {
    const ids = grouped.get(bot_id)
    if (ids === undefined) grouped.set(bot_id, [chat_id])
    else ids.push(chat_id)
  }
  return [...grouped]
}
