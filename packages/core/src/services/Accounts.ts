import { Clock, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import type { Account, AccountChanges, AccountUpdate, NewAccount, PasswordChange } from "../domain/Account.js"
import {
  AccountNotFound,
  InvalidCredentials,
  LastAdminAccount,
  NotAllowed,
  sessionPattern,
  type UsernameTaken,
  WrongPassword
} from "../domain/Account.js"
import type { Role } from "../domain/ApiKey.js"
import { BotNotFound } from "../domain/Bot.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import type * as Scope from "../domain/Scope.js"
import * as RandomToken from "../internal/RandomToken.js"
import { nowIso } from "../internal/Time.js"
import { AccountStore } from "../stores/AccountStore.js"
import { BotStore } from "../stores/BotStore.js"
import { SessionStore } from "../stores/SessionStore.js"
import { SettingsStore } from "../stores/SettingsStore.js"
import * as ConfigRevision from "../runtime/ConfigRevision.js"
import { checkScopes, hashKey } from "./ApiKeys.js"
import { PasswordHasher } from "./PasswordHasher.js"

/** How long sessions last. */
export interface Options {
  /** A session unused for longer than this ends. */
  readonly idleTimeout: Duration.DurationInput
  /** A session ends this long after its login, however much it is used. */
  readonly maxAge: Duration.DurationInput
  /** A session's `last_seen_at` is written at most this often. */
  readonly touchInterval: Duration.DurationInput
}

/** 7 days idle, 30 days in all, touched at most once a minute. */
export const defaults: Options = {
  idleTimeout: Duration.days(7),
  maxAge: Duration.days(30),
  touchInterval: Duration.minutes(1)
}

/** Who asks for a password change: an account (its session) or an API key (no `account_id`). */
export interface Caller {
  readonly account_id?: number | undefined
  readonly role: Role
}

/** A new session: its id (the cookie's value, shown nowhere else) and its CSRF token. */
export interface Login {
  readonly account: Account
  readonly session: Redacted.Redacted<string>
  readonly csrf_token: string
}

/** The account a live session belongs to, and the session's CSRF token. */
export interface Resolved {
  readonly account: Account
  readonly csrf_token: string
}

/** Console accounts and their sessions. */
export interface AccountsService {
  readonly create: (
    input: NewAccount
  ) => Effect.Effect<Account, InvalidInput | BotNotFound | UsernameTaken | StorageError>
  /** All accounts, ordered by id. */
  readonly list: Effect.Effect<ReadonlyArray<Account>, StorageError>
  readonly get: (id: number) => Effect.Effect<Account, AccountNotFound | StorageError>
  /**
   * Changes what is given; an account made admin loses its bots. A change of role or bots, or disabling,
   * ends the account's sessions. The last enabled admin account cannot be demoted or disabled.
   */
  readonly update: (
    input: AccountUpdate
  ) => Effect.Effect<Account, AccountNotFound | LastAdminAccount | InvalidInput | BotNotFound | StorageError>
  /** Deletes an account and its sessions; never the last enabled admin account. */
  readonly remove: (id: number) => Effect.Effect<Account, AccountNotFound | LastAdminAccount | StorageError>
  /**
   * One's own password (no `id`, or one's own), with the old one: the current session stays, the
   * account's others end. An admin naming another account resets its password and ends all its sessions.
   */
  readonly changePassword: (
    caller: Caller,
    input: PasswordChange,
    currentSession?: Redacted.Redacted<string>
  ) => Effect.Effect<void, AccountNotFound | WrongPassword | NotAllowed | InvalidInput | StorageError>
  /** A new session; one error, after the same work, whether the username, the password or the account is wrong. */
  readonly login: (
    username: string,
    password: Redacted.Redacted<string>
  ) => Effect.Effect<Login, InvalidCredentials | StorageError>
  /** The CSRF token bound to a session: derived from it, stored nowhere. */
  readonly csrfTokenOf: (session: Redacted.Redacted<string>) => Effect.Effect<string>
  /** The live session's account; expired sessions and those of disabled or deleted accounts are none. */
  readonly resolve: (session: Redacted.Redacted<string>) => Effect.Effect<Option.Option<Resolved>, StorageError>
  readonly logout: (session: Redacted.Redacted<string>) => Effect.Effect<void, StorageError>
  /** Deletes expired sessions; how many. */
  readonly sweep: Effect.Effect<number, StorageError>
  /** Whether any account exists. */
  readonly any: Effect.Effect<boolean, StorageError>
}

/** Console accounts and their sessions. */
export class Accounts extends Context.Tag("@botrelay/core/Accounts")<Accounts, AccountsService>() {}

/** What `login` checks an unknown username's password against, so that it costs what a known one does. */
const dummyPassword = Redacted.make("botrelay: no such account, same work")

const digest = (text: string) => Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)))

