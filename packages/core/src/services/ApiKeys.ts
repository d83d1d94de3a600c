import type { Scope } from "effect"
import { Context, Effect, Layer, Option, Queue, Redacted } from "effect"
import type { ApiKey, ApiKeyUpdate, CreatedApiKey, NewApiKey, Role } from "../domain/ApiKey.js"
import { ApiKeyNotFound, keyPattern, LastAdminKey } from "../domain/ApiKey.js"
import { BotNotFound } from "../domain/Bot.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import * as ScopeEntries from "../domain/Scope.js"
import * as RandomToken from "../internal/RandomToken.js"
import { BotStore } from "../stores/BotStore.js"
import { KeyStore } from "../stores/KeyStore.js"
import { SettingsStore } from "../stores/SettingsStore.js"
import * as ConfigRevision from "../runtime/ConfigRevision.js"
import { Event, Events } from "../runtime/Events.js"
import { nowIso } from "../internal/Time.js"

/** API keys: minting, listing, and telling who a bearer token belongs to. */
export interface ApiKeysService {
  /** Mints a key; the secret is in the result and nowhere else. */
  readonly create: (input: NewApiKey) => Effect.Effect<CreatedApiKey, InvalidInput | BotNotFound | StorageError>
  /** All keys, ordered by id. */
  readonly list: Effect.Effect<ReadonlyArray<ApiKey>, StorageError>
  /** Replaces an operator key's scope (`scopes`, or `bot_ids` as shorthand); admin keys take none. */
  readonly update: (
    input: ApiKeyUpdate
  ) => Effect.Effect<ApiKey, ApiKeyNotFound | InvalidInput | BotNotFound | StorageError>
  /** Flips `enabled`; refuses to disable the last enabled admin key. */
  readonly toggle: (id: number) => Effect.Effect<ApiKey, ApiKeyNotFound | LastAdminKey | StorageError>
  /** Deletes a key; refuses to delete the last enabled admin key. */
  readonly remove: (id: number) => Effect.Effect<ApiKey, ApiKeyNotFound | LastAdminKey | StorageError>
  /** The enabled key a secret belongs to, if any. */
  readonly authenticate: (secret: Redacted.Redacted<string>) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  /** The key a secret belongs to, enabled or not: who made a refused request. */
  readonly identify: (secret: Redacted.Redacted<string>) => Effect.Effect<Option.Option<ApiKey>, StorageError>
  /** Makes sure an admin key with this secret exists (the configured or bootstrap key); true when it was created. */
  readonly ensureAdmin: (
    secret: Redacted.Redacted<string>,
    name: string
  ) => Effect.Effect<boolean, InvalidInput | StorageError>
  /** Whether any key exists. */
  readonly any: Effect.Effect<boolean, StorageError>
}

/** API keys: minting, listing, and telling who a bearer token belongs to. */
export class ApiKeys extends Context.Tag("@botrelay/core/ApiKeys")<ApiKeys, ApiKeysService>() {}

/** A new random key: `brk_` and 43 base64url characters (256 bits). */
export const generateKey: Effect.Effect<Redacted.Redacted<string>> = Effect.map(
  RandomToken.make,
  (token) => Redacted.make(`brk_${token}`)
)

/** The SHA-256 of a key, in hex: what storage keeps. */
export const hashKey = (secret: Redacted.Redacted<string>): Effect.Effect<string> =>
  Effect.promise(() => crypto.subtle.digest("SHA-256", new TextEncoder().encode(Redacted.value(secret)))).pipe(
    Effect.map((digest) => Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join(""))
  )

/** The first characters of a key, for telling keys apart. */
export const keyPrefix = (secret: Redacted.Redacted<string>): string => Redacted.value(secret).slice(0, 12)

const touchInterval = 60_000

/**
 * The scope a body asks for (`scopes`, or `bot_ids` as shorthand), its bots checked to exist; admins take
 * none. `undefined` when the body names neither.
 */
export const checkScopes = (
  botStore: BotStore["Type"],
  role: Role,
  botIds: ReadonlyArray<number> | undefined,
  scopes: ReadonlyArray<ScopeEntries.EntryInput> | undefined,
  holders: "keys" | "accounts"
): Effect.Effect<ReadonlyArray<ScopeEntries.Entry> | undefined, InvalidInput | BotNotFound | StorageError> =>
  Effect.flatMap(ScopeEntries.fromInput(botIds, scopes), (
    entries
  ): Effect.Effect<ReadonlyArray<ScopeEntries.Entry> | undefined, InvalidInput | BotNotFound | StorageError> => {
    if (role === "admin") {
      return entries !== undefined && entries.length > 0
        ? Effect.fail(
          InvalidInput.field(
            scopes !== undefined ? "scopes" : "bot_ids",
            `${scopes !== undefined ? "scopes" : "bot_ids"} apply to operator ${holders} only; admin ${holders} see every bot`
          )
        )
        : Effect.succeed(entries === undefined ? undefined : [])
    }
    return Effect.forEach(entries ?? [], (entry) =>
      botStore.findBot(entry.bot_id).pipe(
        Effect.flatMap((bot) => Option.isSome(bot) ? Effect.void : Effect.fail(new BotNotFound({ id: entry.bot_id })))
      ), { discard: true }).pipe(Effect.as(entries))
  })

/** Builds the service on the stores the host provides. */
export const make: Effect.Effect<
  ApiKeysService,
  never,
  BotStore | KeyStore | SettingsStore | Events | Scope.Scope
