import type { Stores } from "@botrelay/core"
import {
  AccountStore,
  AuditStore,
  Broadcast,
  BotStore,
  BufferStore,
  CannedReplyStore,
  ChatStore,
  Errors,
  EventStore,
  InboxStore,
  KeyStore,
  LeaseStore,
  MappingStore,
  MessageStore,
  NoteStore,
  OutboxStore,
  BridgeStore,
  PeopleStore,
  RouteStore,
  SearchStore,
  SessionStore,
  SettingsStore,
  StatsStore,
  BacklogStore,
  IdempotencyStore,
  StoreHealth,
  StoreLock,
  TagStore
} from "@botrelay/core"
import type { Scope } from "effect"
import { Context, Effect, Layer } from "effect"
import * as SecretKey from "./SecretKey.js"
import * as SqliteAccountStore from "./SqliteAccountStore.js"
import * as SqliteAuditStore from "./SqliteAuditStore.js"
import * as SqliteBotStore from "./SqliteBotStore.js"
import * as SqliteBufferStore from "./SqliteBufferStore.js"
import * as SqliteEventStore from "./SqliteEventStore.js"
import * as SqliteChatStore from "./SqliteChatStore.js"
import * as SqliteDeliveryLines from "./SqliteDeliveryLines.js"
import type { MigrationError, Options, SecretKeyError, SqliteDatabase } from "./SqliteConnection.js"
import { attempt, connection, openWithKey, overwriting } from "./SqliteConnection.js"
import * as SqliteInboxStore from "./SqliteInboxStore.js"
import * as SqliteKeyStore from "./SqliteKeyStore.js"
import * as SqliteLeaseStore from "./SqliteLeaseStore.js"
import * as SqliteMappingStore from "./SqliteMappingStore.js"
import * as SqliteMessageStore from "./SqliteMessageStore.js"
import * as SqliteOutboxStore from "./SqliteOutboxStore.js"
import * as SqliteBridgeStore from "./SqliteBridgeStore.js"
import * as SqlitePeopleStore from "./SqlitePeopleStore.js"
import * as SqliteRouteStore from "./SqliteRouteStore.js"
import * as SqliteSearchStore from "./SqliteSearchStore.js"
import * as SqliteSessionStore from "./SqliteSessionStore.js"
import * as SqliteSettingsStore from "./SqliteSettingsStore.js"
import * as SqliteStatsStore from "./SqliteStatsStore.js"
import * as SqliteBacklogStore from "./SqliteBacklogStore.js"
import * as SqliteIdempotencyStore from "./SqliteIdempotencyStore.js"
import * as SqliteTagStore from "./SqliteTagStore.js"
import * as SqliteNoteStore from "./SqliteNoteStore.js"
import * as SqliteCannedReplyStore from "./SqliteCannedReplyStore.js"

export {
  type DatabaseOptions,
  type FileOptions,
  type KeyOptions,
  MigrationError,
  type Options,
  type SecretKeyError,
  type SqliteDatabase,
  type SqliteStatement
} from "./SqliteConnection.js"

/**
 * Opens (or adopts) the database, brings the `botrelay_*` tables up to date and returns every store on
 * it. A database opened from a filename is closed when the scope closes; an adopted one is left open.
 */
export const make = (
  options: Options
): Effect.Effect<Context.Context<Stores.Stores>, MigrationError | SecretKeyError | Errors.StorageError, Scope.Scope> =>
  Effect.map(openWithKey(options), ({ cipher, sqlite }) => {
    const c = connection(sqlite, cipher)
    const lines = SqliteDeliveryLines.make()
    return Context.make(IdempotencyStore.IdempotencyStore, SqliteIdempotencyStore.make(c)).pipe(
      Context.add(BotStore.BotStore, SqliteBotStore.make(c, lines)),
      Context.add(RouteStore.RouteStore, SqliteRouteStore.make(c)),
      Context.add(MappingStore.MappingStore, SqliteMappingStore.make(c)),
      Context.add(MessageStore.MessageStore, SqliteMessageStore.make(c)),
      Context.add(SearchStore.SearchStore, SqliteSearchStore.make(c)),
      Context.add(TagStore.TagStore, SqliteTagStore.make(c)),
      Context.add(KeyStore.KeyStore, SqliteKeyStore.make(c)),
      Context.add(SettingsStore.SettingsStore, SqliteSettingsStore.make(c)),
      Context.add(InboxStore.InboxStore, SqliteInboxStore.make(c, lines)),
      Context.add(BufferStore.BufferStore, SqliteBufferStore.make(c)),
      Context.add(OutboxStore.OutboxStore, SqliteOutboxStore.make(c, lines)),
      Context.add(BridgeStore.BridgeStore, SqliteBridgeStore.make(c)),
      Context.add(EventStore.EventStore, SqliteEventStore.make(c)),
      Context.add(ChatStore.ChatStore, SqliteChatStore.make(c)),
      Context.add(PeopleStore.PeopleStore, SqlitePeopleStore.make(c)),
      Context.add(StatsStore.StatsStore, SqliteStatsStore.make(c)),
      Context.add(BacklogStore.BacklogStore, SqliteBacklogStore.make(c)),
      Context.add(AccountStore.AccountStore, SqliteAccountStore.make(c)),
      Context.add(SessionStore.SessionStore, SqliteSessionStore.make(c)),
      Context.add(AuditStore.AuditStore, SqliteAuditStore.make(c))
    ).pipe(
      Context.add(LeaseStore.LeaseStore, SqliteLeaseStore.make(c)),
      Context.add(NoteStore.NoteStore, SqliteNoteStore.make(c)),
      Context.add(CannedReplyStore.CannedReplyStore, SqliteCannedReplyStore.make(c)),
      Context.add(Broadcast.Broadcast, Broadcast.alone),
      // One server per SQLite file (the server's OS lock), so nothing else can hold this lock.
      Context.add(StoreLock.StoreLock, { exclusive: (_name, effect) => effect }),
      Context.add(StoreHealth.StoreHealth, {
        ping: attempt("ping", () => {
          c.statement("SELECT 1").all()
        })
      })
    )
  })

