import { type AuditLog, type Scope } from "@botrelay/core"
import type { HttpServerRequest } from "@effect/platform"
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

/** Fails with 403 unless the caller may act on the bot. */
export const requireBot = (botId: number): Effect.Effect<void, ApiError.Forbidden, Refusing> =>
  Effect.flatMap(
    Caller,
    (caller) =>
      caller.role === "admin" || caller.bot_ids.includes(botId)
        ? Effect.void
        : forbidden(`this ${noun(caller)} may not act on bot ${botId}`)
  )

/** Fails with 403 unless the caller may do `ability` in the bot's chat. */
export const requireChat = (
  botId: number,
  _chatId: number,
  _ability: Scope.Ability
): Effect.Effect<void, ApiError.Forbidden, Refusing> => requireBot(botId)

/** Fails with 403 unless the caller may do `ability` on the whole bot (every chat of it). */
export const requireBotAbility = (
  botId: number,
  _ability: Scope.Ability
): Effect.Effect<void, ApiError.Forbidden, Refusing> => requireBot(botId)

/** Operators name the bot they act through; admins may omit it. */
export const requireOptionalBot = (botId: number | undefined) =>
  botId !== undefined
    ? requireBot(botId)
    : Effect.flatMap(
      Caller,
      (caller) =>
        caller.role === "admin" ? Effect.void : forbidden(`operator ${noun(caller)}s must name a bot_id in their scope`)
    )

/** Passes API errors through and translates domain failures. */
export const orDomain = (e: ApiError.ApiError | ApiError.DomainError): Effect.Effect<never, ApiError.ApiError> =>
  ApiError.isApiError(e) ? Effect.fail(e) : ApiError.fromDomain(e)

/** Runs `effect` for admin keys only; its failures become API errors. */
export const asAdmin = <A, R>(effect: Effect.Effect<A, ApiError.ApiError | ApiError.DomainError, R>) =>
  requireAdmin.pipe(Effect.zipRight(effect), Effect.catchAll(orDomain))

/** Runs `effect` when the key may act on the bot; its failures become API errors. */
export const asBot = <A, R>(botId: number, effect: Effect.Effect<A, ApiError.ApiError | ApiError.DomainError, R>) =>
  requireBot(botId).pipe(Effect.zipRight(effect), Effect.catchAll(orDomain))

/** A URL without its `user:password@` part; other text as it is. */
export const withoutCredentials = (url: string): string => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  if (parsed.username === "" && parsed.password === "") return url
  parsed.username = ""
  parsed.password = ""
  return parsed.href
}

/** Whether the caller may see what a bot received: admins, and operators with the bot in scope. */
export const sees = (caller: CallerInfo, botId: number) => caller.role === "admin" || caller.bot_ids.includes(botId)

/** The bots a caller sees: every bot for admins, its own for operators. */
export const scopeOf = (caller: CallerInfo): Scope.BotScope => caller.role === "admin" ? "all" : caller.bot_ids