> = Effect.gen(function*() {
  const botStore = yield* BotStore
  const keyStore = yield* KeyStore
  const bumped = ConfigRevision.bumped(yield* SettingsStore)
  const events = yield* Events
  /** Keys found by their secret, so a request needs no hash and no query; cleared when keys change on any instance. */
  const known = new Map<string, ApiKey>()
  const changed = Effect.zipRight(Effect.sync(() => known.clear()), events.publish(Event.KeysChanged()))
  const changes = yield* events.subscribe("KeysChanged")
  yield* Queue.take(changes).pipe(
    Effect.tap(() => Effect.sync(() => known.clear())),
    Effect.forever,
    Effect.forkScoped
  )
  const lastTouched = new Map<number, number>()

  const find = (id: number) =>
    keyStore.findApiKey(id).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(new ApiKeyNotFound({ id })), onSome: Effect.succeed }))
    )

  const guardLastAdmin = (key: ApiKey) =>
    key.role !== "admin" || !key.enabled
      ? Effect.void
      : keyStore.listApiKeys.pipe(
        Effect.flatMap((keys) =>
          keys.some((k) => k.id !== key.id && k.role === "admin" && k.enabled)
            ? Effect.void
            : Effect.fail(new LastAdminKey({ id: key.id }))
        )
      )

  const identify = (secret: Redacted.Redacted<string>): Effect.Effect<Option.Option<ApiKey>, StorageError> => {
    const value = Redacted.value(secret)
    if (!keyPattern.test(value)) return Effect.succeed(Option.none())
    const cached = known.get(value)
    return cached !== undefined
      ? Effect.succeed(Option.some(cached))
      : Effect.flatMap(hashKey(secret), keyStore.findApiKeyByHash).pipe(
        Effect.tap(Option.match({ onNone: () => {}, onSome: (key) => void known.set(value, key) }))
      )
  }

  const insert = (
    secret: Redacted.Redacted<string>,
    input: Pick<NewApiKey, "name" | "role">,
    scopes: ReadonlyArray<ScopeEntries.Entry>
  ) =>
    Effect.all([hashKey(secret), nowIso]).pipe(
      Effect.flatMap(([hash, created_at]) =>
        keyStore.insertApiKey({
          name: input.name,
          role: input.role,
          scopes,
          prefix: keyPrefix(secret),
          created_at,
          hash
        })
      )
    )

  return ApiKeys.of({
    create: (input) =>
      checkScopes(botStore, input.role, input.bot_ids, input.scopes, "keys").pipe(
        Effect.flatMap((scopes) =>
          Effect.flatMap(generateKey, (secret) =>
            insert(secret, input, scopes ?? []).pipe(
              Effect.map((key): CreatedApiKey => ({ ...key, key: Redacted.value(secret) }))
            ))
        ),
        bumped,
        Effect.withSpan("ApiKeys.create")
      ),
    list: keyStore.listApiKeys,
    update: (input) =>
      find(input.id).pipe(
        Effect.flatMap((key) => checkScopes(botStore, key.role, input.bot_ids, input.scopes, "keys")),
        Effect.flatMap((scopes) =>
          scopes === undefined
            ? find(input.id)
            : keyStore.setApiKeyScopes(input.id, scopes).pipe(
              Effect.flatMap(Option.match({
                onNone: () => Effect.fail(new ApiKeyNotFound({ id: input.id })),
                onSome: Effect.succeed
              }))
            )
        ),
        Effect.ensuring(changed),
        bumped,
        Effect.withSpan("ApiKeys.update", { attributes: { id: input.id } })
      ),
    toggle: (id) =>
      find(id).pipe(
        Effect.tap(guardLastAdmin),
        Effect.flatMap((key) => keyStore.setApiKeyEnabled(id, !key.enabled)),
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(new ApiKeyNotFound({ id })), onSome: Effect.succeed })),
        Effect.ensuring(changed),
        bumped,
        Effect.withSpan("ApiKeys.toggle", { attributes: { id } })
      ),
    remove: (id) =>
      find(id).pipe(
        Effect.tap(guardLastAdmin),
        Effect.tap(() => keyStore.deleteApiKey(id)),
        Effect.ensuring(changed),
        bumped,
        Effect.withSpan("ApiKeys.remove", { attributes: { id } })
      ),
    authenticate: (secret) =>
      Effect.flatMap(identify(secret), (found) => {
        if (Option.isNone(found) || !found.value.enabled) return Effect.succeed(Option.none<ApiKey>())
        const now = Date.now()
        if (now - (lastTouched.get(found.value.id) ?? 0) < touchInterval) return Effect.succeed(found)
        lastTouched.set(found.value.id, now)
        return Effect.flatMap(nowIso, (at) => keyStore.touchApiKey(found.value.id, at)).pipe(Effect.as(found))
      }),
    identify,
    ensureAdmin: (secret, name) =>
      keyPattern.test(Redacted.value(secret))
        ? Effect.flatMap(hashKey(secret), keyStore.findApiKeyByHash).pipe(
          Effect.flatMap(Option.match({
            onSome: () => Effect.succeed(false),
            onNone: () => insert(secret, { name, role: "admin" }, []).pipe(bumped, Effect.as(true))
          }))
        )
        : Effect.fail(InvalidInput.field("admin_key", "an admin key must be brk_ followed by 43 base64url characters")),
    any: Effect.map(keyStore.listApiKeys, (keys) => keys.length > 0)
  })
})

/** The service on the stores the host provides. */
export const layer: Layer.Layer<ApiKeys, never, BotStore | KeyStore | SettingsStore | Events> = Layer.scoped(ApiKeys, make)
