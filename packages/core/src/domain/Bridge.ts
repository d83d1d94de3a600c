import { Redacted, Schema, Struct } from "effect"
import { isHttpUrl } from "../internal/Url.js"
import { SigningSecret, withoutControlCharacters } from "./Bot.js"
import type { DeliveryOutcome, DeliveryStatus } from "./Delivery.js"
import { EventName } from "./LiveEvent.js"

/** How a bridge posts an event: its JSON, signed like forwarding, or a Slack incoming-webhook message. */
export const BridgeFormat = Schema.Literal("json", "slack")
export type BridgeFormat = typeof BridgeFormat.Type

/** Where a bridge posts: an absolute http(s) URL. */
export const BridgeUrl = Schema.String.pipe(
  Schema.maxLength(2048, { message: () => "url must be at most 2048 characters" }),
  Schema.filter((s) => isHttpUrl(s), { message: () => "url must be an absolute http or https URL" })
)

const BridgeName = Schema.String.pipe(
  Schema.maxLength(256, { message: () => "name must be at most 256 characters" }),
  withoutControlCharacters("name")
)

const EventNames = Schema.Array(
  Schema.String.pipe(Schema.filter((s) => Schema.is(EventName)(s), {
    message: (issue) =>
      `events: unknown event name ${JSON.stringify(issue.actual)} (one of ${EventName.literals.join(", ")})`
  }))
).pipe(Schema.minItems(1, { message: () => "events must name at least one event" }))

const BotIds = Schema.Array(Schema.Int.pipe(Schema.positive({ message: () => "bot_ids must be positive bot ids" })))

/** An outbound event webhook as storage keeps it, with its signing secret. An empty `bot_ids` means every bot. */
export const StoredBridge = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  url: Schema.String,
  format: BridgeFormat,
  events: Schema.Array(EventName),
  bot_ids: Schema.Array(Schema.Int),
  enabled: Schema.Boolean,
  signing_secret: Schema.Redacted(Schema.String),
  last_error: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "StoredBridge" })
export type StoredBridge = typeof StoredBridge.Type

/** A bridge as the API shows it: whether a signing secret is set, never the secret. */
export const Bridge = Schema.Struct({
  ...Struct.omit(StoredBridge.fields, "signing_secret"),
  signing_secret_set: Schema.Boolean
}).annotations({ identifier: "Bridge" })
export type Bridge = typeof Bridge.Type

/** What the API shows of a bridge. */
export const view = ({ signing_secret, ...bridge }: StoredBridge): Bridge => ({
  ...bridge,
  signing_secret_set: Redacted.value(signing_secret) !== ""
})

/** Body of `POST /api/bridges/add`. */
export const NewBridge = Schema.Struct({
  name: Schema.optionalWith(BridgeName, { default: () => "" }),
  url: BridgeUrl,
  format: Schema.optionalWith(BridgeFormat, { default: () => "json" as const }),
  events: EventNames,
  bot_ids: Schema.optionalWith(BotIds, { default: () => [] }),
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  signing_secret: Schema.optionalWith(SigningSecret, { default: () => Redacted.make("") })
}).annotations({ identifier: "NewBridge" })
export type NewBridge = typeof NewBridge.Type

/** Body of `POST /api/bridges/update`: the bridge's id and the fields to change; omitted fields keep their value. */
export const BridgeUpdate = Schema.Struct({
  id: Schema.Int.pipe(Schema.positive()),
  name: Schema.optionalWith(BridgeName, { exact: true }),
  url: Schema.optionalWith(BridgeUrl, { exact: true }),
  format: Schema.optionalWith(BridgeFormat, { exact: true }),
  events: Schema.optionalWith(EventNames, { exact: true }),
  bot_ids: Schema.optionalWith(BotIds, { exact: true }),
  enabled: Schema.optionalWith(Schema.Boolean, { exact: true }),
  signing_secret: Schema.optionalWith(SigningSecret, { exact: true })
}).annotations({ identifier: "BridgeUpdate" })
export type BridgeUpdate = typeof BridgeUpdate.Type

/** What storage needs to create a bridge. */
export type BridgeRecordInput = Omit<StoredBridge, "id" | "last_error" | "updated_at">

/** A change to a stored bridge. */
export type BridgePatch = Partial<Omit<StoredBridge, "id" | "created_at">>

/** Whether the bridge takes this event of this bot: enabled, subscribed to its name, and for every bot or this one. */
export const takes = (
  bridge: {
    readonly enabled: boolean
    readonly events: ReadonlyArray<string>
    readonly bot_ids: ReadonlyArray<number>
  },
  type: string,
  botId: number
): boolean =>
  bridge.enabled && botId > 0 && bridge.events.includes(type) &&
  (bridge.bot_ids.length === 0 || bridge.bot_ids.includes(botId))

/** One event on its way to a bridge: the bridges' outbox entry, FIFO per bot. `data` is the event's JSON. */
export interface BridgeDelivery {
  readonly id: number
  readonly bridge_id: number
  readonly bot_id: number
  readonly event_id: number
  readonly type: string
  readonly data: string
  readonly status: Exclude<DeliveryStatus, "discarded">
  readonly attempts: number
  readonly next_attempt_at: string
  readonly last_error: string
  readonly created_at: string
  readonly updated_at: string
}

/** The result of one attempt at a bridge delivery. */
export type BridgeOutcome = DeliveryOutcome

/** No bridge has this id. */
export class BridgeNotFound extends Schema.TaggedError<BridgeNotFound>()("BridgeNotFound", { id: Schema.Int }) {
  override get message() {
    return `bridge ${this.id} not found`
  }
}
