import type { BacklogStore } from "@botrelay/core"
import type { Kysely } from "kysely"
import { sql } from "kysely"
import type { Database } from "./Tables.js"

/** The outbox tables by metric kind: each has `bot_id`, `status` (`pending`, `dead`, ...) and `created_at`. */
export const outboxTables = [
  { kind: "backend", table: "botrelay_deliveries" },
  { kind: "route", table: "botrelay_route_sends" },
  { kind: "bridge", table: "botrelay_bridge_deliveries" }
] as const satisfies ReadonlyArray<{ readonly kind: BacklogStore.OutboxBacklog["kind"]; readonly table: keyof Database }>

/**
 * One row of the backlog query: `part` says what it counts (an outbox kind, `bot`, `route_line`, `inbox`, `buffer`,
 * `delivered`, `ingress`, `lease`).
 */
export interface BacklogRow {
  readonly part: string
  readonly bot_id: number | string
  readonly label: string
  readonly n: number | string
  readonly oldest: string | null
  readonly top: number | string | null
}

/**
 * Everything waiting, in one query: every bot (and whether it is disabled), each route's pending sends and
 * highest update sent, per bot and outbox kind the pending and dead jobs (and the oldest pending),
 * per bot the unprocessed inbox, the long-poll buffer, the highest update delivered to the backend and the
 * ingress offset, and the leases held at `now` per instance.
 */
export const backlog = (db: Kysely<Database>, now: string) => {
  const [first, ...rest] = outboxTables.flatMap(({ kind, table }) =>
    (["pending", "dead"] as const).map((status) =>
      db.selectFrom(table as "botrelay_deliveries")
        .select([
          sql.lit(kind).as("part"),
          "bot_id",
          sql.lit(status).as("label"),
          sql<number>`count(*)`.as("n"),
          sql<string | null>`min(created_at)`.as("oldest"),
          sql<number | null>`0`.as("top")
        ])
        .where("status", "=", sql.lit(status))
        .groupBy("bot_id")
    )
  )
  const parts = [
    ...rest,
    db.selectFrom("botrelay_bots")
      .select([
        sql.lit("bot").as("part"),
        sql<number>`id`.as("bot_id"),
        sql<string>`''`.as("label"),
        sql<number>`disabled`.as("n"),
        sql<string | null>`null`.as("oldest"),
        sql<number | null>`0`.as("top")
      ]),
    db.selectFrom("botrelay_route_sends")
      .select([
        sql.lit("route_line").as("part"),
        sql<number>`source_bot_id`.as("bot_id"),
        sql<string>`cast(route_id as text)`.as("label"),
        sql<number>`count(case when status = 'pending' then 1 end)`.as("n"),
        sql<string | null>`null`.as("oldest"),
        sql<number | null>`max(case when status = 'sent' then update_id end)`.as("top")
      ])
      .groupBy(["source_bot_id", "route_id"]),
    db.selectFrom("botrelay_inbox")
      .select([
        sql.lit("inbox").as("part"),
        "bot_id",
        sql<string>`''`.as("label"),
        sql<number>`count(*)`.as("n"),
        sql<string | null>`min(received_at)`.as("oldest"),
        sql<number | null>`0`.as("top")
      ])
      .where("processed", "=", sql.lit(0))
      .groupBy("bot_id"),
    db.selectFrom("botrelay_long_poll_buffer")
      .select([
        sql.lit("buffer").as("part"),
        "bot_id",
        sql<string>`''`.as("label"),
        sql<number>`count(*)`.as("n"),
        sql<string | null>`min(created_at)`.as("oldest"),
        sql<number | null>`min(update_id)`.as("top")
      ])
      .groupBy("bot_id"),
    db.selectFrom("botrelay_deliveries")
      .select([
        sql.lit("delivered").as("part"),
        "bot_id",
        sql<string>`''`.as("label"),
        sql<number>`0`.as("n"),
        sql<string | null>`null`.as("oldest"),
        sql<number | null>`max(update_id)`.as("top")
      ])
      .where("status", "=", "delivered")
      .groupBy("bot_id"),
    db.selectFrom("botrelay_ingress")
      .select([
        sql.lit("ingress").as("part"),
        "bot_id",
        sql<string>`''`.as("label"),
        sql<number>`0`.as("n"),
        sql<string | null>`null`.as("oldest"),
        sql<number | null>`"offset"`.as("top")
      ]),
    db.selectFrom("botrelay_leases")
      .select([
        sql.lit("lease").as("part"),
        sql<number>`0`.as("bot_id"),
        sql<string>`instance_id`.as("label"),
        sql<number>`count(*)`.as("n"),
        sql<string | null>`null`.as("oldest"),
        sql<number | null>`0`.as("top")
      ])
      .where("expires_at", ">", now)
      .groupBy("instance_id")
  ]
  return parts.reduce((query, part) => query.unionAll(part as never), first!)
}

