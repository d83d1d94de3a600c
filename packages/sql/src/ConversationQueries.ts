import type { Chat, Scope } from "@botrelay/core"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import { appendAudit } from "./AuditQueries.js"
import { inFilter } from "./ScopeQueries.js"
import type { Database } from "./Tables.js"

/** A chat's conversation state, when it is listed. */
export const conversationOf = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.selectFrom("botrelay_chats")
    .select(["status", "priority", "assignee_id", "snoozed_until"])
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("migrated_to_chat_id", "=", sql.lit(0))

/** Replaces a chat's conversation state, only while it is still `before` (so no concurrent change is lost). */
export const replaceConversation = (
  db: Kysely<Database>,
  botId: number,
  chatId: number,
  before: Chat.Conversation,
  after: Chat.Conversation
) =>
  db.updateTable("botrelay_chats")
    .set({
      status: after.status,
      priority: after.priority,
      assignee_id: after.assignee_id,
      snoozed_until: after.snoozed_until
    })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("migrated_to_chat_id", "=", sql.lit(0))
    .where("status", "=", before.status)
    .where("priority", "=", before.priority)
    .where("assignee_id", "=", before.assignee_id)
    .where("snoozed_until", "=", before.snoozed_until)

/** The listed chats among `chatIds` of a bot that are not open, with what reopening changes. */
export const notOpen = (db: Kysely<Database>, botId: number, chatIds: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_chats")
    .select(["chat_id", "status", "snoozed_until"])
    .where("bot_id", "=", botId)
    .where("chat_id", "in", chatIds)
    .where("status", "<>", sql.lit("open"))
    .where("migrated_to_chat_id", "=", sql.lit(0))

/** A listed chat of a bot when it is not open, with what reopening changes. */
export const notOpenChat = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.selectFrom("botrelay_chats")
    .select(["chat_id", "status", "snoozed_until"])
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("status", "<>", sql.lit("open"))
    .where("migrated_to_chat_id", "=", sql.lit(0))

/** The audit entry of Botrelay reopening a chat at `at` (Unix seconds): what changed, `{field: [old, new]}`. */
export const reopenAudit = (
  db: Kysely<Database>,
  botId: number,
  chatId: number,
  at: number,
  before: { readonly status: string; readonly snoozed_until: number },
  reason: "incoming" | "snooze_expired"
) =>
  appendAudit(
    db,
    new Date(at * 1000).toISOString(),
    "system",
    0,
    "system",
    "",
    "chats.reopen",
    "chat",
    String(chatId),
    botId,
    chatId,
    "ok",
    JSON.stringify({
      status: [before.status, "open"],
      ...(before.snoozed_until === 0 ? {} : { snoozed_until: [before.snoozed_until, 0] }),
      reason
    })
  )

/** Reopens a chat that is not open: status open, no snooze. */
export const reopen = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.updateTable("botrelay_chats")
    .set({ status: sql.lit("open"), snoozed_until: sql.lit(0) })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("status", "<>", sql.lit("open"))
    .where("migrated_to_chat_id", "=", sql.lit(0))

/** Snoozed chats due at `now` (Unix seconds), at most `limit`, soonest first. */
export const dueSnoozes = (db: Kysely<Database>, now: number, limit: number) =>
  db.selectFrom("botrelay_chats")
    .select(["bot_id", "chat_id", "snoozed_until"])
    .where("status", "=", sql.lit("snoozed"))
    .where("snoozed_until", "<=", now)
    .where("migrated_to_chat_id", "=", sql.lit(0))
    .orderBy("snoozed_until")
    .limit(limit)

/** Reopens a snoozed chat whose snooze was due at `now`; nothing when another instance already did. */
export const wake = (db: Kysely<Database>, botId: number, chatId: number, now: number) =>
  db.updateTable("botrelay_chats")
    .set({ status: sql.lit("open"), snoozed_until: sql.lit(0) })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("status", "=", sql.lit("snoozed"))
    .where("snoozed_until", "<=", now)

/** The kept counts of the bots' listed chats per status and assignee. */
export const chatCounts = (db: Kysely<Database>, botIds: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_chat_counts")
    .select(["bot_id", "status", "assignee_id", "chats"])
    .where("bot_id", "in", botIds)
    .where("chats", ">", sql.lit(0))

/**
 * The counts of single chats (a chat-level scope) per status and assignee, counted from the chats themselves:
 * the scope names few chats, looked up by key.
 */
export const chatCountsOf = (db: Kysely<Database>, chats: Scope.ChatFilter["chats"]) =>
  db.selectFrom("botrelay_chats")
    .select(["bot_id", "status", "assignee_id", (eb) => eb.fn.countAll<number>().as("chats")])
    .where(inFilter({ bot_ids: [], chats }, "bot_id", "chat_id"))
    .where("migrated_to_chat_id", "=", 0)
    .groupBy(["bot_id", "status", "assignee_id"])

/** Gives a moved chat the conversation state of the chat it came from, unless that is a new chat's. */
export const carryConversation = (
  db: Kysely<Database>,
  from: Chat.Conversation,
  botId: number,
  chatId: number
) =>
  db.updateTable("botrelay_chats")
    .set({
      status: from.status,
      priority: from.priority,
      assignee_id: from.assignee_id,
      snoozed_until: from.snoozed_until
    })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)

/** The ids of the bots whose history is kept, ascending. */
export const historyBotIds = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_bots").select("id").where("manage_enabled", "=", sql.lit(1)).orderBy("id")

/** Marks a chat unreachable since `since` for `reason`, unless it already is; a row when it changed. */
export const markUnreachable = (db: Kysely<Database>, since: number, reason: string, botId: number, chatId: number) =>
  db.updateTable("botrelay_chats").set({ unreachable_since: since, unreachable_reason: reason })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("unreachable_since", "=", sql.lit(0))

/** Marks a chat reachable again, if it was not; a row when it changed. */
export const markReachable = (db: Kysely<Database>, botId: number, chatId: number) =>
  db.updateTable("botrelay_chats").set({ unreachable_since: sql.lit(0), unreachable_reason: sql.lit("") })
    .where("bot_id", "=", botId)
    .where("chat_id", "=", chatId)
    .where("unreachable_since", ">", sql.lit(0))
