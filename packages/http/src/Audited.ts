import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import { type Audit, AuditLog } from "@botrelay/core"
import { Effect, FiberRef, Option } from "effect"
import { Caller, type CallerInfo } from "./Api.js"
import type * as ApiError from "./ApiError.js"

/** What an audited action acted on; all optional. */
export interface Target {
  readonly target_type?: string
  readonly target_id?: string | number
  readonly bot_id?: number | null
  readonly chat_id?: number | null
  readonly details?: Record<string, unknown>
}

/** The action an audited request is running, for the refusals within it. */
const currentAction = FiberRef.unsafeMake<string | undefined>(undefined)

/** The caller as the audit log names it. */
export const actorOf = (caller: CallerInfo): Audit.Actor => ({ type: caller.type, id: caller.id, name: caller.name })

/** The address of the request's peer ("" when unknown); proxies' headers are not trusted. */
export const ipOf = (request: HttpServerRequest.HttpServerRequest): string =>
  Option.getOrElse(request.remoteAddress, () => "")

/** An action's name from its path, for requests that name none: `GET /api/chats` → `chats.list`, `/api/chats/get` → `chats.get`. */
export const actionOfPath = (method: string, url: string): string => {
  const path = new URL(url, "http://localhost").pathname.replace(/^\/api\/?/, "").replace(/\/+$/, "")
  const parts = path.split("/").filter((p) => p !== "").map((p) => p.replace(/-/g, "_"))
  if (parts.length === 0) return "api"
  return parts.length === 1 ? `${parts[0]}.${method === "GET" ? "list" : "create"}` : parts.join(".")
}

/** Appends an entry for the current request. */
export const record = (action: string, actor: Audit.Actor, outcome: Audit.Outcome, target: Target = {}) =>
  Effect.gen(function*() {
    const audit = yield* AuditLog.AuditLog
    const request = yield* HttpServerRequest.HttpServerRequest
    yield* audit.record({
      actor_type: actor.type,
      actor_id: actor.id,
      actor_name: actor.name,
      ip: ipOf(request),
      action,
      target_type: target.target_type ?? "",
      target_id: target.target_id === undefined ? "" : String(target.target_id),
      bot_id: target.bot_id ?? null,
      chat_id: target.chat_id ?? null,
      outcome,
      details: target.details ?? {}
    })
  })

/** Records the caller's refusal (403) of the current request, under the audited action or one named by its path. */
export const recordDenied = (reason: string) =>
  Effect.gen(function*() {
    const caller = yield* Caller
    const request = yield* HttpServerRequest.HttpServerRequest
    const action = (yield* FiberRef.get(currentAction)) ?? actionOfPath(request.method, request.url)
    yield* record(action, actorOf(caller), "denied", { details: { error: reason } })
  })

/**
 * Runs an action of the caller and records it once: `ok` with the target (and what `fromResult` adds),
 * `denied` when refused (403, recorded where it is refused), `failed` with the error otherwise.
 */
export const audited = <A, E extends ApiError.ApiError | { readonly _tag: string }, R>(
  action: string,
  target: Target,
  effect: Effect.Effect<A, E, R>,
  fromResult?: (a: A) => Target
) =>
  Effect.flatMap(Caller, (caller) =>
    effect.pipe(
      Effect.tapBoth({
        onSuccess: (a) => record(action, actorOf(caller), "ok", { ...target, ...fromResult?.(a) }),
        onFailure: (e) =>
          e._tag === "Forbidden" ? Effect.void : record(action, actorOf(caller), "failed", {
            ...target,
            details: { ...target.details, ...("error" in e && "code" in e ? { error: e.error, code: e.code } : { error: e._tag }) }
          })
      }),
      Effect.locally(currentAction, action)
    ))