/** The backlog from the query's rows, whichever driver read them (counts may come back as strings). */
export const toBacklog = (rows: ReadonlyArray<BacklogRow>): BacklogStore.Backlog => {
  const outbox = new Map<string, { -readonly [K in keyof BacklogStore.OutboxBacklog]: BacklogStore.OutboxBacklog[K] }>()
  const bots = new Map<number, { -readonly [K in keyof BacklogStore.BotBacklog]: BacklogStore.BotBacklog[K] }>()
  const leases: Array<{ readonly instance_id: string; readonly count: number }> = []
  const routes: Array<BacklogStore.RouteBacklog> = []
  const bot = (id: number) => {
    let found = bots.get(id)
    if (found === undefined) {
      found = {
        bot_id: id,
        inbox: 0,
        oldest_inbox_at: "",
        buffered: 0,
        lowest_buffered: 0,
        delivered_update_id: 0,
        ingress_offset: 0,
        disabled: false
      }
      bots.set(id, found)
    }
    return found
  }
  const outboxOf = (botId: number, kind: BacklogStore.OutboxBacklog["kind"]) => {
    const key = `${botId} ${kind}`
    let found = outbox.get(key)
    if (found === undefined) {
      found = { bot_id: botId, kind, depth: 0, oldest_pending_at: "", dead: 0 }
      outbox.set(key, found)
    }
    return found
  }
  for (const row of rows) {
    const botId = Number(row.bot_id)
    const n = Number(row.n)
    const kind = outboxTables.find((t) => t.kind === row.part)?.kind
    if (kind !== undefined) {
      const entry = outboxOf(botId, kind)
      if (row.label === "dead") entry.dead = n
      else {
        entry.depth = n
        entry.oldest_pending_at = row.oldest ?? ""
      }
    } else if (row.part === "bot") {
      bot(botId).disabled = n !== 0
      for (const table of outboxTables) outboxOf(botId, table.kind)
    } else if (row.part === "route_line") {
      routes.push({ source_bot_id: botId, route_id: Number(row.label), pending: n, sent_update_id: Number(row.top ?? 0) })
    } else if (row.part === "inbox") {
      Object.assign(bot(botId), { inbox: n, oldest_inbox_at: row.oldest ?? "" })
    } else if (row.part === "buffer") {
      Object.assign(bot(botId), { buffered: n, lowest_buffered: Number(row.top ?? 0) })
    } else if (row.part === "delivered") {
      bot(botId).delivered_update_id = Number(row.top ?? 0)
    } else if (row.part === "ingress") {
      bot(botId).ingress_offset = Number(row.top ?? 0)
    } else if (row.part === "lease") {
      leases.push({ instance_id: row.label, count: n })
    }
  }
  const byBot = <T extends { readonly bot_id: number }>(a: T, b: T) => a.bot_id - b.bot_id
  return {
    outbox: [...outbox.values()].sort((a, b) => byBot(a, b) || a.kind.localeCompare(b.kind)),
    bots: [...bots.values()].sort(byBot),
    routes: routes.sort((a, b) => a.route_id - b.route_id),
    leases: leases.sort((a, b) => a.instance_id.localeCompare(b.instance_id))
  }
}
