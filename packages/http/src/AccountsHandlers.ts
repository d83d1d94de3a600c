import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Accounts, type AuditLog, LoginThrottle, Webhook } from "@botrelay/core"
// In scope so that the inferred types can name the services the handlers need.
import type { ApiKeys as _ApiKeys, AuditLog as _AuditLog } from "@botrelay/core"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { asAdmin, forbidden, orDomain } from "./Access.js"
import { Api, Caller, type CallerInfo } from "./Api.js"
import * as ApiError from "./ApiError.js"
import { audited, ipOf, record } from "./Audited.js"
import { AuthorizationLive, sameOrigin, sessionCookie } from "./Authentication.js"

const done = { ok: true } as const

const notSignedIn = new ApiError.BadRequest({
  error: "this request is authenticated by an API key: there is no session",
  code: "not_signed_in"
})

/** The caller's session, when a signed-in account makes the request. */
const sessionOf = (caller: CallerInfo) =>
  caller.type === "account" && caller.session !== undefined ? Effect.succeed(caller.session) : Effect.fail(notSignedIn)

/** The session cookie's attributes: `Secure` when Botrelay's public URL is https. */
const cookieOptions = (secure: boolean) => ({
  httpOnly: true,
  sameSite: "strict" as const,
  path: "/",
  secure,
  maxAge: Duration.days(30)
})

/** `POST /api/auth/login`: throttled, recorded, and the same answer for a wrong name or password. */
const LoginLive = HttpApiBuilder.group(Api, "login", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const throttle = yield* LoginThrottle.LoginThrottle
    const secure = Option.exists(yield* Webhook.PublicUrl, (url) => url.startsWith("https:"))
    return handlers.handle("login", ({ payload }) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const ip = ipOf(request)
        const attempt = { type: "account" as const, id: 0, name: payload.username.slice(0, 64) }
        const refuse = <E>(reason: string, error: E) =>
          Effect.zipRight(record("auth.login", attempt, "denied", { details: { error: reason } }), Effect.fail(error))
        if (!sameOrigin(request)) {
          return yield* refuse(
            "sign-in from another origin",
            new ApiError.Forbidden({ error: "sign in from Botrelay's own origin", code: "csrf" })
          )
        }
        yield* throttle.check(payload.username, ip).pipe(
          Effect.catchAll((e) =>
            refuse(
              "too many failed sign-ins",
              new ApiError.TooManyRequests({
                error: `too many failed sign-ins; try again in ${e.retry_after_seconds} s`,
                code: "too_many_attempts",
                retry_after: e.retry_after_seconds
              })
            )
          )
        )
        const signedIn = yield* accounts.login(payload.username, Redacted.make(payload.password)).pipe(
          Effect.catchTag("InvalidCredentials", () =>
            Effect.zipRight(
              throttle.fail(payload.username, ip),
              refuse(
                "invalid username or password",
                new ApiError.Unauthorized({ error: "invalid username or password", code: "invalid_credentials" })
              )
            )),
          Effect.catchAll(orDomain)
        )
        yield* throttle.succeed(payload.username)
        const account = signedIn.account
        yield* record("auth.login", { type: "account", id: account.id, name: account.username }, "ok")
        return HttpServerResponse.unsafeSetCookie(
          HttpServerResponse.unsafeJson({ account, csrf_token: signedIn.csrf_token }),
          sessionCookie,
          Redacted.value(signedIn.session),
          cookieOptions(secure)
        )
      }))
  }))

/** `POST /api/auth/logout` and `GET /api/auth/me`, for signed-in accounts. */
const SessionLive = HttpApiBuilder.group(Api, "session", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    return handlers
      .handle("logout", () =>
        Effect.gen(function*() {
          const caller = yield* Caller
          const session = yield* sessionOf(caller)
          yield* audited("auth.logout", {}, Effect.catchAll(accounts.logout(session), orDomain))
          return HttpServerResponse.expireCookie(HttpServerResponse.unsafeJson(done), sessionCookie, { path: "/" })
        }))
      .handle("me", () =>
        Effect.gen(function*() {
          const caller = yield* Caller
          const session = yield* sessionOf(caller)
          const account = yield* Effect.catchAll(accounts.get(caller.id), orDomain)
          return { account, csrf_token: yield* accounts.csrfTokenOf(session) }
        }))
  }))

/** The accounts: admins manage them; anyone signed in changes their own password. */
const AccountsLive = HttpApiBuilder.group(Api, "accounts", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts.Accounts
    const target = (id: number | undefined) => ({ target_type: "account", ...(id === undefined ? {} : { target_id: id }) })
    return handlers
      .handle("list", () => asAdmin(accounts.list))
      .handle("create", ({ payload }) =>
        audited(
          "accounts.create",
          target(undefined),
          asAdmin(accounts.create(payload)),
          (a) => ({ target_id: a.id, details: { username: a.username, role: a.role, bot_ids: a.bot_ids } })
        ))
      .handle("update", ({ payload: { id, ...changes } }) =>
        audited("accounts.update", { ...target(id), details: changes }, asAdmin(accounts.update({ id, ...changes }))))
      .handle("delete", ({ urlParams }) =>
        audited("accounts.delete", target(urlParams.id), asAdmin(Effect.as(accounts.remove(urlParams.id), done))))
      .handle("password", ({ payload }) =>
        Effect.flatMap(Caller, (caller) => {
          const own = payload.id === undefined || (caller.type === "account" && payload.id === caller.id)
          const change: Effect.Effect<
            typeof done,
            ApiError.ApiError,
            Caller | AuditLog.AuditLog | HttpServerRequest.HttpServerRequest
          > = caller.type === "key"
            ? payload.id === undefined
              ? Effect.fail(
                new ApiError.BadRequest({
                  error: "an API key has no password: name the account whose password to reset (id)",
                  code: "invalid_request"
                })
              )
              : asAdmin(Effect.as(accounts.changePassword({ role: caller.role }, payload), done))
            : accounts.changePassword({ account_id: caller.id, role: caller.role }, payload, caller.session).pipe(
              Effect.as(done),
              Effect.catchAll((e) => e._tag === "NotAllowed" ? forbidden(e.reason) : orDomain(e))
            )
          return audited("accounts.password", target(own && caller.type === "account" ? caller.id : payload.id), change)
        }))
  }))

/** The login, session and account endpoints, with their authentication. */
export const layer = Layer.mergeAll(LoginLive, SessionLive, AccountsLive).pipe(Layer.provide(AuthorizationLive))
