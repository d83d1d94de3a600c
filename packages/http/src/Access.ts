import { type AuditLog, Scope } from "@botrelay/core"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { Effect } from "effect"
import { Caller, type CallerInfo } from "./Api.js"
import * as ApiError from "./ApiError.js"
import { recordDenied } from "./Audited.js"

/** The context a refusal is recorded in. */
type Refusing = Caller | AuditLog.AuditLog | HttpServerRequest.HttpServerRequest

/** A 403 with this sentence, recorded in the audit log as the caller's denied attempt. */
export const forbidden = (error: string): Effect.Effect<never, ApiError.Forbidden, Refusing> =>
  Effect.zipRight(recordDenied(error), Effect.fail(new ApiError.Forbidden({ error, code: "forbidden" })))

/** Fails with 403 unless the caller is an admin. */
export const requireAdmin: Effect.Effect<void, ApiError.Forbidden, Refusing> = Effect.flatMap(
  Caller,
  (caller) => caller.role === "admin" ? Effect.void : forbidden(`this needs an admin ${noun(caller)}`)
)

/** How the caller is named in refusals. */
const noun = (caller: CallerInfo) => caller.type === "key" ? "key" : "account"

/** The caller's scope entry for the bot, if any. */
const entryOf = (caller: CallerInfo, botId: number) => caller.scopes.find((e) => e.bot_id === botId)

/** Fails with 403 unless the caller may act on the bot at all (any chat, any ability). */
export const requireBot = (botId: number): Effect.Effect<void, ApiError.Forbidden, Refusing> =>
  Effect.flatMap(
    Caller,
    (caller) =>
      caller.role === "admin" || entryOf(caller, botId) !== undefined
        ? Effect.void
        : forbidden(`this ${noun(caller)} may not act on bot ${botId}`)
  )

/** Whether the caller may do `ability` in the bot's chat. */
export const mayInChat = (caller: CallerInfo, botId: number, chatId: number, ability: Scope.Ability): boolean => {
  if (caller.role === "admin") return true
  const entry = entryOf(caller, botId)
  return entry !== undefined && (entry.chat_ids.length === 0 || entry.chat_ids.includes(chatId)) &&
    Scope.allows(entry, ability)
}

/** Whether the caller may do `ability` on the whole bot (an entry over every chat of it). */
export const mayOnBot = (caller: CallerInfo, botId: number, ability: Scope.Ability): boolean => {
  if (caller.role === "admin") return true
  const entry = entryOf(caller, botId)
  return entry !== undefined && entry.chat_ids.length === 0 && Scope.allows(entry, ability)
}

/**
 * Fails with 403 unless the caller may do `ability` in the bot's chat; a chat outside the scope is refused
 * whether or not it exists.
 */
export const requireChat = (
  botId: number,
  chatId: number,
  ability: Scope.Ability
): Effect.Effect<void, ApiError.Forbidden, Refusing> =>
  Effect.flatMap(Caller, (caller) => {
    if (mayInChat(caller, botId, chatId, ability)) return Effect.void
    const entry = entryOf(caller, botId)
    return entry === undefined
      ? forbidden(`this ${noun(caller)} may not act on bot ${botId}`)
      : entry.chat_ids.length > 0 && !entry.chat_ids.includes(chatId)
      ? forbidden(`this ${noun(caller)} may not act on chat ${chatId} of bot ${botId}`)
      : forbidden(`this ${noun(caller)} may not ${ability} in the chats of bot ${botId}`)
  })

/** Fails with 403 unless the caller may do `ability` on the whole bot (every chat of it). */
export const requireBotAbility = (
  botId: number,
  ability: Scope.Ability
): Effect.Effect<void, ApiError.Forbidden, Refusing> =>
  Effect.flatMap(Caller, (caller) => {
    if (mayOnBot(caller, botId, ability)) return Effect.void
    const entry = entryOf(caller, botId)
    return entry === undefined
      ? forbidden(`this ${noun(caller)} may not act on bot ${botId}`)
      : entry.chat_ids.length > 0
      ? forbidden(`this ${noun(caller)} may act on some chats of bot ${botId} only, and this needs the whole bot`)
      : forbidden(`this ${noun(caller)} may not ${ability} bot ${botId}`)
  })

/** Operators name the bot they act through; admins may omit it. */
export const requireOptionalBot = (botId: number | undefined) =>
  botId !== undefined
    ? requireBot(botId)
    : Effect.flatMap(
      Caller,
      (caller) =>
        caller.role === "admin" ? Effect.void : forbidden(`operator ${noun(caller)}s must name a bot_id in their scope`)
    )

/** `requireChat` for a chat id; for a `@username` target, the ability on the whole bot. */
export const requireTarget = (botId: number, chatId: number | string, ability: Scope.Ability) =>
  typeof chatId === "number" ? requireChat(botId, chatId, ability) : requireBotAbility(botId, ability)

/** Operators name a bot on which they may do `ability` bot-wide; admins may omit it. */
export const requireOptionalBotAbility = (botId: number | undefined, ability: Scope.Ability) =>
  botId !== undefined ? requireBotAbility(botId, ability) : requireOptionalBot(undefined)

/** Passes API errors through and translates domain failures. */
export const orDomain = (e: ApiError.ApiError | ApiError.DomainError): Effect.Effect<never, ApiError.ApiError> =>
  ApiError.isApiError(e) ? Effect.fail(e) : ApiError.fromDomain(e)

/** Runs `effect` for admin keys only; its failures become API errors. */
export const asAdmin = <A, R>(effect: Effect.Effect<A, ApiError.ApiError | ApiError.DomainError, R>) =>
  requireAdmin.pipe(Effect.zipRight(effect), Effect.catchAll(orDomain))

/** Runs `effect` when the caller may do `ability` on the whole bot; its failures become API errors. */
export const asBot = <A, R>(
  botId: number,
  ability: Scope.Ability,
  effect: Effect.Effect<A, ApiError.ApiError | ApiError.DomainError, R>
) => requireBotAbility(botId, ability).pipe(Effect.zipRight(effect), Effect.catchAll(orDomain))

/** Runs `effect` when the caller may do `ability` in the bot's chat; its failures become API errors. */
export const asChat = <A, R>(
  botId: number,
  chatId: number,
  ability: Scope.Ability,
  effect: Effect.Effect<A, ApiError.ApiError | ApiError.DomainError, R>
) => requireChat(botId, chatId, ability).pipe(Effect.zipRight(effect), Effect.catchAll(orDomain))

/** A URL without its `user:password@` part; other text as it is. */
export const withoutCredentials = (url: string): string => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "") return url
  parsed.username = ""
  parsed.password = ""
  return parsed.href
}

/** Whether the caller may read a chat of the bot: admins, and operators whose scope holds it with read. */
export const sees = (caller: CallerInfo, botId: number, chatId: number) => mayInChat(caller, botId, chatId, "read")

/** The chats a caller may read: every chat for admins, those of its scope's readable entries for operators. */
export const scopeOf = (caller: CallerInfo): Scope.ChatScope =>
  caller.role === "admin" ? "all" : Scope.readable(caller.scopes)

/** The bots a caller sees at all: every bot for admins, those its scope names for operators. */
export const botScopeOf = (caller: CallerInfo): Scope.BotScope => caller.role === "admin" ? "all" : caller.bot_ids
