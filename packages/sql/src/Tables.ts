import type { Generated } from "kysely"

/**
 * `botrelay_bots`: one row per registered bot; booleans are 0/1, times ISO 8601 text. `token`,
 * `secret_token` and `signing_secret` are encrypted (see `SecretKey.Cipher`); `token_hash` is the token's keyed hash, unique.
 */
export interface BotsTable {
  readonly id: Generated<number>
  readonly token: string
  readonly token_hash: string
  readonly name: string
  readonly source: "cli" | "web"
  readonly manage_enabled: number
  readonly proxy_enabled: number
  readonly backend_url: string
  /** Who last set `backend_url`. */
  readonly backend_url_origin: "api" | "tgapi"
  readonly secret_token: string
  readonly signing_secret: string
  readonly long_poll_enabled: number
  readonly description: string
  readonly webhook_mode: number
  readonly disabled: number
  readonly username: string
  readonly last_error: string
  readonly last_update_at: string
  readonly created_at: string
  readonly updated_at: string
}

/** `botrelay_routes`. */
export interface RoutesTable {
  readonly id: Generated<number>
  readonly source_bot_id: number
  readonly target_bot_id: number
  readonly condition_type: "all" | "chat_id" | "user_id" | "keyword" | "regex" | "llm"
  readonly condition_value: string
  readonly action: "forward" | "copy" | "drop"
  readonly target_chat_id: number
  readonly enabled: number
  readonly description: string
  readonly created_at: string
}

/** `botrelay_messages`: keyed by (bot_id, chat_id, id); the optional fields are NULL when absent. */
export interface MessagesTable {
  readonly bot_id: number
  readonly chat_id: number
  readonly id: number
  readonly user_id: number
  readonly username: string
  readonly first_name: string
  readonly last_name: string
  readonly text: string
  readonly date: number
  readonly media_type: string | null
  readonly file_id: string | null
  readonly reply_to_message_id: number | null
  readonly direction: "in" | "out"
  readonly edit_date: number
  /** 1 once deleted through Botrelay. */
  readonly deleted: number
  /** Set on messages sent through the API (`botrelay_outgoing`); NULL for the others. */
  readonly local_id: Generated<number | null>
  /** queued, sent, failed or unknown; "sent" for messages received or sent by other paths. */
  readonly delivery: Generated<string>
  readonly delivery_error: Generated<string>
  readonly delivery_at: Generated<number>
}

/** `botrelay_tags`: unique per (chat_id, user_id, tag). */
export interface TagsTable {
  readonly id: Generated<number>
  /** The bot whose chat the tag is in; 0 for tags from before tags had bots (admins only). */
  readonly bot_id: number
  readonly chat_id: number
  readonly user_id: number
  readonly username: string
  readonly tag: string
  readonly color: string
  readonly created_at: string
}

/** `botrelay_api_keys`: `hash` is the SHA-256 of the secret. */
export interface ApiKeysTable {
  readonly id: Generated<number>
  readonly name: string
  readonly role: "admin" | "operator"
  readonly prefix: string
  readonly hash: string
  readonly created_at: string
  readonly last_used_at: string
  readonly enabled: number
}

/** `botrelay_api_key_bots`: the bots an operator key may act on; `chat_ids` and `abilities` are JSON arrays. */
export interface ApiKeyBotsTable {
  readonly api_key_id: number
  readonly bot_id: number
  readonly chat_ids: string
  readonly abilities: string
}

/** `botrelay_accounts`: `username_key` is the username in lower case, unique. */
export interface AccountsTable {
  readonly id: Generated<number>
  readonly username: string
  readonly username_key: string
  readonly display_name: string
  readonly role: "admin" | "operator"
  readonly password_hash: string
  readonly enabled: number
  readonly created_at: string
  readonly last_login_at: string
}

/** `botrelay_account_bots`: the bots an operator account may act on; `chat_ids` and `abilities` are JSON arrays. */
export interface AccountBotsTable {
  readonly account_id: number
  readonly bot_id: number
  readonly chat_ids: string
  readonly abilities: string
}

/** `botrelay_sessions`: `id_hash` is the SHA-256 (hex) of the session id. */
export interface SessionsTable {
  readonly id_hash: string
  readonly account_id: number
  readonly created_at: string
  readonly last_seen_at: string
}

