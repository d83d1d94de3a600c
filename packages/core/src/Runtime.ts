import { type HttpExchange, TelegramClient } from "@botrelay/telegram"
import { Effect, Layer, Option } from "effect"
import * as Accounts from "./services/Accounts.js"
import * as ApiKeys from "./services/ApiKeys.js"
import * as AuditLog from "./services/AuditLog.js"
import * as BackendPolicy from "./domain/BackendPolicy.js"
import * as Bots from "./services/Bots.js"
import * as Bridges from "./services/Bridges.js"
import * as ChatAdmin from "./services/ChatAdmin.js"
import * as Chats from "./services/Chats.js"
import * as Configuration from "./services/Configuration.js"
import * as Deliveries from "./services/Deliveries.js"
import * as EventLog from "./runtime/EventLog.js"
import * as Events from "./runtime/Events.js"
import * as FloodControl from "./runtime/FloodControl.js"
import type { InvalidInput } from "./domain/Errors.js"
import * as Health from "./services/Health.js"
import * as Idempotency from "./services/Idempotency.js"
import * as Housekeeping from "./runtime/Housekeeping.js"
import * as Identity from "./runtime/Identity.js"
import * as Inbox from "./runtime/Inbox.js"
import * as IngressPolls from "./runtime/IngressPolls.js"
import * as LlmRouter from "./runtime/LlmRouter.js"
import * as LlmSettings from "./runtime/LlmSettings.js"
import * as LoginThrottle from "./services/LoginThrottle.js"
import * as LongPoll from "./runtime/LongPoll.js"
import * as MediaFiles from "./services/MediaFiles.js"
import * as Ownership from "./runtime/Ownership.js"
import * as Messages from "./services/Messages.js"
import * as PasswordHasher from "./services/PasswordHasher.js"
import * as People from "./services/People.js"
import * as Relay from "./runtime/Relay.js"
import * as Routes from "./services/Routes.js"
import * as Search from "./services/Search.js"
import * as SentMessages from "./runtime/SentMessages.js"
import * as Statistics from "./services/Statistics.js"
import * as StatusReport from "./services/StatusReport.js"
import { Broadcast } from "./stores/Broadcast.js"
import type { Stores } from "./stores/Stores.js"
import * as Supervisor from "./runtime/Supervisor.js"
import * as Tags from "./services/Tags.js"
import * as Notes from "./services/Notes.js"
import * as CannedReplies from "./services/CannedReplies.js"
import * as Webhook from "./runtime/Webhook.js"
import * as Webhooks from "./services/Webhooks.js"

/** How an instance runs, whatever its storage and HTTP client. */
export interface Config {
  /**
   * This instance's id, carried by every HTTP answer as `X-Botrelay-Instance`: 1 to 64 characters of
   * `A-Z a-z 0-9 . _ -`; a new random one (`i-` and 8 hexadecimal characters) at each start when omitted.
   */
  readonly instanceId?: string | undefined
  /** The Botrelay version this instance reports (`GET /api/status`); `Identity.unknownVersion` when unset. */
  readonly version?: string | undefined
  /** The Bot API root; `https://api.telegram.org` by default. */
  readonly telegramApi?: string | undefined
  /**
   * Where Telegram reaches this instance's webhook ingress, path prefix included
   * (`https://example.com/botrelay`); without it, bots in webhook mode get no updates.
   */
  readonly publicUrl?: string | undefined
  /** How long bots' long-poll buffers keep unconfirmed updates. */
  readonly longPoll?: Partial<LongPoll.Options> | undefined
  /** LLM router settings that the API cannot change. */
  readonly llm?: LlmSettings.Overrides | undefined
  /** Polling, delivery, routing and housekeeping timings; `Supervisor.defaults` when omitted. */
  readonly runtime?: Supervisor.Options | undefined
  /**
   * Which addresses backend URLs may reach: by default URLs set through /tgapi `setWebhook` reach
   * public addresses only, URLs an admin set reach any (`mode: "strict"` holds them to public ones
   * too; `allowPrivate: true` lets every URL reach private ones).
   */
  readonly backendPolicy?: Partial<BackendPolicy.Policy> | undefined
  /** Live events: heartbeats, slow clients, retention of the event log; `EventLog.defaults` for what is omitted. */
  readonly events?: Partial<EventLog.Options> | undefined
  /** How long console sessions last; `Accounts.defaults` for what is omitted. */
  readonly accounts?: Partial<Accounts.Options> | undefined
  /** When failed logins are refused; `LoginThrottle.defaults` for what is omitted. */
  readonly loginThrottle?: Partial<LoginThrottle.Options> | undefined
  /** How long the audit log keeps entries and how often it looks; `AuditLog.defaults` for what is omitted. */
  readonly audit?: Partial<AuditLog.Options> | undefined
  /** Leases of instances sharing a database (PostgreSQL); `Ownership.defaults` for what is omitted. */
  readonly leases?: Partial<Ownership.Options> | undefined
}

