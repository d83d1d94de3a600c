import type { Effect } from "effect"
import { Context } from "effect"
import type { StorageError } from "../domain/Errors.js"
import type { OutboxKind } from "../domain/Status.js"

/** A bot's jobs of one outbox kind: how many wait, since when the oldest waits ("" for none), how many are dead. */
export interface OutboxBacklog {
  readonly bot_id: number
  readonly kind: OutboxKind
  readonly depth: number
  readonly oldest_pending_at: string
  readonly dead: number
}

/** What a bot has waiting: unprocessed updates, unconfirmed long-poll updates, and where its backend stands. */
export interface BotBacklog {
  readonly bot_id: number
  /** Updates in the inbox not processed yet, and when the oldest came ("" for none). */
  readonly inbox: number
  readonly oldest_inbox_at: string
  /** Updates buffered for long polling, not confirmed yet. */
  readonly buffered: number
  /** The lowest buffered update id, 0 for none. */
  readonly lowest_buffered: number
  /** The highest update id delivered to the backend, 0 for none. */
  readonly delivered_update_id: number
  /** The update id the bot's next getUpdates asks from, 0 for none. */
  readonly ingress_offset: number
  readonly disabled: boolean
}

/** A route's sends: how many wait, and the highest update id of a sent one (0 for none). */
export interface RouteBacklog {
  readonly source_bot_id: number
  readonly route_id: number
  readonly pending: number
  readonly sent_update_id: number
}

/**
 * Everything waiting in storage, over every bot and instance: what metrics and the status report show. Every
 * bot has its entry in `bots`, and one in `outbox` per kind, zeros when nothing waits.
 */
export interface Backlog {
  readonly outbox: ReadonlyArray<OutboxBacklog>
  readonly bots: ReadonlyArray<BotBacklog>
  /** The routes that ever had a send, by id. */
  readonly routes: ReadonlyArray<RouteBacklog>
  /** The leases held at `now`, counted per instance. */
  readonly leases: ReadonlyArray<{ readonly instance_id: string; readonly count: number }>
}

/** The shared truth of what waits where, read in one query. */
export interface BacklogStoreService {
  /** The backlog; leases count as held when they expire after `now` (ISO 8601). */
  readonly read: (now: string) => Effect.Effect<Backlog, StorageError>
}

/** The backlog store. */
export class BacklogStore extends Context.Tag("@botrelay/core/BacklogStore")<BacklogStore, BacklogStoreService>() {}