/**
 * `botrelay_inbox`: updates by (bot_id, update_id); `payload` is Telegram's JSON text, `processed` 0/1,
 * `dropped` 1 when a drop route removed the update (never replayed).
 */
export interface InboxTable {
  readonly bot_id: number
  readonly update_id: number
  readonly payload: string
  readonly received_at: string
  readonly processed: number
  readonly dropped: Generated<number>
}

/** `botrelay_ingress`: the offset of each bot's next getUpdates; no row means 0. */
export interface IngressTable {
  readonly bot_id: number
  readonly offset: number
}

/**
 * `botrelay_webhooks`: the secret (encrypted) of each bot's registered webhook; no row means none. `url` is
 * where Telegram was last told to post with that secret ('' until it accepted).
 */
export interface WebhooksTable {
  readonly bot_id: number
  readonly secret: string
  readonly url: Generated<string>
}

/** `botrelay_deliveries`: the outbox, FIFO per bot by id. */
export interface DeliveriesTable {
  readonly id: Generated<number>
  readonly bot_id: number
  readonly update_id: number
  readonly url: string
  readonly payload: string
  readonly status: "pending" | "delivered" | "dead" | "discarded"
  readonly attempts: number
  readonly next_attempt_at: string
  readonly last_error: string
  readonly created_at: string
  readonly updated_at: string
}

/** `botrelay_long_poll_buffer`: unconfirmed updates of bots with long polling, by (bot_id, update_id). */
export interface LongPollBufferTable {
  readonly bot_id: number
  readonly update_id: number
  /** The update's type (its key besides update_id), for allowed_updates. */
  readonly type: string
  /** Telegram's JSON text, unchanged. */
  readonly payload: string
  readonly created_at: string
}

/** `botrelay_long_poll_state`: per bot, the remembered allowed_updates (JSON array) and trims; no row means none. */
export interface LongPollStateTable {
  readonly bot_id: number
  readonly allowed_updates: string
  readonly trimmed: number
  readonly last_trimmed_at: string
}

/** `botrelay_secret_key`: one row (id 1) whose `check_value` only this database's secret key decrypts. */
export interface SecretKeyTable {
  readonly id: number
  readonly check_value: string
}

/** `botrelay_settings`: settings changed through the API (the LLM router's), by name; secret ones encrypted. */
export interface SettingsTable {
  readonly name: string
  readonly value: string
}

/** `botrelay_route_sends`: the outbox of messages routes pass on, FIFO per sending bot by id. */
export interface RouteSendsTable {
  readonly id: Generated<number>
  readonly bot_id: number
  readonly kind: "forward" | "copy" | "reply"
  readonly route_id: number
  readonly source_bot_id: number
  readonly update_id: number
  readonly from_chat_id: number
  readonly message_id: number
  readonly chat_id: number
  readonly reply_to_message_id: number
  readonly hop: number
  readonly status: "pending" | "sent" | "dead"
  readonly attempts: number
  readonly next_attempt_at: string
  readonly last_error: string
  readonly created_at: string
  readonly updated_at: string
}

/**
 * `botrelay_bridges`: outbound event webhooks. `events` and `bot_ids` are JSON arrays (no bot ids: every
 * bot); `enabled` is 0/1; `signing_secret` is encrypted.
 */
export interface BridgesTable {
  readonly id: Generated<number>
  readonly name: string
  readonly url: string
  readonly format: "json" | "slack"
  readonly events: string
  readonly bot_ids: string
  readonly enabled: number
  readonly signing_secret: string
  readonly last_error: string
  readonly created_at: string
  readonly updated_at: string
}

/** `botrelay_bridge_deliveries`: the outbox of bridges, one row per event per bridge; `data` is the event's JSON. */
export interface BridgeDeliveriesTable {
  readonly id: Generated<number>
  readonly bridge_id: number
  readonly bot_id: number
  readonly event_id: number
  readonly type: string
  readonly data: string
  readonly status: "pending" | "delivered" | "dead"
  readonly attempts: number
  readonly next_attempt_at: string
  readonly last_error: string
  readonly created_at: string
  readonly updated_at: string
}

/** `botrelay_route_mappings`: which message a route send produced from which; `reversible` is 0/1. */
export interface RouteMappingsTable {
  readonly id: Generated<number>
  readonly route_id: number
  readonly source_bot_id: number
  readonly source_chat_id: number
  readonly source_message_id: number
  readonly target_bot_id: number
  readonly target_chat_id: number
  readonly target_message_id: number
  readonly hop: number
  readonly reversible: number
  readonly created_at: string
}

