import type { Delivery } from "@botrelay/core"

/** The longest line kept in memory; a longer one is forgotten and read from the database again. */
const maxLine = 2_000

/**
 * Each bot's pending deliveries, in id order, kept in memory while they are known to be exactly the
 * database's pending rows of that bot, so that the outbox reads back none of the rows the pipeline just
 * queued. A line is known once a read of the database returns fewer rows than it asked for (the whole
 * line); it then follows every committed change the stores make to it, and is forgotten whenever a change
 * is not followed exactly (a retry, an operator's action, a line too long). One server holds a SQLite
 * file, and its stores are the only writers of its deliveries.
 */
export interface DeliveryLines {
  /** The bot's oldest pending deliveries, at most `limit`: from memory when the line is known, else `read`. */
  readonly next: (botId: number, limit: number, read: () => Array<Delivery.Delivery>) => ReadonlyArray<Delivery.Delivery>
  /** New pending deliveries, in id order, once their transaction committed. */
  readonly queued: (deliveries: ReadonlyArray<Delivery.Delivery>) => void
  /** Deliveries that left their line (delivered or dead), once their transaction committed. */
  readonly settled: (ids: ReadonlyArray<number>) => void
  /** Deliveries that stay in line for a later try: their lines are forgotten. */
  readonly retried: (ids: ReadonlyArray<number>) => void
  /** The bot's line changed in a way not followed here: the next read goes to the database. */
  readonly forget: (botId: number) => void
  /** How many deliveries of the bot are pending, when its line is known. */
  readonly size: (botId: number) => number | undefined
}

/** The delivery a new row of `botrelay_deliveries` holds, as `OutboxQueries.queueDelivery` inserts it. */
export const pending = (id: number, d: Delivery.NewDelivery): Delivery.Delivery => ({
  id,
  bot_id: d.bot_id,
  update_id: d.update_id,
  url: d.url,
  payload: d.payload,
  status: "pending",
  attempts: 0,
  next_attempt_at: d.created_at,
  last_error: "",
  created_at: d.created_at,
  updated_at: d.created_at
})

/** Empty lines: nothing is known until it is read. */
export const make = (): DeliveryLines => {
  const lines = new Map<number, Array<Delivery.Delivery>>()
  const lineOf = new Map<number, number>()

  const forget = (botId: number) => {
    const line = lines.get(botId)
    if (line === undefined) return
    lines.delete(botId)
    for (const delivery of line) lineOf.delete(delivery.id)
  }

  return {
    next: (botId, limit, read) => {
      const line = lines.get(botId)
      if (line !== undefined) return line.slice(0, limit)
      const rows = read()
      if (rows.length < limit) {
        lines.set(botId, rows.slice())
        for (const delivery of rows) lineOf.set(delivery.id, botId)
      }
      return rows
    },
    queued: (deliveries) => {
      for (const delivery of deliveries) {
        const line = lines.get(delivery.bot_id)
        if (line === undefined) continue
        if (line.length >= maxLine) {
          forget(delivery.bot_id)
          continue
        }
        line.push(delivery)
        lineOf.set(delivery.id, delivery.bot_id)
      }
    },
    settled: (ids) => {
      for (const id of ids) {
        const botId = lineOf.get(id)
        if (botId === undefined) continue
        const line = lines.get(botId)!
        if (line[0]!.id === id) {
          line.shift()
          lineOf.delete(id)
        } else {
          forget(botId)
        }
      }
    },
    retried: (ids) => {
      for (const id of ids) {
        const botId = lineOf.get(id)
        if (botId !== undefined) forget(botId)
      }
    },
    forget,
    size: (botId) => lines.get(botId)?.length
  }
}
