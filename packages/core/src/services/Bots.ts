import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as BackendPolicy from "../domain/BackendPolicy.js"
import type { BotSettings, BotUpdate, NewBot, StoredBot } from "../domain/Bot.js"
import { type Bot, BotNotFound, type DuplicateToken } from "../domain/Bot.js"
import { InvalidInput, type StorageError } from "../domain/Errors.js"
import { Event, Events } from "../runtime/Events.js"
import { BotStore } from "../stores/BotStore.js"
import { OutboxStore } from "../stores/OutboxStore.js"
import { SettingsStore } from "../stores/SettingsStore.js"
import * as ConfigRevision from "../runtime/ConfigRevision.js"
import { nowIso } from "../internal/Time.js"
import { PublicUrl } from "../runtime/Webhook.js"

/** Managing registered bots. */
export interface BotsService {
  /** Registers a bot from the API (source "web"). */
  readonly add: (input: NewBot) => Effect.Effect<Bot, InvalidInput | DuplicateToken | StorageError>
  /** Registers the bot of the command line (source "cli", history kept), or returns it when its token is known. */
  readonly ensureCli: (token: Redacted.Redacted<string>) => Effect.Effect<Bot, StorageError>
  /** All bots, ordered by id. */
  readonly list: Effect.Effect<ReadonlyArray<Bot>, StorageError>
  readonly get: (id: number) => Effect.Effect<Bot, BotNotFound | StorageError>
  /** The bot registered with this token, as stored (token included): for serving the bot's own Bot API calls. */
  readonly byToken: (token: string) => Effect.Effect<Option.Option<StoredBot>, StorageError>
  /**
   * Changes the given fields; the others keep their value. A changed `backend_url` records who set it
   * (`origin`, "api" by default) and takes the bot's pending deliveries with it, due at once.
   */
  readonly update: (
    input: BotUpdate,
    origin?: BackendPolicy.BackendUrlOrigin
  ) => Effect.Effect<Bot, BotNotFound | InvalidInput | DuplicateToken | StorageError>
  readonly toggleDisabled: (id: number) => Effect.Effect<Bot, BotNotFound | StorageError>
  /** Removes the bot, its routes and its message history. */
  readonly remove: (id: number) => Effect.Effect<Bot, BotNotFound | StorageError>
}

/** Managing registered bots. */
export class Bots extends Context.Tag("@botrelay/core/Bots")<Bots, BotsService>() {}

const checkSettings = (settings: Pick<BotSettings, "proxy_enabled" | "backend_url">): Effect.Effect<void, InvalidInput> =>
  settings.proxy_enabled && settings.backend_url === ""
    ? Effect.fail(InvalidInput.field("backend_url", "backend_url is required when proxy_enabled is true"))
    : Effect.void

/** Refuses a backend URL that must reach public addresses only and names a non-public IP address or localhost. */
const checkBackendUrl = (
  policy: BackendPolicy.Policy,
  url: string | undefined,
  origin: BackendPolicy.BackendUrlOrigin
): Effect.Effect<void, InvalidInput> => {
  if (url === undefined || url === "" || !BackendPolicy.publicOnly(policy, origin)) return Effect.void
  const refusal = BackendPolicy.literalRefusal(url)
  return refusal === undefined
    ? Effect.void
    : Effect.fail(InvalidInput.field("backend_url", `backend_url is not allowed by the backend URL policy: ${refusal}`))
}

/**
 * Builds the service on the stores the host provides; the runtime hears of every change.
 * Webhook mode is refused unless the host provides a `PublicUrl`; backend URLs follow the
 * `BackendPolicy` (literal addresses here, resolved ones when deliveries connect).
 */