/** `botrelay_events`: the event log live event streams replay from; `data` is the JSON of the event's `data`. */
export interface EventsTable {
  /** Handed out by the store, a batch at a time (`botrelay_event_state`). */
  readonly id: number
  /** 0 for the log's own markers. */
  readonly bot_id: number
  readonly chat_id: number
  readonly type: string
  readonly data: string
  readonly created_at: string
}

/** `botrelay_event_state`: one row, the last event id handed out, so that none is handed out twice. */
export interface EventStateTable {
  readonly id: number
  readonly last_id: number
}

/**
 * `botrelay_chats`: the chats of bots that keep history, by (bot_id, chat_id). The counters and the last
 * message are counted as messages are stored (`MessageCounts`) and follow deletions through a trigger; names,
 * kind and state come from sightings.
 * `search` is title, username and names in lower case, for `q`; `migrated_to_chat_id` is the supergroup a
 * group became (0 if none): such a chat is empty and unlisted.
 */
export interface ChatsTable {
  readonly bot_id: number
  readonly chat_id: number
  readonly type: "private" | "group" | "supergroup" | "channel"
  readonly title: Generated<string>
  readonly username: Generated<string>
  readonly first_name: Generated<string>
  readonly last_name: Generated<string>
  readonly search: Generated<string>
  readonly last_message_id: Generated<number | null>
  /** Unix seconds; 0 before the first message. */
  readonly last_message_at: Generated<number>
  /** The read mark, Unix seconds: incoming messages dated after it are unread. */
  readonly read_at: Generated<number>
  readonly unread_count: Generated<number>
  readonly message_count: Generated<number>
  readonly member_count: Generated<number>
  readonly state: Generated<"member" | "left" | "kicked">
  readonly migrated_to_chat_id: Generated<number>
  readonly status: Generated<"open" | "pending" | "resolved" | "snoozed">
  readonly priority: Generated<"none" | "low" | "medium" | "high" | "urgent">
  /** The account the chat is assigned to; 0 for none. */
  readonly assignee_id: Generated<number>
  /** Unix seconds a snoozed chat reopens at; 0 for none. */
  readonly snoozed_until: Generated<number>
  /** Unix seconds since the person made the bot unable to write to them; 0 while reachable. */
  readonly unreachable_since: Generated<number>
  readonly unreachable_reason: Generated<string>
}

/** `botrelay_chat_counts`: listed chats per bot, status and assignee, kept by triggers on `botrelay_chats`. */
export interface ChatCountsTable {
  readonly bot_id: number
  readonly status: "open" | "pending" | "resolved" | "snoozed"
  readonly assignee_id: number
  readonly chats: number
}

/** `botrelay_people`: users a bot saw, by (bot_id, user_id); times Unix seconds, `is_bot` 0/1, `search` as in chats. */
export interface PeopleTable {
  readonly bot_id: number
  readonly user_id: number
  readonly username: string
  readonly first_name: string
  readonly last_name: string
  /** "" until an update says. */
  readonly language_code: string
  readonly is_bot: number
  readonly first_seen_at: number
  readonly last_seen_at: number
  readonly search: string
}

/** `botrelay_chat_members`: which chats of a bot a user was seen in, and when last. */
export interface ChatMembersTable {
  readonly bot_id: number
  readonly chat_id: number
  readonly user_id: number
  readonly last_seen_at: number
}

/**
 * `botrelay_message_hours`: messages in and out per bot and hour (Unix seconds / 3600), counted as messages are
 * stored (`MessageCounts`).
 */
export interface MessageHoursTable {
  readonly bot_id: number
  readonly hour: number
  readonly in_count: number
  readonly out_count: number
}

/**
 * `botrelay_chat_days`: messages per bot, day (Unix seconds / 86400) and chat, counted as messages are stored
 * (`MessageCounts`).
 */
export interface ChatDaysTable {
  readonly bot_id: number
  readonly day: number
  readonly chat_id: number
  readonly messages: number
}

/**
 * `botrelay_audit`: the audit log, append-only (rows leave only by age); `details` is JSON text, `bot_id` and
 * `chat_id` NULL when the action concerns none. Ids are never reused (AUTOINCREMENT).
 */
