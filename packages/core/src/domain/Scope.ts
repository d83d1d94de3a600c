/** The bots a caller may see: every bot (admins), or these (operators). */
export type BotScope = "all" | ReadonlyArray<number>

/** Whether the scope holds the bot. */
export const includes = (scope: BotScope, botId: number): boolean => scope === "all" || scope.includes(botId)