/** Every store on SQLite: a file the layer opens and closes, or a database the host owns. */
export const layer = (
  options: Options
): Layer.Layer<Stores.Stores, MigrationError | SecretKeyError | Errors.StorageError> =>
  Layer.scopedContext(make(options))

/**
 * Opens the database with its key (checked) and brings its schema up to date, for tools that read it whole
 * (`botrelay migrate`): the database and the cipher of its secrets. A file is closed when the scope closes.
 */
export const open = (
  options: Options
): Effect.Effect<
  { readonly sqlite: SqliteDatabase; readonly cipher: SecretKey.Cipher },
  MigrationError | SecretKeyError | Errors.StorageError,
  Scope.Scope
> => openWithKey(options)

/** What a key rotation re-encrypted. */
export interface Rotated {
  readonly bots: number
  readonly webhook_secrets: number
  readonly settings: number
  readonly bridges: number
}

/**
 * Re-encrypts every secret of the database with `to`, in one transaction, after checking that `from`
 * (with `options.secretKey`, or the key file) is its key; a database still in plaintext is first
 * encrypted with `from`. Nothing else may use the database meanwhile (stop the server first).
 */
export const rotateSecretKey = (
  options: Options,
  to: SecretKey.SecretKey
): Effect.Effect<Rotated, MigrationError | SecretKeyError | Errors.StorageError, Scope.Scope> =>
  Effect.flatMap(openWithKey(options), ({ cipher: from, sqlite }) =>
    overwriting(sqlite, Effect.try({
      try: () => {
        const next = SecretKey.cipher(to)
        return sqlite.transaction((): Rotated => {
          const bots = sqlite.prepare("SELECT id, token, secret_token, signing_secret FROM botrelay_bots").all() as Array<
            { id: number; token: string; secret_token: string; signing_secret: string }
          >
          const updateBot = sqlite.prepare(
            "UPDATE botrelay_bots SET token = ?, token_hash = ?, secret_token = ?, signing_secret = ? WHERE id = ?"
          )
          for (const bot of bots) {
            const token = from.decrypt("token", bot.token)
            updateBot.run(
              next.encrypt("token", token),
              next.tokenHash(token),
              next.encrypt("secret_token", from.decrypt("secret_token", bot.secret_token)),
              next.encrypt("signing_secret", from.decrypt("signing_secret", bot.signing_secret)),
              bot.id
            )
          }
          const hooks = sqlite.prepare("SELECT bot_id, secret FROM botrelay_webhooks").all() as Array<
            { bot_id: number; secret: string }
          >
          const updateHook = sqlite.prepare("UPDATE botrelay_webhooks SET secret = ? WHERE bot_id = ?")
          for (const hook of hooks) {
            updateHook.run(next.encrypt("webhook_secret", from.decrypt("webhook_secret", hook.secret)), hook.bot_id)
          }
          const bridges = sqlite.prepare("SELECT id, signing_secret FROM botrelay_bridges").all() as Array<
            { id: number; signing_secret: string }
          >
          const updateBridge = sqlite.prepare("UPDATE botrelay_bridges SET signing_secret = ? WHERE id = ?")
          for (const bridge of bridges) {
            updateBridge.run(
              next.encrypt("signing_secret", from.decrypt("signing_secret", bridge.signing_secret)),
              bridge.id
            )
          }
          const names = [...SettingsStore.secretSettings]
          const settings = (sqlite.prepare("SELECT name, value FROM botrelay_settings").all() as Array<
            { name: string; value: string }
          >).filter((setting) => names.includes(setting.name))
          const updateSetting = sqlite.prepare("UPDATE botrelay_settings SET value = ? WHERE name = ?")
          for (const setting of settings) {
            updateSetting.run(next.encrypt("setting", from.decrypt("setting", setting.value)), setting.name)
          }
          sqlite.prepare("UPDATE botrelay_secret_key SET check_value = ? WHERE id = 1")
            .run(next.encrypt("check", SecretKey.checkPlaintext))
          return { bots: bots.length, webhook_secrets: hooks.length, settings: settings.length, bridges: bridges.length }
        })()
      },
      catch: (cause) =>
        cause instanceof SecretKey.SecretKeyError ? cause : new Errors.StorageError({ operation: "rotateSecretKey", cause })
    }))
  )