export interface AuditTable {
  readonly id: Generated<number>
  readonly at: string
  readonly actor_type: string
  readonly actor_id: number
  readonly actor_name: string
  readonly ip: string
  readonly action: string
  readonly target_type: string
  readonly target_id: string
  readonly bot_id: number | null
  readonly chat_id: number | null
  readonly outcome: string
  readonly details: string
}

/** `botrelay_instances`: the instances sharing the database, by their last heartbeat. */
export interface InstancesTable {
  readonly id: string
  readonly started_at: string
  readonly last_heartbeat_at: string
  readonly version: string
}

/** `botrelay_leases`: each bot's owner; `epoch` only grows; `running` is 0/1. */
export interface LeasesTable {
  readonly bot_id: number
  readonly instance_id: string
  readonly epoch: number
  readonly expires_at: string
  readonly running: number
}

/** The Kysely schema of everything Botrelay keeps in SQLite. */
/** `botrelay_notes`: private notes of the team in chats; times are Unix seconds. */
export interface NotesTable {
  readonly id: Generated<number>
  readonly bot_id: number
  readonly chat_id: number
  readonly author_id: number
  readonly author_name: string
  readonly text: string
  readonly created_at: number
  readonly updated_at: number
}

/**
 * `botrelay_canned_replies`: replies the team shares. `code` is unique ignoring case; `bot_ids` is a JSON
 * array (empty: every bot); times are Unix seconds.
 */
export interface CannedRepliesTable {
  readonly id: Generated<number>
  readonly code: string
  readonly text: string
  readonly bot_ids: string
  readonly created_at: number
  readonly updated_at: number
}

export interface Database {
  readonly botrelay_bots: BotsTable
  readonly botrelay_routes: RoutesTable
  readonly botrelay_messages: MessagesTable
  readonly botrelay_tags: TagsTable
  readonly botrelay_notes: NotesTable
  readonly botrelay_canned_replies: CannedRepliesTable
  readonly botrelay_api_keys: ApiKeysTable
  readonly botrelay_api_key_bots: ApiKeyBotsTable
  readonly botrelay_inbox: InboxTable
  readonly botrelay_ingress: IngressTable
  readonly botrelay_deliveries: DeliveriesTable
  readonly botrelay_webhooks: WebhooksTable
  readonly botrelay_long_poll_buffer: LongPollBufferTable
  readonly botrelay_long_poll_state: LongPollStateTable
  readonly botrelay_settings: SettingsTable
  readonly botrelay_route_sends: RouteSendsTable
  readonly botrelay_route_mappings: RouteMappingsTable
  readonly botrelay_bridges: BridgesTable
  readonly botrelay_bridge_deliveries: BridgeDeliveriesTable
  readonly botrelay_secret_key: SecretKeyTable
  readonly botrelay_events: EventsTable
  readonly botrelay_event_state: EventStateTable
  readonly botrelay_chats: ChatsTable
  readonly botrelay_people: PeopleTable
  readonly botrelay_chat_members: ChatMembersTable
  readonly botrelay_message_hours: MessageHoursTable
  readonly botrelay_chat_days: ChatDaysTable
  readonly botrelay_accounts: AccountsTable
  readonly botrelay_account_bots: AccountBotsTable
  readonly botrelay_sessions: SessionsTable
  readonly botrelay_audit: AuditTable
  readonly botrelay_instances: InstancesTable
  readonly botrelay_leases: LeasesTable
  readonly botrelay_chat_counts: ChatCountsTable
  readonly botrelay_outgoing: OutgoingTable
  readonly botrelay_idempotency: IdempotencyTable
}

/** `botrelay_outgoing`: numbers the messages sent through the API (`local_id`) and keeps what was asked, as JSON. */
export interface OutgoingTable {
  readonly local_id: Generated<number>
  readonly bot_id: number
  readonly chat_id: number
  /** The send's decoded body as JSON, for a resend; "" for uploads, which cannot be sent again. */
  readonly request: string
  readonly created_at: number
}

/**
 * `botrelay_idempotency`: a send made with an `Idempotency-Key`, by (caller, key): the decoded body it came
 * with, its answer (`status` 0 while it runs), and when it first came (Unix seconds).
 */
export interface IdempotencyTable {
  readonly caller: string
  readonly key: string
  readonly request: string
  readonly status: number
  readonly body: string
  readonly created_at: number
}
