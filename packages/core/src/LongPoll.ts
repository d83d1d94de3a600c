import { Context, Data, type Effect } from "effect"
import type { StorageError } from "./Errors.js"

/** Telegram's getUpdates parameters, as a client sent them (already parsed to numbers and arrays). */
export interface GetUpdates {
  readonly offset?: number | undefined
  readonly limit?: number | undefined
  /** Seconds to hold the request while nothing is buffered; 0 answers at once. */
  readonly timeout?: number | undefined
  /** Remembered per bot when given; omitted keeps the previous setting. */
  readonly allowed_updates?: ReadonlyArray<string> | undefined
}

/** A buffered update: its id and its JSON text exactly as Telegram sent it. */
export interface BufferedUpdate {
  readonly update_id: number
  readonly payload: string
}

/** What getWebhookInfo reports about a bot's buffer. */
export interface BufferStatus {
  /** Updates buffered and not yet confirmed. */
  readonly pending: number
  /** Updates dropped by retention (count or age) since the bot was created. */
  readonly trimmed: number
  /** Unix seconds of the last trim, 0 if none. */
  readonly last_trimmed_date: number
  /** The remembered allowed_updates, [] when never set. */
  readonly allowed_updates: ReadonlyArray<string>
}

/** A newer getUpdates for the same bot ended this one, as Telegram does. */
export class PollConflict extends Data.TaggedError("PollConflict")<{}> {
  override get message() {
    return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
  }
}

/** A bot's long-poll buffer is only served while `long_poll_enabled` is on. */
export class LongPollDisabled extends Data.TaggedError("LongPollDisabled")<{ readonly bot_id: number }> {
  override get message() {
    return "long polling is not enabled for this bot in Botrelay; set long_poll_enabled with POST /api/bots/update"
  }
}

/**
 * The long-poll buffer of bots with `long_poll_enabled`, served with Telegram's getUpdates semantics:
 * `offset` confirms everything below it, a negative offset keeps only the last updates, `limit` 1..100,
 * `timeout` holds the request until an update arrives, `allowed_updates` is remembered, and a newer
 * call ends an older pending one with `PollConflict`.
 */
export interface LongPollService {
  readonly getUpdates: (
    botId: number,
    params: GetUpdates
  ) => Effect.Effect<ReadonlyArray<BufferedUpdate>, PollConflict | LongPollDisabled | StorageError>
  readonly status: (botId: number) => Effect.Effect<BufferStatus, StorageError>
  /** Drops every buffered update (setWebhook / deleteWebhook with drop_pending_updates). */
  readonly drop: (botId: number) => Effect.Effect<void, StorageError>
  /** Wakes pending getUpdates of the bot after updates were buffered. */
  readonly buffered: (botId: number) => Effect.Effect<void>
}

/** The long-poll buffer. */
export class LongPoll extends Context.Tag("@botrelay/core/LongPoll")<LongPoll, LongPollService>() {}
