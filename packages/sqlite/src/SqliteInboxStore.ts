import type { Delivery, Inbox, InboxStore, LeaseStore, Message, Sighting } from "@botrelay/core"
import { BufferQueries, InboxQueries, LeaseQueries, OutboxQueries, type Tables } from "@botrelay/sql"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import { Option } from "effect"
import { attempt, compileAll, type Connection, db } from "./SqliteConnection.js"
import { sightingWriter } from "./SqliteChatStore.js"
import * as DeliveryLines from "./SqliteDeliveryLines.js"
import { checkFence } from "./SqliteLeaseStore.js"
import { messageWriter } from "./SqliteMessageStore.js"

/** The oldest processed inbox rows received before a time, oldest first (rowid order is arrival order). */
const pruneUpdates = (db: Kysely<Tables.Database>, before: string, limit: number) =>
  db.deleteFrom("botrelay_inbox").where(sql<number>`rowid`, "in", (eb) =>
    eb.selectFrom("botrelay_inbox")
      .select(sql<number>`rowid`.as("row"))
      .where("processed", "=", sql.lit(1))
      .where("received_at", "<", before)
      .limit(limit))

const queries = compileAll({
  ingressOffset: InboxQueries.ingressOffset,
  insertUpdate: InboxQueries.insertUpdate,
  insertProcessed: InboxQueries.insertProcessed,
  anyPending: InboxQueries.anyPending,
  raiseOffset: InboxQueries.raiseOffset,
  pendingUpdates: InboxQueries.pendingUpdates,
  markProcessed: InboxQueries.markProcessed,
  markDropped: InboxQueries.markDropped,
  backlog: InboxQueries.backlog,
  unprocessedCount: InboxQueries.unprocessedCount,
  queueDelivery: OutboxQueries.queueDelivery,
  queueSend: OutboxQueries.queueSend,
  insertBuffered: BufferQueries.insertBuffered,
  pruneUpdates,
  pruneDeliveries: OutboxQueries.pruneDeliveries,
  pruneSends: OutboxQueries.pruneSends
})

