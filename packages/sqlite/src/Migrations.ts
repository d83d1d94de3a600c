import type { Migration } from "kysely"
import * as m0001Init from "./migrations/0001_init.js"
import * as m0002Runtime from "./migrations/0002_runtime.js"
import * as m0003WebhookSecret from "./migrations/0003_webhook_secret.js"
import * as m0004LongPollBuffer from "./migrations/0004_long_poll_buffer.js"
import * as m0005MessageDeleted from "./migrations/0005_message_deleted.js"
import * as m0006LlmSettings from "./migrations/0006_llm_settings.js"
import * as m0007RouteSends from "./migrations/0007_route_sends.js"
import * as m0008TagBots from "./migrations/0008_tag_bots.js"
import * as m0009BackendUrlOrigin from "./migrations/0009_backend_url_origin.js"
import * as m0010EncryptedSecrets from "./migrations/0010_encrypted_secrets.js"
import * as m0011PruneIndexes from "./migrations/0011_prune_indexes.js"
import * as m0012ChatsPeople from "./migrations/0012_chats_people.js"
import * as m0013EventLog from "./migrations/0013_event_log.js"
import * as m0014MediaIndex from "./migrations/0014_media_index.js"
import * as m0015Search from "./migrations/0015_search.js"
import * as m0016SearchBatched from "./migrations/0016_search_batched.js"
import * as m0017CountedInBatches from "./migrations/0017_counted_in_batches.js"
import * as m0018EventIds from "./migrations/0018_event_ids.js"
import * as m0019Accounts from "./migrations/0019_accounts.js"
import * as m0020Audit from "./migrations/0020_audit.js"
import * as m0021Leases from "./migrations/0021_leases.js"
import * as m0022Bridges from "./migrations/0022_bridges.js"
import * as m0023InboxDropped from "./migrations/0023_inbox_dropped.js"
import * as m0024InstanceVersion from "./migrations/0024_instance_version.js"
import * as m0025ConversationState from "./migrations/0025_conversation_state.js"
import * as m0026NotesCannedReplies from "./migrations/0026_notes_canned_replies.js"
import * as m0027DeliveryTruth from "./migrations/0027_delivery_truth.js"
import * as m0028ChatScopes from "./migrations/0028_chat_scopes.js"
import * as m0029DeliveryLineIndexes from "./migrations/0029_delivery_line_indexes.js"
import type { Cipher } from "./SecretKey.js"

/** The table in which Kysely's `Migrator` records applied migrations. */
export const migrationTableName = "botrelay_migrations"

/** The table Kysely's `Migrator` uses as its lock. */
export const migrationLockTableName = "botrelay_migrations_lock"

/**
 * Every schema change, in order, for a database whose secrets `cipher` encrypts; each is a module of
 * `migrations/`. A migration is frozen once released: change the schema by adding a new one, never by
 * editing an old one (they are written against `Kysely<any>` for that reason).
 */
export const migrations = (cipher: Cipher): Record<string, Migration> => ({
  "0001_init": m0001Init.migration,
  "0002_runtime": m0002Runtime.migration,
  "0003_webhook_secret": m0003WebhookSecret.migration,
  "0004_long_poll_buffer": m0004LongPollBuffer.migration,
  "0005_message_deleted": m0005MessageDeleted.migration,
  "0006_llm_settings": m0006LlmSettings.migration,
  "0007_route_sends": m0007RouteSends.migration,
  "0008_tag_bots": m0008TagBots.migration,
  "0009_backend_url_origin": m0009BackendUrlOrigin.migration,
  "0010_encrypted_secrets": m0010EncryptedSecrets.migration(cipher),
  "0011_prune_indexes": m0011PruneIndexes.migration,
  "0012_chats_people": m0012ChatsPeople.migration,
  "0013_event_log": m0013EventLog.migration,
  "0014_media_index": m0014MediaIndex.migration,
  "0015_search": m0015Search.migration,
  "0016_search_batched": m0016SearchBatched.migration,
  "0017_counted_in_batches": m0017CountedInBatches.migration,
  "0018_event_ids": m0018EventIds.migration,
  "0019_accounts": m0019Accounts.migration,
  "0020_audit": m0020Audit.migration,
  "0021_leases": m0021Leases.migration,
  "0022_bridges": m0022Bridges.migration,
  "0023_inbox_dropped": m0023InboxDropped.migration,
  "0024_instance_version": m0024InstanceVersion.migration,
  "0025_conversation_state": m0025ConversationState.migration,
  "0026_notes_canned_replies": m0026NotesCannedReplies.migration,
  "0027_delivery_truth": m0027DeliveryTruth.migration,
  "0028_chat_scopes": m0028ChatScopes.migration,
  "0029_delivery_line_indexes": m0029DeliveryLineIndexes.migration
})
