import { Errors, type Stores } from "@botrelay/core"
import {
  AccountStore,
  AuditStore,
  Broadcast,
  BotStore,
  BufferStore,
  CannedReplyStore,
  ChatStore,
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
import type { SecretKey } from "@botrelay/sql"
import type { Scope } from "effect"
import { Context, Effect, Layer } from "effect"
import { sql } from "kysely"
import * as PostgresAccountStore from "./PostgresAccountStore.js"
import * as PostgresAuditStore from "./PostgresAuditStore.js"
import * as PostgresBroadcast from "./PostgresBroadcast.js"
import * as PostgresBotStore from "./PostgresBotStore.js"
import * as PostgresBufferStore from "./PostgresBufferStore.js"
import * as PostgresChatStore from "./PostgresChatStore.js"
import type { ConnectionError, MigrationError, Options } from "./PostgresConnection.js"
import { open } from "./PostgresConnection.js"
import * as PostgresEventStore from "./PostgresEventStore.js"
import * as PostgresInboxStore from "./PostgresInboxStore.js"
import * as PostgresKeyStore from "./PostgresKeyStore.js"
import * as PostgresLeaseStore from "./PostgresLeaseStore.js"
import * as PostgresMappingStore from "./PostgresMappingStore.js"
import * as PostgresMessageStore from "./PostgresMessageStore.js"
import * as PostgresOutboxStore from "./PostgresOutboxStore.js"
import * as PostgresBridgeStore from "./PostgresBridgeStore.js"
import * as PostgresPeopleStore from "./PostgresPeopleStore.js"
import * as PostgresRouteStore from "./PostgresRouteStore.js"
import * as PostgresSearchStore from "./PostgresSearchStore.js"
import * as PostgresSessionStore from "./PostgresSessionStore.js"
import * as PostgresSettingsStore from "./PostgresSettingsStore.js"
import * as PostgresStatsStore from "./PostgresStatsStore.js"
import * as PostgresBacklogStore from "./PostgresBacklogStore.js"
import * as PostgresIdempotencyStore from "./PostgresIdempotencyStore.js"
import * as PostgresTagStore from "./PostgresTagStore.js"
import * as PostgresNoteStore from "./PostgresNoteStore.js"
import * as PostgresCannedReplyStore from "./PostgresCannedReplyStore.js"

export { ConnectionError, MigrationError, type Options, target } from "./PostgresConnection.js"

/** Why the stores cannot be opened. */
export type OpenError = ConnectionError | MigrationError | SecretKey.SecretKeyError | Errors.StorageError

/**
 * Connects (a pool of `options.pool` connections, default 10), brings the `botrelay_*` tables up to date under
 * an advisory lock, checks the secret key, and returns every store on the database. The pool closes with the scope.
 */
export const make = (options: Options): Effect.Effect<Context.Context<Stores.Stores>, OpenError, Scope.Scope> =>
  Effect.map(open(options), (c) =>
    Context.make(IdempotencyStore.IdempotencyStore, PostgresIdempotencyStore.make(c)).pipe(
      Context.add(BotStore.BotStore, PostgresBotStore.make(c)),
      Context.add(RouteStore.RouteStore, PostgresRouteStore.make(c)),
      Context.add(MappingStore.MappingStore, PostgresMappingStore.make(c)),
      Context.add(MessageStore.MessageStore, PostgresMessageStore.make(c)),
      Context.add(SearchStore.SearchStore, PostgresSearchStore.make(c)),
      Context.add(TagStore.TagStore, PostgresTagStore.make(c)),
      Context.add(KeyStore.KeyStore, PostgresKeyStore.make(c)),
      Context.add(SettingsStore.SettingsStore, PostgresSettingsStore.make(c)),
      Context.add(InboxStore.InboxStore, PostgresInboxStore.make(c)),
      Context.add(BufferStore.BufferStore, PostgresBufferStore.make(c)),
      Context.add(OutboxStore.OutboxStore, PostgresOutboxStore.make(c)),
      Context.add(BridgeStore.BridgeStore, PostgresBridgeStore.make(c)),
      Context.add(EventStore.EventStore, PostgresEventStore.make(c)),
      Context.add(ChatStore.ChatStore, PostgresChatStore.make(c)),
      Context.add(PeopleStore.PeopleStore, PostgresPeopleStore.make(c)),
      Context.add(StatsStore.StatsStore, PostgresStatsStore.make(c)),
      Context.add(BacklogStore.BacklogStore, PostgresBacklogStore.make(c)),
      Context.add(AccountStore.AccountStore, PostgresAccountStore.make(c)),
      Context.add(SessionStore.SessionStore, PostgresSessionStore.make(c)),
      Context.add(AuditStore.AuditStore, PostgresAuditStore.make(c))
    ).pipe(
      Context.add(LeaseStore.LeaseStore, PostgresLeaseStore.make(c)),
      Context.add(NoteStore.NoteStore, PostgresNoteStore.make(c)),
      Context.add(CannedReplyStore.CannedReplyStore, PostgresCannedReplyStore.make(c)),
      Context.add(Broadcast.Broadcast, PostgresBroadcast.make(c)),
      Context.add(StoreLock.StoreLock, {
        exclusive: (name, effect) =>
          Effect.acquireUseRelease(
            Effect.tryPromise({
              try: async () => {
                const client = await c.connect()
                try {
                  await client.query("SELECT pg_advisory_lock(hashtext($1)::bigint)", [`botrelay:${name}`])
                } catch (error) {
                  await client.end().catch(() => undefined)
                  throw error
                }
                return client
              },
              catch: (cause) => new Errors.StorageError({ operation: "exclusive", cause })
            }),
            () => effect,
            // Ending the session releases its advisory lock.
            (client) => Effect.promise(() => client.end().catch(() => undefined))
          )
      }),
      Context.add(StoreHealth.StoreHealth, {
        ping: c.use("ping", async (db) => {
          await sql`SELECT 1`.execute(db)
        })
      })
    ))

/** Every store on PostgreSQL: a pool the layer opens and closes. */
export const layer = (options: Options): Layer.Layer<Stores.Stores, OpenError> => Layer.scopedContext(make(options))