/**
 * Who runs which bot: on a storage other instances may share (`Broadcast.shared`), leases decide and events
 * are relayed between the instances; otherwise this instance runs every bot.
 */
const cluster = (leases: Partial<Ownership.Options> = {}) =>
  Layer.unwrapEffect(Effect.map(Broadcast, (broadcast) =>
    broadcast.shared
      ? Layer.provideMerge(Relay.layer, Ownership.layer({ ...Ownership.defaults, ...leases }))
      : Ownership.everything))

/** The default Bot API root. */
export const telegramApi = "https://api.telegram.org"

/** Everything an instance runs: the services, the event bus, the ingress entry and the clients they use. */
export type Services =
  | Bots.Bots
  | Bridges.Bridges
  | Routes.Routes
  | Messages.Messages
  | ChatAdmin.ChatAdmin
  | MediaFiles.MediaFiles
  | Tags.Tags
  | Notes.Notes
  | CannedReplies.CannedReplies
  | Chats.Chats
  | Configuration.Configuration
  | People.People
  | Statistics.Statistics
  | Search.Search
  | ApiKeys.ApiKeys
  | Accounts.Accounts
  | LoginThrottle.LoginThrottle
  | AuditLog.AuditLog
  | Deliveries.Deliveries
  | Webhooks.Webhooks
  | SentMessages.SentMessages
  | Health.Health
  | Idempotency.Idempotency
  | StatusReport.StatusReport
  | Identity.Identity
  | LongPoll.LongPoll
  | LlmSettings.LlmSettings
  | LlmRouter.LlmRouter
  | Inbox.Inbox
  | IngressPolls.IngressPolls
  | Events.Events
  | EventLog.EventLog
  | FloodControl.FloodControl
  | BackendPolicy.BackendPolicy
  | Webhook.PublicUrl
  | Ownership.Ownership
  | TelegramClient.TelegramClient

/**
 * The whole instance, built once: services, event bus, and the runtime (ingress, pipeline, outbox,
 * routing, housekeeping), which starts when the layer is built and stops when it is released. The host
 * provides the stores and the HTTP client, and for accounts a `PasswordHasher` (without one, creating an
 * account or logging in is a defect that says so). Fails when `instanceId` is not a valid instance id.
 */
export const layer = (
  config: Config = {}
): Layer.Layer<Services, InvalidInput, Stores | HttpExchange.HttpExchange> => {
  const publicUrl = config.publicUrl ?? config.runtime?.publicUrl
  const options: Supervisor.Options = {
    ...(config.runtime ?? Supervisor.defaults),
    publicUrl,
    audit: { ...AuditLog.defaults, ...config.runtime?.audit, ...config.audit }
  }
  return Configuration.layer.pipe(Layer.provideMerge(Layer.mergeAll(
    Bots.layer,
    Bridges.layer,
    Routes.layer,
    Messages.layer,
    ChatAdmin.layer,
    MediaFiles.layer,
    Tags.layer,
    Notes.layer,
    CannedReplies.layer,
    Chats.layer,
    People.layer,
    Statistics.layer,
    Search.layer,
    ApiKeys.layer,
    Accounts.housekeeping(options.housekeeping?.interval ?? Housekeeping.defaults.interval).pipe(
      Layer.provideMerge(Accounts.layer(config.accounts)),
      Layer.provide(PasswordHasher.fromContextOrUnavailable)
    ),
    LoginThrottle.layer(config.loginThrottle),
    AuditLog.layer,
    Deliveries.layer,
    Webhooks.layer,
    Health.layer,
    Idempotency.layer,
    StatusReport.layer
  )),
    Layer.provideMerge(Supervisor.layer(options)),
    Layer.provideMerge(cluster(config.leases)),
    Layer.provideMerge(EventLog.layer({ ...EventLog.defaults, ...config.events }).pipe(Layer.provide(Chats.views))),
    Layer.provideMerge(Inbox.layer),
    Layer.provideMerge(IngressPolls.layer),
    Layer.provideMerge(SentMessages.layer),
    Layer.provideMerge(LlmRouter.layer),
    Layer.provideMerge(LlmSettings.layer(config.llm ?? {})),
    Layer.provideMerge(LongPoll.layer({ ...LongPoll.defaults, ...config.longPoll })),
    Layer.provideMerge(TelegramClient.layerHttpExchange({ apiRoot: config.telegramApi ?? telegramApi })),
    Layer.provideMerge(Events.layer),
    Layer.provideMerge(FloodControl.layer()),
    Layer.provideMerge(Layer.succeed(Webhook.PublicUrl, Option.fromNullable(publicUrl))),
    Layer.provideMerge(Layer.succeed(BackendPolicy.BackendPolicy, {
      mode: config.backendPolicy?.mode ?? "default",
      allowPrivate: config.backendPolicy?.allowPrivate ?? false
    })),
    Layer.provide(Identity.identifiedCalls),
    Layer.provideMerge(Identity.layer(config.instanceId, config.version))
  )
}