export const make: Effect.Effect<BotsService, never, BotStore | OutboxStore | SettingsStore | Events> = Effect.gen(function*() {
  const botStore = yield* BotStore
  const outbox = yield* OutboxStore
  const bumped = ConfigRevision.bumped(yield* SettingsStore)
  const events = yield* Events
  const publicUrl = yield* PublicUrl
  const policy = yield* BackendPolicy.BackendPolicy
  const toBot = (bot: StoredBot): Bot => ({ ...bot, running: events.isRunning(bot.id) })
  const announce = (bot: Bot) => events.publish(Event.BotChanged({ id: bot.id }))

  const find = (id: number) =>
    botStore.findBot(id).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BotNotFound({ id })), onSome: Effect.succeed }))
    )

  const change = (id: number, patch: Parameters<typeof botStore.updateBot>[1]) =>
    Effect.flatMap(nowIso, (updated_at) => botStore.updateBot(id, { ...patch, updated_at })).pipe(
      Effect.flatMap(Option.match({ onNone: () => Effect.fail(new BotNotFound({ id })), onSome: Effect.succeed })),
      Effect.map(toBot)
    )

  return Bots.of({
    add: (input) =>
      checkSettings(input).pipe(
        Effect.zipRight(checkBackendUrl(policy, input.backend_url, "api")),
        Effect.zipRight(nowIso),
        Effect.flatMap((created_at) =>
          botStore.insertBot({ ...input, source: "web", backend_url_origin: "api", created_at })
        ),
        Effect.map(toBot),
        Effect.tap(announce),
        bumped,
        Effect.withSpan("Bots.add")
      ),
    ensureCli: (token) =>
      botStore.findBotByToken(Redacted.value(token)).pipe(
        Effect.flatMap(Option.match({
          onSome: Effect.succeed,
          onNone: () =>
            Effect.flatMap(nowIso, (created_at) =>
              botStore.insertBot({
                token,
                name: "",
                source: "cli",
                manage_enabled: true,
                proxy_enabled: false,
                long_poll_enabled: false,
                backend_url: "",
                secret_token: Redacted.make(""),
                description: "",
                created_at
              })).pipe(
                bumped,
                Effect.catchTag("DuplicateToken", (e) => find(e.existing_bot_id).pipe(Effect.orDie))
              )
        })),
        Effect.map(toBot),
        Effect.tap(announce),
        Effect.withSpan("Bots.ensureCli")
      ),
    list: botStore.listBots.pipe(Effect.map((bots) => bots.map(toBot))),
    get: (id) => find(id).pipe(Effect.map(toBot)),
    byToken: botStore.findBotByToken,
    update: ({ id, ...patch }, origin = "api") =>
      Effect.gen(function*() {
        const before = yield* find(id)
        yield* checkSettings({ ...before, ...patch })
        const urlOrigin = patch.backend_url === undefined
          ? before.backend_url_origin
          : BackendPolicy.originAfter(before, patch.backend_url, origin)
        yield* checkBackendUrl(policy, patch.backend_url, urlOrigin)
        if (patch.webhook_mode === true && Option.isNone(publicUrl)) {
          return yield* InvalidInput.field("webhook_mode", "webhook mode needs BOTRELAY_PUBLIC_URL")
        }
        const bot = yield* change(id, { ...patch, backend_url_origin: urlOrigin })
        if (bot.backend_url !== before.backend_url && bot.backend_url !== "") {
          const moved = yield* outbox.retargetDeliveries(id, bot.backend_url, bot.updated_at)
          if (moved > 0) {
            yield* Effect.logInfo("pending deliveries follow the new backend URL").pipe(
              Effect.annotateLogs({ bot_id: id, deliveries: moved })
            )
          }
        }
        yield* announce(bot)
        return bot
      }).pipe(bumped, Effect.withSpan("Bots.update", { attributes: { id } })),
    toggleDisabled: (id) =>
      find(id).pipe(
        Effect.flatMap((bot) => change(id, { disabled: !bot.disabled })),
        Effect.catchTag("DuplicateToken", Effect.die),
        Effect.tap(announce),
        bumped,
        Effect.withSpan("Bots.toggleDisabled", { attributes: { id } })
      ),
    remove: (id) =>
      find(id).pipe(
        Effect.tap(() => botStore.deleteBot(id)),
        Effect.map(toBot),
        Effect.tap(announce),
        bumped,
        Effect.withSpan("Bots.remove", { attributes: { id } })
      )
  })
})

/** The service on the stores the host provides and the `Events` bus. */
export const layer: Layer.Layer<Bots, never, BotStore | OutboxStore | SettingsStore | Events> = Layer.effect(Bots, make)
