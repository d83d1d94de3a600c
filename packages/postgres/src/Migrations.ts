import type { SecretKey } from "@botrelay/sql"
import type { Migration } from "kysely"
import * as m0001Init from "./migrations/0001_init.js"
import * as m0002Leases from "./migrations/0002_leases.js"
import * as m0003Bridges from "./migrations/0003_bridges.js"
import * as m0004InboxDropped from "./migrations/0004_inbox_dropped.js"
import * as m0005InstanceVersion from "./migrations/0005_instance_version.js"
import * as m0006ConversationState from "./migrations/0006_conversation_state.js"
import * as m0007NotesCannedReplies from "./migrations/0007_notes_canned_replies.js"
import * as m0008DeliveryTruth from "./migrations/0008_delivery_truth.js"
import * as m0009ChatScopes from "./migrations/0009_chat_scopes.js"

/** The table in which Kysely's `Migrator` records applied migrations. */
export const migrationTableName = "botrelay_migrations"

/** The table Kysely's `Migrator` keeps beside it. */
export const migrationLockTableName = "botrelay_migrations_lock"

/**
 * The session advisory lock every instance takes while it migrates, so that instances starting together on
 * an empty database migrate one after the other ("botrelay" in ASCII).
 */
export const advisoryLock = "7093009174389530489"

/**
 * Every schema change, in order, for a database whose secrets `cipher` encrypts; each is a module of
 * `migrations/`. A migration is frozen once released: change the schema by adding a new one.
 */
export const migrations = (cipher: SecretKey.Cipher): Record<string, Migration> => ({
  "0001_init": m0001Init.migration(cipher),
  "0002_leases": m0002Leases.migration,
  "0003_bridges": m0003Bridges.migration,
  "0004_inbox_dropped": m0004InboxDropped.migration,
  "0005_instance_version": m0005InstanceVersion.migration,
  "0006_conversation_state": m0006ConversationState.migration,
  "0007_notes_canned_replies": m0007NotesCannedReplies.migration,
  "0008_delivery_truth": m0008DeliveryTruth.migration,
  "0009_chat_scopes": m0009ChatScopes.migration
})