/** The `InboxStore` on SQLite: the pipeline's writes go through the group commit. */
export const make = (c: Connection, lines: DeliveryLines.DeliveryLines): InboxStore.InboxStoreService => {
  const hot = c.prepareAll(queries)
  const saveMessages = messageWriter(c)
  const writeSightings = sightingWriter(c)

  const commitUpdates = c.transaction(
    (
      botId: number,
      updates: ReadonlyArray<Pick<Inbox.InboxUpdate, "update_id" | "payload" | "received_at">>,
      nextOffset: number,
      fence: LeaseStore.Fence | undefined
    ): number => {
      checkFence(c, fence)
      let added = 0
      for (const update of updates) {
        added += hot.insertUpdate.run(botId, update.update_id, update.payload, update.received_at)
      }
      hot.raiseOffset.run(botId, nextOffset)
      return added
    }
  )

  /**
   * Writes what completing the updates changes, each only when `marked` (given it and its index) says its
   * update was marked processed just now; returns those written.
   */
  const writeCompletions = (
    completions: ReadonlyArray<Inbox.UpdateCompletion>,
    marked: (completion: Inbox.UpdateCompletion, index: number) => boolean
  ): Array<Inbox.UpdateCompletion> => {
    const written: Array<Inbox.UpdateCompletion> = []
    const messages: Array<Message.Message> = []
    const queued: Array<Delivery.Delivery> = []
    let sightings: Array<Sighting.Sighting> | undefined
    for (let i = 0; i < completions.length; i++) {
      const completion = completions[i]!
      if (!marked(completion, i)) continue
      written.push(completion)
      if (completion.dropped === true) hot.markDropped.run(completion.bot_id, completion.update_id)
      for (const message of completion.messages) messages.push(message)
      if (completion.sighting !== undefined) (sightings ??= []).push(completion.sighting)
      for (const d of completion.deliveries) {
        const id = hot.queueDelivery.insert(d.bot_id, d.update_id, d.url, d.payload, d.created_at, d.created_at, d.created_at)
        queued.push(DeliveryLines.pending(id, d))
      }
      for (const r of completion.sends ?? []) {
        hot.queueSend.run(
          r.bot_id,
          r.kind,
          r.route_id,
          r.source_bot_id,
          r.update_id,
          r.from_chat_id,
          r.message_id,
          r.chat_id,
          r.reply_to_message_id,
          r.hop,
          r.created_at,
          r.created_at,
          r.created_at
        )
      }
      const b = completion.buffer
      if (b !== undefined) {
        hot.insertBuffered.run(completion.bot_id, completion.update_id, b.type, b.payload, b.created_at)
      }
    }
    saveMessages(messages)
    if (sightings !== undefined) writeSightings(sightings)
    if (queued.length > 0) c.afterCommit(() => lines.queued(queued))
    return written
  }

  const completeUpdates = c.transaction((
    completions: ReadonlyArray<Inbox.UpdateCompletion>,
    fence: LeaseStore.Fence | undefined
  ): void => {
    checkFence(c, fence)
    writeCompletions(completions, (completion) => hot.markProcessed.run(completion.bot_id, completion.update_id) > 0)
  })

  const commitCompleting = c.transaction((
    botId: number,
    updates: ReadonlyArray<Inbox.InboxUpdate>,
    nextOffset: number,
    complete: (updates: ReadonlyArray<Inbox.InboxUpdate>) => ReadonlyArray<Inbox.UpdateCompletion> | undefined,
    fence: LeaseStore.Fence | undefined
  ) => {
    const completions = hot.anyPending.all(botId).length === 0 ? complete(updates) : undefined
    if (completions === undefined) return { added: commitUpdates(botId, updates, nextOffset, fence), completed: undefined }
    checkFence(c, fence)
    let added = 0
    const written = writeCompletions(completions, (_, i) => {
      const update = updates[i]!
      const inserted = hot.insertProcessed.run(botId, update.update_id, update.payload, update.received_at) > 0
      if (inserted) added++
      return inserted
    })
    hot.raiseOffset.run(botId, nextOffset)
    return { added, completed: written.length === 0 ? undefined : written }
  })

  return {
    ingressOffset: (botId) => attempt("ingressOffset", () => hot.ingressOffset.all(botId)[0]?.offset ?? 0),

    commitUpdates: (botId, updates, nextOffset, fence) =>
      LeaseQueries.surfaceLeaseLost(c.groupCommit("commitUpdates", () => commitUpdates(botId, updates, nextOffset, fence))),

    commitCompleting: (botId, updates, nextOffset, complete, fence) =>
      LeaseQueries.surfaceLeaseLost(
        c.groupCommit("commitUpdates", () => commitCompleting(botId, updates, nextOffset, complete, fence))
      ),

    webhookSecret: (botId) =>
      attempt("webhookSecret", () =>
        Option.map(
          Option.fromNullable(c.all(InboxQueries.webhookSecret(db, botId))[0]?.secret),
          (secret) => c.cipher.decrypt("webhook_secret", secret)
        )),

    setWebhookSecret: (botId, secret) =>
      attempt("setWebhookSecret", () => {
        c.run(
          secret === undefined
            ? InboxQueries.clearWebhookSecret(db, botId)
            : InboxQueries.setWebhookSecret(db, botId, c.cipher.encrypt("webhook_secret", secret))
        )
      }),

    webhookUrl: (botId) => attempt("webhookUrl", () => c.all(InboxQueries.webhookUrl(db, botId))[0]?.url ?? ""),

    setWebhookUrl: (botId, url) => attempt("setWebhookUrl", () => void c.run(InboxQueries.setWebhookUrl(db, botId, url))),

    pendingUpdates: (botId, limit) =>
      attempt("pendingUpdates", () => hot.pendingUpdates.all(botId, limit).map(InboxQueries.toInboxUpdate)),

    completeUpdates: (completions, fence) =>
      LeaseQueries.surfaceLeaseLost(c.groupCommit("completeUpdates", () => completeUpdates(completions, fence))),

    backlog: (botId) =>
      attempt("backlog", () => {
        const pending = lines.size(botId)
        return pending === undefined
          ? hot.backlog.all(botId, botId)[0]!.backlog
          : hot.unprocessedCount.all(botId)[0]!.count + pending
      }),

    pruneFinished: (before, limit) =>
      c.groupCommit("pruneFinished", () => ({
        updates: hot.pruneUpdates.run(before, limit),
        deliveries: ((delivered) => delivered + hot.pruneDeliveries.run("discarded", before, limit - delivered))(
          hot.pruneDeliveries.run("delivered", before, limit)
        ),
        sends: hot.pruneSends.run(before, limit)
      })),

    botsWithWork: attempt("botsWithWork", () => c.all(InboxQueries.botsWithWork(db)).map((r) => r.bot_id))
  }
}