/** The CSRF token of a session: base64url(SHA-256("botrelay-csrf:" + session id)). */
export const csrfTokenOf = (session: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.map(digest(`botrelay-csrf:${Redacted.value(session)}`), (d) => RandomToken.base64url(new Uint8Array(d)))

const sameScopes = (a: ReadonlyArray<Scope.Entry>, b: ReadonlyArray<Scope.Entry>) =>
  JSON.stringify(a) === JSON.stringify(b)

/** Builds the service on the stores and the hasher the host provides. */
export const make = (
  options: Partial<Options> = {}
): Effect.Effect<AccountsService, never, AccountStore | SessionStore | BotStore | SettingsStore | PasswordHasher> =>
  Effect.gen(function*() {
    const accountStore = yield* AccountStore
    const sessionStore = yield* SessionStore
    const botStore = yield* BotStore
    const hasher = yield* PasswordHasher
    const bumped = ConfigRevision.bumped(yield* SettingsStore)
    const idleMs = Duration.toMillis(options.idleTimeout ?? defaults.idleTimeout)
    const maxAgeMs = Duration.toMillis(options.maxAge ?? defaults.maxAge)
    const touchMs = Duration.toMillis(options.touchInterval ?? defaults.touchInterval)
    const dummyHash = yield* Effect.cached(hasher.hash(dummyPassword))
    yield* Effect.forkDaemon(Effect.exit(dummyHash))
    const exclusive = (yield* Effect.makeSemaphore(1)).withPermits(1)

    const find = (id: number) =>
      accountStore.findAccount(id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new AccountNotFound({ id })), onSome: Effect.succeed }))
      )

    const guardLastAdmin = (account: Account) =>
      account.role !== "admin" || !account.enabled
        ? Effect.void
        : Effect.flatMap(accountStore.countEnabledAdmins, (admins) =>
          admins > 1 ? Effect.void : Effect.fail(new LastAdminAccount({ id: account.id })))

    const update = (input: AccountUpdate) =>
      Effect.gen(function*() {
        const current = yield* find(input.id)
        const role = input.role ?? current.role
        const enabled = input.enabled ?? current.enabled
        const asked = yield* checkScopes(botStore, role, input.bot_ids, input.scopes, "accounts")
        const scopes = asked ?? (role === "admin" ? [] : current.scopes)
        if (role !== "admin" || !enabled) yield* guardLastAdmin(current)
        const changes: AccountChanges = {
          ...(input.display_name === undefined ? {} : { display_name: input.display_name }),
          ...(input.enabled === undefined ? {} : { enabled }),
          role,
          scopes
        }
        const updated = yield* accountStore.updateAccount(current.id, changes).pipe(
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new AccountNotFound({ id: current.id })),
            onSome: Effect.succeed
          }))
        )
        if (role !== current.role || !sameScopes(scopes, current.scopes) || (current.enabled && !enabled)) {
          yield* sessionStore.deleteAccountSessions(current.id)
        }
        return updated
      })

    const changePassword = (caller: Caller, input: PasswordChange, currentSession?: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const target = input.id ?? caller.account_id
        if (target === undefined) {
          return yield* Effect.fail(new NotAllowed({ reason: "an API key has no password; name the account by id" }))
        }
        const own = target === caller.account_id
        if (!own && caller.role !== "admin") {
          return yield* Effect.fail(new NotAllowed({ reason: "only admins may change another account's password" }))
        }
        const account = yield* find(target)
        if (own) {
          if (input.old_password === undefined) {
            return yield* Effect.fail(InvalidInput.field("old_password", "old_password is required to change your own password"))
          }
          const login = yield* accountStore.findLogin(account.username)
          const hash = Option.isSome(login) ? login.value.password_hash : yield* dummyHash
          const ok = yield* hasher.verify(hash, Redacted.make(input.old_password))
          if (!ok || Option.isNone(login)) return yield* Effect.fail(new WrongPassword())
        }
        const hash = yield* hasher.hash(Redacted.make(input.new_password))
        if (!(yield* accountStore.setPasswordHash(target, hash))) return yield* Effect.fail(new AccountNotFound({ id: target }))
        const keep = own && currentSession !== undefined && sessionPattern.test(Redacted.value(currentSession))
          ? yield* hashKey(currentSession)
          : undefined
        yield* sessionStore.deleteAccountSessions(target, keep)
      })

    const login = (username: string, password: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const found = yield* accountStore.findLogin(username.trim())
        const hash = Option.isSome(found) ? found.value.password_hash : yield* dummyHash
        const ok = yield* hasher.verify(hash, password)
        if (Option.isNone(found) || !ok || !found.value.account.enabled) {
          return yield* Effect.fail(new InvalidCredentials())
        }
        const account = found.value.account
        const now = yield* nowIso
        const session = Redacted.make(yield* RandomToken.make)
        yield* sessionStore.createSession({
          id_hash: yield* hashKey(session),
          account_id: account.id,
          created_at: now,
          last_seen_at: now
        })
        yield* accountStore.recordLogin(account.id, now)
        return { account: { ...account, last_login_at: now }, session, csrf_token: yield* csrfTokenOf(session) }
      })

    const resolve = (session: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        if (!sessionPattern.test(Redacted.value(session))) return Option.none<Resolved>()
        const idHash = yield* hashKey(session)
        const found = yield* sessionStore.findSession(idHash)
        if (Option.isNone(found)) return Option.none<Resolved>()
        const now = yield* Clock.currentTimeMillis
        const seen = Date.parse(found.value.last_seen_at)
        const live = now - seen <= idleMs && now - Date.parse(found.value.created_at) <= maxAgeMs
        const account = live ? yield* accountStore.findAccount(found.value.account_id) : Option.none<Account>()
        if (Option.isNone(account) || !account.value.enabled) {
          yield* sessionStore.deleteSession(idHash)
          return Option.none<Resolved>()
        }
        if (now - seen >= touchMs) yield* sessionStore.touchSession(idHash, new Date(now).toISOString())
        return Option.some({ account: account.value, csrf_token: yield* csrfTokenOf(session) })
      })

    return Accounts.of({
      create: (input) =>
        checkScopes(botStore, input.role, input.bot_ids, input.scopes, "accounts").pipe(
          Effect.flatMap((scopes) =>
            Effect.map(Effect.all([hasher.hash(Redacted.make(input.password)), nowIso]), (done) => [scopes, ...done] as const)
          ),
          Effect.flatMap(([scopes, password_hash, created_at]) =>
            accountStore.insertAccount({
              username: input.username,
              display_name: input.display_name,
              role: input.role,
              scopes: scopes ?? [],
              password_hash,
              created_at
            })
          ),
          bumped,
          Effect.withSpan("Accounts.create")
        ),
      list: accountStore.listAccounts,
      get: find,
      update: (input) =>
        exclusive(update(input)).pipe(bumped, Effect.withSpan("Accounts.update", { attributes: { id: input.id } })),
      remove: (id) =>
        exclusive(find(id).pipe(Effect.tap(guardLastAdmin), Effect.tap(() => accountStore.deleteAccount(id)))).pipe(
          bumped,
          Effect.withSpan("Accounts.remove", { attributes: { id } })
        ),
      changePassword: (caller, input, currentSession) =>
        changePassword(caller, input, currentSession).pipe(Effect.withSpan("Accounts.changePassword")),
      login: (username, password) => login(username, password).pipe(Effect.withSpan("Accounts.login")),
      csrfTokenOf,
      resolve,
      logout: (session) =>
        sessionPattern.test(Redacted.value(session))
          ? Effect.flatMap(hashKey(session), sessionStore.deleteSession)
          : Effect.void,
      sweep: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sessionStore.pruneSessions(new Date(now - idleMs).toISOString(), new Date(now - maxAgeMs).toISOString())),
      any: Effect.map(accountStore.listAccounts, (accounts) => accounts.length > 0)
    })
  })

/** The service on the stores and the hasher the host provides. */
export const layer = (
  options: Partial<Options> = {}
): Layer.Layer<Accounts, never, AccountStore | SessionStore | BotStore | SettingsStore | PasswordHasher> => Layer.effect(Accounts, make(options))

/** Ends expired sessions now and then every `interval` while the layer lives; a failed sweep is logged and retried. */
export const housekeeping = (interval: Duration.DurationInput = Duration.hours(1)): Layer.Layer<never, never, Accounts> =>
  Layer.scopedDiscard(Effect.flatMap(Accounts, (accounts) =>
    accounts.sweep.pipe(
      Effect.tap((ended) =>
        ended > 0 ? Effect.logDebug("ended expired sessions").pipe(Effect.annotateLogs({ sessions: ended })) : Effect.void
      ),
      Effect.catchAll((e) => Effect.logWarning("could not end expired sessions", e.cause)),
      Effect.zipRight(Effect.sleep(interval)),
      Effect.forever,
      Effect.forkScoped
    )))
