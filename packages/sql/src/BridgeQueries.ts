import { Bridge, LiveEvent } from "@botrelay/core"
import { Redacted, Schema } from "effect"
import type { Insertable, Kysely, Selectable, Updateable } from "kysely"
import { sql } from "kysely"
import { bit } from "./Columns.js"
import { pending } from "./OutboxQueries.js"
import type { BridgeDeliveriesTable, BridgesTable, Database } from "./Tables.js"

/** How a driver protects a bridge's signing secret at rest. */
export interface BridgeSecrets {
  readonly encrypt: (purpose: "signing_secret", plaintext: string) => string
  readonly decrypt: (purpose: "signing_secret", stored: string) => string
}

const decodeEvents = Schema.decodeUnknownSync(Schema.parseJson(Schema.Array(Schema.String)))
const isEventName = Schema.is(LiveEvent.EventName)
const decodeBotIds = Schema.decodeUnknownSync(Schema.parseJson(Schema.Array(Schema.Int)))

/** The bridge a row holds; event names the log no longer has are left out. */
export const toBridge = (secrets: BridgeSecrets) => (r: Selectable<BridgesTable>): Bridge.StoredBridge => ({
  id: r.id,
  name: r.name,
  url: r.url,
  format: r.format,
  events: decodeEvents(r.events).filter(isEventName),
  bot_ids: decodeBotIds(r.bot_ids),
  enabled: r.enabled === 1,
  signing_secret: Redacted.make(secrets.decrypt("signing_secret", r.signing_secret)),
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at
})

/** The row of a new bridge. */
export const newBridgeRow = (secrets: BridgeSecrets, input: Bridge.BridgeRecordInput): Insertable<BridgesTable> => ({
  name: input.name,
  url: input.url,
  format: input.format,
  events: JSON.stringify(input.events),
  bot_ids: JSON.stringify(input.bot_ids),
  enabled: bit(input.enabled),
  signing_secret: secrets.encrypt("signing_secret", Redacted.value(input.signing_secret)),
  last_error: "",
  created_at: input.created_at,
  updated_at: input.created_at
})

/** The columns a patch changes. */
export const bridgeChanges = (secrets: BridgeSecrets, patch: Bridge.BridgePatch): Updateable<BridgesTable> => ({
  ...(patch.name === undefined ? {} : { name: patch.name }),
  ...(patch.url === undefined ? {} : { url: patch.url }),
  ...(patch.format === undefined ? {} : { format: patch.format }),
  ...(patch.events === undefined ? {} : { events: JSON.stringify(patch.events) }),
  ...(patch.bot_ids === undefined ? {} : { bot_ids: JSON.stringify(patch.bot_ids) }),
  ...(patch.enabled === undefined ? {} : { enabled: bit(patch.enabled) }),
  ...(patch.signing_secret === undefined
    ? {}
    : { signing_secret: secrets.encrypt("signing_secret", Redacted.value(patch.signing_secret)) }),
  ...(patch.last_error === undefined ? {} : { last_error: patch.last_error }),
  ...(patch.updated_at === undefined ? {} : { updated_at: patch.updated_at })
})

/** The delivery a row of `botrelay_bridge_deliveries` holds. */
export const toBridgeDelivery = (r: Selectable<BridgeDeliveriesTable>): Bridge.BridgeDelivery => ({
  id: r.id,
  bridge_id: r.bridge_id,
  bot_id: r.bot_id,
  event_id: r.event_id,
  type: r.type,
  data: r.data,
  status: r.status,
  attempts: r.attempts,
  next_attempt_at: r.next_attempt_at,
  last_error: r.last_error,
  created_at: r.created_at,
  updated_at: r.updated_at
})

/** The bots of entries that a bridge may take: those of a bot (not the log's markers). */
export const botsOf = (entries: ReadonlyArray<LiveEvent.LogEntry>): ReadonlyArray<number> => [
  ...new Set(entries.map((entry) => entry.bot_id).filter((id) => id > 0))
]

/** Which of these bots exist. */
export const existingBots = (db: Kysely<Database>, ids: ReadonlyArray<number>) =>
  db.selectFrom("botrelay_bots").select("id").where("id", "in", ids)

/**
 * The bridge deliveries of appended log entries: one per entry of a bot in `bots` (those that exist: a
 * deleted bot's last entries go nowhere) per enabled bridge that takes it, due at once, in entry order
 * (so FIFO per bot).
 */
