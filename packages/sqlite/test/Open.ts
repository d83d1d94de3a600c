import type {
  BotStore,
  BufferStore,
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
import { SqliteStores } from "@botrelay/sqlite"
import { Effect } from "effect"

/** Every store's service in one object: the driver's tests check what crosses the areas. */
export type AllStores =
  & BotStore.BotStoreService
  & RouteStore.RouteStoreService
  & MappingStore.MappingStoreService
  & MessageStore.MessageStoreService
  & SearchStore.SearchStoreService
  & TagStore.TagStoreService
  & KeyStore.KeyStoreService
  & SettingsStore.SettingsStoreService
  & InboxStore.InboxStoreService
  & BufferStore.BufferStoreService
  & OutboxStore.OutboxStoreService
  & StoreHealth.StoreHealthService

/** `SqliteStores.make`, with the stores merged into one object (their method names differ). */
export const open = (options: SqliteStores.Options) =>
  Effect.map(SqliteStores.make(options), (context): AllStores => Object.assign({}, ...context.unsafeMap.values()))
