import type { AccountStore } from "./AccountStore.js"
import type { AuditStore } from "./AuditStore.js"
import type { BacklogStore } from "./BacklogStore.js"
import type { BotStore } from "./BotStore.js"
import type { BridgeStore } from "./BridgeStore.js"
import type { Broadcast } from "./Broadcast.js"
import type { BufferStore } from "./BufferStore.js"
import type { CannedReplyStore } from "./CannedReplyStore.js"
import type { EventStore } from "./EventStore.js"
import type { IdempotencyStore } from "./IdempotencyStore.js"
import type { ChatStore } from "./ChatStore.js"
import type { InboxStore } from "./InboxStore.js"
import type { KeyStore } from "./KeyStore.js"
import type { LeaseStore } from "./LeaseStore.js"
import type { MappingStore } from "./MappingStore.js"
import type { MessageStore } from "./MessageStore.js"
import type { NoteStore } from "./NoteStore.js"
import type { OutboxStore } from "./OutboxStore.js"
import type { PeopleStore } from "./PeopleStore.js"
import type { RouteStore } from "./RouteStore.js"
import type { SearchStore } from "./SearchStore.js"
import type { SessionStore } from "./SessionStore.js"
import type { SettingsStore } from "./SettingsStore.js"
import type { StatsStore } from "./StatsStore.js"
import type { StoreHealth } from "./StoreHealth.js"
import type { StoreLock } from "./StoreLock.js"
import type { TagStore } from "./TagStore.js"

/**
 * Every store a driver provides from one layer (`SqliteStores.layer`). Ids referenced by records (a
 * route's bots, a key's bots) are checked by the services before they reach the stores; drivers must
 * pass the conformance suite in `@botrelay/testing`.
 */
export type Stores =
  | BotStore
  | BridgeStore
  | RouteStore
  | MappingStore
  | MessageStore
  | SearchStore
  | TagStore
  | KeyStore
  | SettingsStore
  | InboxStore
  | BufferStore
  | OutboxStore
  | EventStore
  | StoreHealth
  | StoreLock
  | Broadcast
  | LeaseStore
  | ChatStore
  | PeopleStore
  | StatsStore
  | AccountStore
  | SessionStore
  | AuditStore
  | BacklogStore
  | NoteStore
  | CannedReplyStore
  | IdempotencyStore