export const deliveriesOf = (
  bridges: ReadonlyArray<Selectable<BridgesTable>>,
  entries: ReadonlyArray<LiveEvent.LogEntry>,
  bots: ReadonlySet<number>
): ReadonlyArray<Insertable<BridgeDeliveriesTable>> => {
  const taking = bridges.map((r) => ({
    id: r.id,
    enabled: r.enabled === 1,
    events: decodeEvents(r.events),
    bot_ids: decodeBotIds(r.bot_ids)
  }))
  return entries.filter((entry) => bots.has(entry.bot_id)).flatMap((entry) =>
    taking.filter((bridge) => Bridge.takes(bridge, entry.type, entry.bot_id)).map((bridge) => ({
      bridge_id: bridge.id,
      bot_id: entry.bot_id,
      event_id: entry.id,
      type: entry.type,
      data: entry.data,
      status: "pending" as const,
      attempts: 0,
      next_attempt_at: entry.created_at,
      last_error: "",
      created_at: entry.created_at,
      updated_at: entry.created_at
    }))
  )
}

export const listBridges = (db: Kysely<Database>) => db.selectFrom("botrelay_bridges").selectAll().orderBy("id")

/** The bridges that take events now. */
export const enabledBridges = (db: Kysely<Database>) =>
  db.selectFrom("botrelay_bridges").selectAll().where("enabled", "=", sql.lit(1)).orderBy("id")

export const findBridge = (db: Kysely<Database>, id: number) =>
  db.selectFrom("botrelay_bridges").selectAll().where("id", "=", id)

export const insertBridge = (db: Kysely<Database>, row: Insertable<BridgesTable>) =>
  db.insertInto("botrelay_bridges").values(row).returningAll()

export const updateBridge = (db: Kysely<Database>, id: number, set: Updateable<BridgesTable>) =>
  db.updateTable("botrelay_bridges").set(set).where("id", "=", id).returningAll()

/** The deletes that remove a bridge with its deliveries, its own row last (returned). */
export const deleteBridge = (db: Kysely<Database>, id: number) => [
  db.deleteFrom("botrelay_bridge_deliveries").where("bridge_id", "=", id),
  db.deleteFrom("botrelay_bridges").where("id", "=", id).returningAll()
] as const

export const insertDeliveries = (db: Kysely<Database>, rows: ReadonlyArray<Insertable<BridgeDeliveriesTable>>) =>
  db.insertInto("botrelay_bridge_deliveries").values([...rows])

export const nextDeliveries = (db: Kysely<Database>, botId: number, limit: number) =>
  db.selectFrom("botrelay_bridge_deliveries")
    .selectAll()
    .where("bot_id", "=", botId)
    .where("status", "=", pending)
    .orderBy("id")
    .limit(limit)

export const delivered = (db: Kysely<Database>, at: string, id: number) =>
  db.updateTable("botrelay_bridge_deliveries")
    .set((eb) => ({ status: sql.lit<"delivered">("delivered"), attempts: eb("attempts", "+", eb.lit(1)), updated_at: at }))
    .where("id", "=", id)

/** A failure of one of the bridge's deliveries: its latest error. */
export const failed = (db: Kysely<Database>, lastError: string, bridgeId: number) =>
  db.updateTable("botrelay_bridges").set({ last_error: lastError }).where("id", "=", bridgeId)

/** Bridge deliveries newest first, optionally of one bridge and one status. */
export const listDeliveries = (
  db: Kysely<Database>,
  filter: { readonly bridge_id?: number; readonly status?: Bridge.BridgeDelivery["status"]; readonly limit: number }
) => {
  let query = db.selectFrom("botrelay_bridge_deliveries").selectAll().orderBy("id", "desc").limit(filter.limit)
  if (filter.bridge_id !== undefined) query = query.where("bridge_id", "=", filter.bridge_id)
  if (filter.status !== undefined) query = query.where("status", "=", filter.status)
  return query
}

/** The oldest delivered bridge deliveries last updated before a time. */
export const pruneDeliveries = (db: Kysely<Database>, before: string, limit: number) =>
  db.deleteFrom("botrelay_bridge_deliveries").where("id", "in", (eb) =>
    eb.selectFrom("botrelay_bridge_deliveries")
      .select("id")
      .where("status", "=", sql.lit("delivered"))
      .where("updated_at", "<", before)
      .orderBy("id")
      .limit(limit))
