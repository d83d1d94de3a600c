import type {
  BotStore,
  BridgeStore,
  BufferStore,
  ChatStore,
  InboxStore,
  KeyStore,
  MappingStore,
  MessageStore,
  OutboxStore,
  RouteStore,
  SearchStore,
  SettingsStore,
  StoreHealth,
  TagStore
} from "@botrelay/core"
import { Migrations, SecretKey, SqliteStores } from "@botrelay/sqlite"
import * as StoreSuite from "@botrelay/testing/StoreSuite"
import type Database from "better-sqlite3"
import { Effect } from "effect"
import { Kysely, Migrator, SqliteDialect } from "kysely"

/** Every store's service in one object: the driver's tests check what crosses the areas. */
export type AllStores =
  & BotStore.BotStoreService
  & BridgeStore.BridgeStoreService
  & RouteStore.RouteStoreService
  & MappingStore.MappingStoreService
  & MessageStore.MessageStoreService
  & SearchStore.SearchStoreService
  & TagStore.TagStoreService
  & KeyStore.KeyStoreService
  & SettingsStore.SettingsStoreService
  & InboxStore.InboxStoreService
  & BufferStore.BufferStoreService
  & ChatStore.ChatStoreService
  & OutboxStore.OutboxStoreService
  & StoreHealth.StoreHealthService

/** Bot `n` as a test adds it: forwarding every update to a backend, without history or a long-poll buffer. */
export const forwardingBot = (n: number) =>
  StoreSuite.botInput(n, { proxy_enabled: true, backend_url: "https://backend.example/hook" })

/** `SqliteStores.make`, with the stores merged into one object (their method names differ). */
export const open = (options: SqliteStores.Options) =>
  Effect.map(SqliteStores.make(options), (context): AllStores => Object.assign({}, ...context.unsafeMap.values()))

/** Brings a new database file to the schema just before the migration named `next`: a database of an older release. */
export const migrateBefore = (database: Database.Database, key: SecretKey.SecretKey, next: string) =>
  Effect.promise(() =>
    new Migrator({
      db: new Kysely<unknown>({ dialect: new SqliteDialect({ database }) }),
      provider: {
        getMigrations: () =>
          Promise.resolve(Object.fromEntries(
            Object.entries(Migrations.migrations(SecretKey.cipher(key))).filter(([name]) => name < next)
          ))
      },
      migrationTableName: Migrations.migrationTableName,
      migrationLockTableName: Migrations.migrationLockTableName
    }).migrateToLatest()
  ).pipe(Effect.flatMap(({ error }) => error === undefined ? Effect.void : Effect.die(error)))
