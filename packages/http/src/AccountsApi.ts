import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { Account } from "@botrelay/core"
import { Schema } from "effect"

/** A signed-in account and the CSRF token its changes must carry. */
export const Session = Schema.Struct({ account: Account.Account, csrf_token: Schema.String }).annotations({
  identifier: "Session"
})

/** Body of `POST /api/auth/login`. */
export const Login = Schema.Struct({
  username: Schema.String.pipe(
    Schema.minLength(1, { message: () => "username must not be empty" }),
    Schema.maxLength(256, { message: () => "username must be at most 256 characters" })
  ),
  password: Schema.String.pipe(
    Schema.minLength(1, { message: () => "password must not be empty" }),
    Schema.maxLength(1024, { message: () => "password must be at most 1024 characters" })
  )
}).annotations({ identifier: "Login" })

const Ok = Schema.Struct({ ok: Schema.Literal(true) })

const IdParam = Schema.Struct({
  id: Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), Schema.lessThanOrEqualTo(Number.MAX_SAFE_INTEGER))
})

/** Signing in: the one endpoint without credentials besides health. */
export class LoginGroup extends HttpApiGroup.make("login")
  .add(HttpApiEndpoint.post("login", "/login").setPayload(Login).addSuccess(Session))
  .prefix("/auth")
{}

/** The caller's session (the API adds its authentication). */
export class SessionGroup extends HttpApiGroup.make("session")
  .add(HttpApiEndpoint.post("logout", "/logout").addSuccess(Ok))
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(Session))
  .prefix("/auth")
{}

/** Accounts of people who sign in; admins manage them, everyone changes their own password (the API adds authentication). */
export class AccountsGroup extends HttpApiGroup.make("accounts")
  .add(HttpApiEndpoint.get("list", "/").addSuccess(Schema.Array(Account.Account)))
  .add(HttpApiEndpoint.post("create", "/").setPayload(Account.NewAccount).addSuccess(Account.Account))
  .add(HttpApiEndpoint.post("update", "/update").setPayload(Account.AccountUpdate).addSuccess(Account.Account))
  .add(HttpApiEndpoint.post("delete", "/delete").setUrlParams(IdParam).addSuccess(Ok))
  .add(HttpApiEndpoint.post("password", "/password").setPayload(Account.PasswordChange).addSuccess(Ok))
  .prefix("/accounts")
{}
