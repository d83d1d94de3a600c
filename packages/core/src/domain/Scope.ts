import { Schema } from "effect"

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
